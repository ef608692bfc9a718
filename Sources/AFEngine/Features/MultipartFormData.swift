/// A `multipart/form-data` body, encoded lazily and streamed part by part.
///
/// Field values live in memory; file parts are read from disk while sending, so memory does
/// not grow with file size. The exact `Content-Length` is known before the first byte is sent.
public struct MultipartFormData: Sendable {
    /// One part of the form.
    public struct Part: Sendable {
        /// Where a part's content comes from.
        public enum Content: Sendable {
            case bytes([UInt8])
            case file(path: String)
        }

        /// The form field name.
        public var name: String
        /// The file name sent in `Content-Disposition`, for file parts.
        public var filename: String?
        /// The part's `Content-Type`; nil sends none.
        public var contentType: String?
        /// The bytes of the part.
        public var content: Content

        /// Creates a part.
        public init(name: String, filename: String? = nil, contentType: String? = nil, content: Content) {
            self.name = name
            self.filename = filename
            self.contentType = contentType
            self.content = content
        }
    }

    /// The boundary between parts.
    public let boundary: String
    /// The parts, in the order they are sent.
    public private(set) var parts: [Part] = []

    /// Creates an empty form with `boundary`, or a random one.
    public init(boundary: String? = nil) {
        self.boundary = boundary ?? Self.randomBoundary()
    }

    /// A boundary that will not occur in ordinary content.
    public static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next() as UInt64
        let low = generator.next() as UInt64
        return "af-boundary-" + String(high, radix: 16) + String(low, radix: 16)
    }

    /// The `Content-Type` header value for this form.
    public var contentType: String { "multipart/form-data; boundary=\(boundaryParameter)" }

    /// The boundary as a `Content-Type` parameter's value: as it is when it is a token, else
    /// in quotes, as RFC 2046 writes `boundary="simple boundary"`. A boundary may hold a
    /// space and `(),/:=?`, which unquoted end the parameter (`boundary=a b` is `a` to the
    /// server's parser) or break it.
    public var boundaryParameter: String {
        if HTTPToken.isToken(boundary) { return boundary }
        var quoted = "\""
        for character in boundary {
            if character == "\"" || character == "\\" { quoted.append("\\") }
            quoted.append(character)
        }
        return quoted + "\""
    }

    /// Appends a text field.
    public mutating func append(name: String, value: String, contentType: String? = nil) {
        parts.append(Part(name: name, contentType: contentType, content: .bytes(Array(value.utf8))))
    }

    /// Appends a file part read from `path`. The file name defaults to the path's last
    /// component; the type to one guessed from its extension.
    public mutating func append(fileAt path: String, name: String, filename: String? = nil, contentType: String? = nil) {
        let base = filename ?? path.pathBaseName
        let type = contentType ?? MIMEType.guess(forPath: base) ?? "application/octet-stream"
        parts.append(Part(name: name, filename: base, contentType: type, content: .file(path: path)))
    }

    /// Appends a prepared part.
    public mutating func append(_ part: Part) {
        parts.append(part)
    }

    /// The head (boundary line and part headers) that precedes `part`.
    public func head(of part: Part, first: Bool) -> [UInt8] {
        var text = first ? "" : "\r\n"
        text += "--\(boundary)\r\n"
        text += "Content-Disposition: form-data; name=\"\(Self.quoted(part.name))\""
        if let filename = part.filename { text += "; filename=\"\(Self.quoted(filename))\"" }
        text += "\r\n"
        if let type = part.contentType { text += "Content-Type: \(type)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    /// The closing delimiter.
    public var tail: [UInt8] {
        Array(((parts.isEmpty ? "" : "\r\n") + "--\(boundary)--\r\n").utf8)
    }

    /// The body as a sequence of in-memory and on-disk segments.
    func segments() throws(AFError) -> [BodySegment] {
        if let reason = Self.boundaryProblem(boundary) { throw .invalidRequest(reason: "multipart boundary '\(MessageQuote.capped(boundary))': \(reason)") }
        for part in parts {
            if let type = part.contentType, type.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) {
                throw .invalidRequest(reason: "the content type of part '\(MessageQuote.capped(part.name))' contains a line break or NUL; a part header must be one line")
            }
        }
        var segments: [BodySegment] = []
        for (index, part) in parts.enumerated() {
            segments.append(.bytes(head(of: part, first: index == 0)))
            switch part.content {
            case .bytes(let bytes): segments.append(.bytes(bytes))
            case .file(let path): segments.append(.file(path: path, size: try FileInfo.size(ofFileAt: path)))
            }
        }
        segments.append(.bytes(tail))
        return segments
    }

    /// The encoded size in bytes, or nil when a file part's size is only known once it has
    /// been read (a pipe): the form is then sent chunked.
    public func contentLength() throws(AFError) -> Int64? {
        var total: Int64 = 0
        for segment in try segments() {
            guard let size = segment.size else { return nil }
            total += size
        }
        return total
    }

    /// Whether every part can be read again for another attempt.
    public var isReplayable: Bool {
        parts.allSatisfy { part in
            if case .file(let path) = part.content { return FileInfo.isRereadable(path) }
            return true
        }
    }

    /// Why `boundary` cannot delimit parts (RFC 2046: 1 to 70 characters from digits, letters
    /// and `'()+_,-./:=?` or space, not ending in a space), or nil when it can.
    public static func boundaryProblem(_ boundary: String) -> String? {
        let allowed = Set("'()+_,-./:=? ".utf8)
        guard (1...70).contains(boundary.utf8.count) else { return "a boundary has 1 to 70 characters" }
        guard boundary.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122) || allowed.contains($0) }),
              boundary.utf8.last != 32
        else {
            return "use only letters, digits and '()+_,-./:=? (no line breaks, and no space at the end)"
        }
        return nil
    }

    /// Escapes a name for a quoted header parameter (HTML's rules for form data).
    static func quoted(_ value: String) -> String {
        var out = ""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "%22"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            case "\0": out += "%00"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// A piece of a request body.
enum BodySegment: Sendable {
    case bytes([UInt8])
    /// A file part; nil size: read to the end.
    case file(path: String, size: Int64?)

    /// Whether the segment can be produced again from its start.
    var isRereadable: Bool {
        if case .file(let path, _) = self { return FileInfo.isRereadable(path) }
        return true
    }

    var size: Int64? {
        switch self {
        case .bytes(let bytes): return Int64(bytes.count)
        case .file(_, let size): return size
        }
    }
}
