/// The status line and headers of a response.
public struct ResponseHead: Sendable, Equatable {
    /// The status code.
    public var status: Int {
        get { storage.values.status }
        _modify { yield &storage.values.status }
    }
    /// The reason phrase as the server sent it (empty for HTTP/2).
    public var reason: String {
        get { storage.values.reason }
        _modify { yield &storage.values.reason }
    }
    /// The protocol as on the status line: `HTTP/1.1`, `HTTP/2`, …
    public var httpVersion: String {
        get { storage.values.httpVersion }
        _modify { yield &storage.values.httpVersion }
    }
    /// The headers in the order received.
    public var headers: HTTPHeaders {
        get { storage.values.headers }
        _modify { yield &storage.values.headers }
    }
    /// The informational (1xx) responses the server sent before this one, in order:
    /// `103 Early Hints`, `102 Processing`, a `100 Continue` the request asked for. At most
    /// `ResponseHead.keptInformational` are kept; any more are read and dropped.
    public var informational: [ResponseHead] {
        get { storage.values.informational }
        _modify { yield &storage.values.informational }
    }

    /// How many informational responses a head keeps (a server may send them without end).
    public static let keptInformational = 16

    /// The fields, shared by copies until one of them changes (`CopyOnWrite`): a head is
    /// copied into the attempt, the response and every printer on its way out, and as a
    /// plain struct each copy retained its strings and arrays one by one.
    private var storage: CopyOnWrite<Fields>

    private struct Fields: Sendable, Equatable {
        var status: Int
        var reason: String
        var httpVersion: String
        var headers: HTTPHeaders
        var informational: [ResponseHead]
    }

    /// Creates a head from its parts.
    public init(status: Int, reason: String, httpVersion: String, headers: HTTPHeaders, informational: [ResponseHead] = []) {
        storage = CopyOnWrite(Fields(status: status, reason: reason, httpVersion: httpVersion, headers: headers, informational: informational))
    }

    /// Heads are equal when their status, reason, version, headers and informational
    /// responses are.
    public static func == (lhs: ResponseHead, rhs: ResponseHead) -> Bool {
        lhs.storage.isUnchangedCopy(of: rhs.storage) || lhs.storage.values == rhs.storage.values
    }

    /// `reason`, or the standard phrase when the server sent none.
    public var displayReason: String {
        reason.isEmpty ? HTTPStatus.phrase(for: status) : reason
    }
}

/// One try at one hop of a request: what was sent, what came back, how long it took.
public struct Attempt: Sendable {
    /// 1-based position among all attempts of the request.
    public var number: Int {
        get { storage.values.number }
        _modify { yield &storage.values.number }
    }
    /// 0 for the first URL, 1 after the first redirect, …
    public var hop: Int {
        get { storage.values.hop }
        _modify { yield &storage.values.hop }
    }
    /// The method sent.
    public var method: HTTPMethod {
        get { storage.values.method }
        _modify { yield &storage.values.method }
    }
    /// The URL of the hop.
    public var url: String {
        get { storage.values.url }
        _modify { yield &storage.values.url }
    }
    /// The description as it was sent, after adapters.
    public var request: RequestDescription {
        get { storage.values.request }
        _modify { yield &storage.values.request }
    }
    /// The request head exactly as libcurl wrote it, when it got that far.
    public var sentHead: String? {
        get { storage.values.sentHead }
        _modify { yield &storage.values.sentHead }
    }
    /// The response head, when one arrived.
    public var response: ResponseHead? {
        get { storage.values.response }
        _modify { yield &storage.values.response }
    }
    /// Timings and sizes from libcurl.
    public var metrics: TransferMetrics? {
        get { storage.values.metrics }
        _modify { yield &storage.values.metrics }
    }
    /// What went wrong, when something did.
    public var error: AFError? {
        get { storage.values.error }
        _modify { yield &storage.values.error }
    }
    /// Up to a few kilobytes of a body that was not delivered to the sink (redirects, retried
    /// failures), for callers that show every exchange, and for reports.
    public var bodyPreview: [UInt8] {
        get { storage.values.bodyPreview }
        _modify { yield &storage.values.bodyPreview }
    }
    /// The delay before the next attempt when this one was retried.
    public var retryDelay: Double? {
        get { storage.values.retryDelay }
        _modify { yield &storage.values.retryDelay }
    }
    /// Whether the attempt after this one followed renewed credentials
    /// (`RetryResult.retryAfterRefresh`) rather than a retry the retry limit counts.
    public var refreshed: Bool {
        get { storage.values.refreshed }
        _modify { yield &storage.values.refreshed }
    }
    /// Trailer fields the server sent after the body (chunked HTTP/1.1, HTTP/2).
    public var trailers: HTTPHeaders {
        get { storage.values.trailers }
        _modify { yield &storage.values.trailers }
    }

    /// The fields, shared by copies until one of them changes (`CopyOnWrite`): an attempt is
    /// copied into the request's list, the response and the printers, and as a plain struct
    /// each copy retained its description, head, metrics and buffers one by one.
    private var storage: CopyOnWrite<Fields>

    private struct Fields: Sendable {
        var number: Int
        var hop: Int
        var method: HTTPMethod
        var url: String
        var request: RequestDescription
        var sentHead: String?
        var response: ResponseHead?
        var metrics: TransferMetrics?
        var error: AFError?
        var bodyPreview: [UInt8]
        var retryDelay: Double?
        var refreshed = false
        var trailers: HTTPHeaders
    }

    init(
        number: Int, hop: Int, method: HTTPMethod, url: String, request: RequestDescription, sentHead: String?,
        response: ResponseHead?, metrics: TransferMetrics?, error: AFError?, bodyPreview: [UInt8],
        retryDelay: Double? = nil, trailers: HTTPHeaders = HTTPHeaders()
    ) {
        storage = CopyOnWrite(Fields(
            number: number, hop: hop, method: method, url: url, request: request, sentHead: sentHead, response: response,
            metrics: metrics, error: error, bodyPreview: bodyPreview, retryDelay: retryDelay, trailers: trailers
        ))
    }
}

/// A redirect that was followed.
public struct RedirectRecord: Sendable {
    /// The redirect status (301, 302, 303, 307 or 308).
    public var status: Int
    /// The URL that answered with the redirect.
    public var from: String
    /// The resolved `Location`.
    public var to: String
    /// The method used for the next hop.
    public var method: HTTPMethod
    /// Names of headers and credentials removed because the redirect changed origin.
    public var dropped: [String]
}

/// The outcome of a request: the final response head (when one arrived), every attempt and
/// redirect, and the error that ended it (nil on success).
public struct Response: Sendable {
    /// The head of the final response, nil when none arrived.
    public var head: ResponseHead?
    /// Every attempt in order, retries and redirect hops included.
    public var attempts: [Attempt]
    /// Redirects followed, in order.
    public var redirects: [RedirectRecord]
    /// What ended the request unsuccessfully; nil on success.
    public var error: AFError?
    /// The URL of the last hop.
    public var finalURL: String
    /// The description of the last attempt as sent.
    public var finalRequest: RequestDescription

    /// The status of the final response.
    public var status: Int? { head?.status }

    /// The trailer fields after the final response's body.
    public var trailers: HTTPHeaders { head == nil ? HTTPHeaders() : attempts.last?.trailers ?? HTTPHeaders() }
}

/// Reason phrases for responses that arrive without one (HTTP/2).
public enum HTTPStatus {
    /// The standard reason phrase for `code`, or an empty string.
    public static func phrase(for code: Int) -> String {
        switch code {
        case 100: return "Continue"
        case 101: return "Switching Protocols"
        case 102: return "Processing"
        case 103: return "Early Hints"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 203: return "Non-Authoritative Information"
        case 204: return "No Content"
        case 205: return "Reset Content"
        case 206: return "Partial Content"
        case 300: return "Multiple Choices"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 402: return "Payment Required"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 406: return "Not Acceptable"
        case 407: return "Proxy Authentication Required"
        case 408: return "Request Timeout"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 411: return "Length Required"
        case 412: return "Precondition Failed"
        case 413: return "Content Too Large"
        case 414: return "URI Too Long"
        case 415: return "Unsupported Media Type"
        case 416: return "Range Not Satisfiable"
        case 417: return "Expectation Failed"
        case 418: return "I'm a teapot"
        case 421: return "Misdirected Request"
        case 422: return "Unprocessable Content"
        case 425: return "Too Early"
        case 426: return "Upgrade Required"
        case 428: return "Precondition Required"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 451: return "Unavailable For Legal Reasons"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        default: return ""
        }
    }
}
