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

    /// The method as sent.
    public var description: String { rawValue }

    /// `GET`.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `POST`.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `PATCH`.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `DELETE`.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `OPTIONS`.
    public static let options = HTTPMethod(rawValue: "OPTIONS")
    /// `TRACE`.
    public static let trace = HTTPMethod(rawValue: "TRACE")
    /// `CONNECT`.
    public static let connect = HTTPMethod(rawValue: "CONNECT")

    /// The methods RFC 9110 defines (and `PATCH`, RFC 5789): the static members above.
    public static let standard: Set<HTTPMethod> = [.get, .head, .post, .put, .patch, .delete, .options, .trace, .connect]

    /// The methods in IANA's HTTP Method Registry that are made of letters (WebDAV's,
    /// CalDAV's, `QUERY`, ...), with `PURGE`, which caches take though no RFC defines it:
    /// the words a person means as methods.
    public static let registered: Set<HTTPMethod> = standard.union([
        "ACL", "BIND", "CHECKIN", "CHECKOUT", "COPY", "LABEL", "LINK", "LOCK", "MERGE", "MKACTIVITY", "MKCALENDAR", "MKCOL",
        "MKREDIRECTREF", "MKWORKSPACE", "MOVE", "ORDERPATCH", "PRI", "PROPFIND", "PROPPATCH", "PURGE", "QUERY", "REBIND",
        "REPORT", "SEARCH", "UNBIND", "UNCHECKOUT", "UNLINK", "UNLOCK", "UPDATE", "UPDATEREDIRECTREF",
    ].map { HTTPMethod(rawValue: $0) })

    /// Methods that RFC 9110 defines as idempotent and that a retry policy may repeat safely.
    public static let idempotent: Set<HTTPMethod> = [.get, .head, .put, .delete, .options, .trace]

    /// Whether the method is one of `idempotent`.
    public var isIdempotent: Bool { Self.idempotent.contains(self) }
}
