/// One header line: a name and a value, kept exactly as given.
public struct HTTPHeader: Hashable, Sendable, CustomStringConvertible {
    public var name: HTTPHeaders.Name
    public var value: String

    public init(name: HTTPHeaders.Name, value: String) {
        self.name = name
        self.value = value
    }

    public init(_ name: String, _ value: String) {
        self.init(name: HTTPHeaders.Name(name), value: value)
    }

    public var description: String { "\(name.rawValue): \(value)" }
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

        public init(_ rawValue: String) {
            self.rawValue = rawValue
            canonical = rawValue.lowercased()
        }

        public init(stringLiteral value: String) {
            self.init(value)
        }

        public var description: String { rawValue }

        public static func == (lhs: Name, rhs: Name) -> Bool { lhs.canonical == rhs.canonical }
        public func hash(into hasher: inout Hasher) { hasher.combine(canonical) }

        public static let accept: Name = "Accept"
        public static let acceptEncoding: Name = "Accept-Encoding"
        public static let authorization: Name = "Authorization"
        public static let contentDisposition: Name = "Content-Disposition"
        public static let contentEncoding: Name = "Content-Encoding"
        public static let contentLength: Name = "Content-Length"
        public static let contentRange: Name = "Content-Range"
        public static let contentType: Name = "Content-Type"
        public static let cookie: Name = "Cookie"
        public static let etag: Name = "ETag"
        public static let expect: Name = "Expect"
        public static let host: Name = "Host"
        public static let ifRange: Name = "If-Range"
        public static let lastModified: Name = "Last-Modified"
        public static let location: Name = "Location"
        public static let proxyAuthorization: Name = "Proxy-Authorization"
        public static let range: Name = "Range"
        public static let retryAfter: Name = "Retry-After"
        public static let setCookie: Name = "Set-Cookie"
        public static let transferEncoding: Name = "Transfer-Encoding"
        public static let userAgent: Name = "User-Agent"
        public static let wwwAuthenticate: Name = "WWW-Authenticate"
    }

    private var storage: [HTTPHeader]

    public init() { storage = [] }
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
