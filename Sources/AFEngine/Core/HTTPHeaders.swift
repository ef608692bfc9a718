/// One header line: a name and a value, kept exactly as given.
public struct HTTPHeader: Hashable, Sendable, CustomStringConvertible {
    /// The name, spelled as given.
    public var name: HTTPHeaders.Name
    /// The value, as given.
    public var value: String

    /// Creates a header line.
    public init(name: HTTPHeaders.Name, value: String) {
        self.name = name
        self.value = value
    }

    /// Creates a header line from strings.
    public init(_ name: String, _ value: String) {
        self.init(name: HTTPHeaders.Name(name), value: value)
    }

    public var description: String { "\(name.rawValue): \(value)" }

    /// Why the value cannot be sent, as the end of a sentence that starts with the header,
    /// or nil: a line break would start a header line of its own (header injection), and a
    /// NUL would end the value early.
    package var valueProblem: String? {
        let isBad: (UInt8) -> Bool = { $0 == 13 || $0 == 10 || $0 == 0 }
        // In place where the bytes are contiguous: this runs for every header of every request.
        let found: UInt8? = value.utf8.withContiguousStorageIfAvailable { $0.first(where: isBad) } ?? value.utf8.first(where: isBad)
        guard let found else { return nil }
        return found == 0 ? "contains a NUL character, which no header value can hold" : "contains a line break; header values must be one line"
    }
}

/// An ordered list of headers.
///
/// Order is preserved, a name may appear more than once (`Set-Cookie`), and names compare
/// case-insensitively. Nothing is ever merged or comma-joined.
public struct HTTPHeaders: Sendable, Hashable, RandomAccessCollection, ExpressibleByArrayLiteral,
    CustomStringConvertible
{
    /// A header name that keeps its spelling but compares without regard to case.
    public struct Name: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
        /// The name as it was written.
        public let rawValue: String
        /// The lower-cased form used for comparisons.
        public let canonical: String

        /// A name spelled as `rawValue`.
        public init(_ rawValue: String) {
            self.rawValue = rawValue
            canonical = Self.canonical(of: rawValue)
        }

        public init(stringLiteral value: String) {
            self.init(value)
        }

        /// `text` lower-cased. An ASCII name (every valid one) is lower-cased byte by byte,
        /// and shares its text when it is lower case already (HTTP/2 names are); anything
        /// else goes through `lowercased()`. Names are made for every header of every request
        /// and response.
        private static func canonical(of text: String) -> String {
            enum Case { case lower, upper, other }
            var text = text
            let found = text.withUTF8 { bytes -> Case in
                var bits: UInt8 = 0
                var upper = false
                for byte in bytes {
                    bits |= byte
                    upper = upper || byte &- UInt8(ascii: "A") < 26
                }
                return bits >= 0x80 ? .other : upper ? .upper : .lower
            }
            switch found {
            case .lower:
                return text
            case .other:
                return text.lowercased()
            case .upper:
                return text.withUTF8 { bytes in
                    String(unsafeUninitializedCapacity: bytes.count) { target in
                        var index = 0
                        while index < bytes.count {
                            let byte = bytes[index]
                            target[index] = byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
                            index += 1
                        }
                        return bytes.count
                    }
                }
            }
        }

        public var description: String { rawValue }

        public static func == (lhs: Name, rhs: Name) -> Bool { lhs.canonical == rhs.canonical }
        public func hash(into hasher: inout Hasher) { hasher.combine(canonical) }

        /// The `Accept` header.
        public static let accept: Name = "Accept"
        /// The `Accept-Encoding` header.
        public static let acceptEncoding: Name = "Accept-Encoding"
        /// The `Authorization` header.
        public static let authorization: Name = "Authorization"
        /// The `Content-Disposition` header.
        public static let contentDisposition: Name = "Content-Disposition"
        /// The `Content-Encoding` header.
        public static let contentEncoding: Name = "Content-Encoding"
        /// The `Content-Length` header.
        public static let contentLength: Name = "Content-Length"
        /// The `Content-Range` header.
        public static let contentRange: Name = "Content-Range"
        /// The `Content-Type` header.
        public static let contentType: Name = "Content-Type"
        /// The `Cookie` header.
        public static let cookie: Name = "Cookie"
        /// The `ETag` header.
        public static let etag: Name = "ETag"
        /// The `Expect` header.
        public static let expect: Name = "Expect"
        /// The `Host` header.
        public static let host: Name = "Host"
        /// The `If-Range` header.
        public static let ifRange: Name = "If-Range"
        /// The `Last-Modified` header.
        public static let lastModified: Name = "Last-Modified"
        /// The `Location` header.
        public static let location: Name = "Location"
        /// The `Proxy-Authorization` header.
        public static let proxyAuthorization: Name = "Proxy-Authorization"
        /// The `Range` header.
        public static let range: Name = "Range"
        /// The `Retry-After` header.
        public static let retryAfter: Name = "Retry-After"
        /// The `Set-Cookie` header.
        public static let setCookie: Name = "Set-Cookie"
        /// The `Transfer-Encoding` header.
        public static let transferEncoding: Name = "Transfer-Encoding"
        /// The `User-Agent` header.
        public static let userAgent: Name = "User-Agent"
        /// The `WWW-Authenticate` header.
        public static let wwwAuthenticate: Name = "WWW-Authenticate"
    }

    private var storage: [HTTPHeader]

    /// No headers.
    public init() { storage = [] }
    /// No headers yet, with room for `capacity` without growing (a head is built header by
    /// header, and each growth of the array is an allocation and a copy).
    public init(minimumCapacity capacity: Int) {
        storage = []
        storage.reserveCapacity(capacity)
    }

    /// Makes room for `capacity` headers in all.
    public mutating func reserveCapacity(_ capacity: Int) { storage.reserveCapacity(capacity) }
    /// These headers in this order.
    public init(_ headers: [HTTPHeader]) { storage = headers }
    public init(arrayLiteral elements: HTTPHeader...) { storage = elements }

    public var startIndex: Int { storage.startIndex }
    public var endIndex: Int { storage.endIndex }
    public subscript(position: Int) -> HTTPHeader { storage[position] }

    /// Appends a header, keeping any existing header of the same name.
    public mutating func add(_ header: HTTPHeader) { storage.append(header) }

    /// Appends a header, keeping any existing header of the same name.
    public mutating func add(name: Name, value: String) { storage.append(HTTPHeader(name: name, value: value)) }

    /// Replaces every header called `name` with one header, placed where the first one was
    /// (or at the end when there was none).
    public mutating func set(name: Name, value: String) {
        if let first = storage.firstIndex(where: { $0.name == name }) {
            storage[first].value = value
            var index = storage.index(after: first)
            while index < storage.endIndex {
                if storage[index].name == name { storage.remove(at: index) } else { index += 1 }
            }
        } else {
            storage.append(HTTPHeader(name: name, value: value))
        }
    }

    /// Appends an obsolete line-folding continuation to the last header's value.
    mutating func continueLastValue(with text: String) {
        guard !storage.isEmpty else { return }
        storage[storage.count - 1].value += " " + text
    }

    /// Removes every header called `name`.
    public mutating func remove(name: Name) { storage.removeAll { $0.name == name } }

    /// The value of the first header called `name`.
    public func value(for name: Name) -> String? { storage.first { $0.name == name }?.value }

    /// Every value of headers called `name`, in order.
    public func values(for name: Name) -> [String] { storage.filter { $0.name == name }.map(\.value) }

    /// Whether a header called `name` is present.
    public func contains(_ name: Name) -> Bool { storage.contains { $0.name == name } }

    /// The headers as an array.
    public var array: [HTTPHeader] { storage }

    public var description: String { storage.map(\.description).joined(separator: "\n") }
}
