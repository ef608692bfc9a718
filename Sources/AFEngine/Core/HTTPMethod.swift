/// An HTTP request method.
///
/// A struct rather than an enum, so that any token (`PURGE`, `PROPFIND`, …) is a valid method;
/// the common ones are static members.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The method token exactly as it is sent.
    public let rawValue: String

    /// Creates a method from its token; the token is sent as given.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static let get = HTTPMethod(rawValue: "GET")
    public static let head = HTTPMethod(rawValue: "HEAD")
    public static let post = HTTPMethod(rawValue: "POST")
    public static let put = HTTPMethod(rawValue: "PUT")
    public static let patch = HTTPMethod(rawValue: "PATCH")
    public static let delete = HTTPMethod(rawValue: "DELETE")
    public static let options = HTTPMethod(rawValue: "OPTIONS")
    public static let trace = HTTPMethod(rawValue: "TRACE")
    public static let connect = HTTPMethod(rawValue: "CONNECT")

    /// Methods that RFC 9110 defines as idempotent and that a retry policy may repeat safely.
    public static let idempotent: Set<HTTPMethod> = [.get, .head, .put, .delete, .options, .trace]

    /// Whether the method is one of `idempotent`.
    public var isIdempotent: Bool { Self.idempotent.contains(self) }
}
