import Foundation

/// A request as the test server received it.
public struct ServerRequest: Sendable {
    public var method: String
    /// The request target exactly as on the request line (origin-form or absolute-form).
    public var target: String
    public var httpVersion: String
    /// Header lines in order, names as sent.
    public var headers: [(name: String, value: String)]
    /// The body after removing chunked framing.
    public var body: [UInt8]
    /// Whether the body came with `Transfer-Encoding: chunked`.
    public var chunked: Bool
    /// The request line and headers as received.
    public var rawHead: String
    /// The same as bytes (`rawHead` shows bytes that are not UTF-8 as U+FFFD).
    public var rawHeadBytes: [UInt8] = []
    /// Which connection it came on (1-based, in accept order).
    public var connection: Int
    /// Body bytes read and dropped without keeping them (`/discard`).
    public var discardedBytes = 0
    /// When the request head arrived, in seconds of system uptime.
    public var receivedAt: Double = 0

    /// The path of the target, without the query. An absolute-form target (a proxy's,
    /// `http://host/path`) gives its path; a path whose query holds a URL
    /// (`/redirect-to?url=http://…`) is a path.
    public var path: String {
        var text = target
        if !text.hasPrefix("/"), let range = text.range(of: "://") {
            let rest = text[range.upperBound...]
            text = rest.firstIndex(of: "/").map { String(rest[$0...]) } ?? "/"
        }
        return String(text.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    /// The raw query string, if any.
    public var query: String? {
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        return parts.count > 1 ? String(parts[1]) : nil
    }

    /// Query parameters, percent-decoded.
    public var queryItems: [(String, String)] {
        guard let query else { return [] }
        return query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text) }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// The first value of a query parameter.
    public func queryValue(_ name: String) -> String? {
        queryItems.first { $0.0 == name }?.1
    }

    /// The first value of a header, compared case-insensitively.
    public func header(_ name: String) -> String? {
        headers.first { Self.sameName($0.name, name) }?.value
    }

    /// Every value of a header.
    public func headerValues(_ name: String) -> [String] {
        headers.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Whether two header names are the same apart from case: ASCII names byte by byte,
    /// without making lower-cased copies; others as before.
    static func sameName(_ a: String, _ b: String) -> Bool {
        guard a.utf8.allSatisfy({ $0 < 0x80 }), b.utf8.allSatisfy({ $0 < 0x80 }) else { return a.lowercased() == b.lowercased() }
        guard a.utf8.count == b.utf8.count else { return false }
        return zip(a.utf8, b.utf8).allSatisfy { x, y in
            x == y || (x | 0x20 == y | 0x20 && (x | 0x20) &- UInt8(ascii: "a") < 26)
        }
    }

    /// The body as UTF-8 text.
    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// What the server does with a request.
public enum Reply: Sendable {
    /// A complete response; `Content-Length` is added unless a length or chunked framing
    /// header is already present.
    case response(status: Int, reason: String? = nil, headers: [(String, String)] = [], body: [UInt8] = [])
    /// Exact bytes, then optionally close the connection.
    case raw([UInt8], close: Bool)
    /// Full control over the connection.
    case custom(@Sendable (ServerConnection) -> Void)

    /// A JSON response.
    public static func json(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> Reply {
        .response(status: status, headers: [("Content-Type", "application/json")] + headers, body: Array(text.utf8))
    }

    /// A 200 whose head announces `length` bytes and whose connection closes after `body`
    /// (fewer of them): a body cut short.
    public static func cut(_ body: [UInt8], announcing length: Int, headers: [(String, String)] = []) -> Reply {
        var head = "HTTP/1.1 200 OK\r\nContent-Length: \(length)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return .raw(Array((head + "\r\n").utf8) + body, close: true)
    }

    /// A text response.
    public static func text(_ text: String, status: Int = 200, type: String = "text/plain; charset=utf-8", headers: [(String, String)] = []) -> Reply {
        .response(status: status, headers: [("Content-Type", type)] + headers, body: Array(text.utf8))
    }
}

/// The write side of a connection, for `Reply.custom` handlers.
public protocol ServerConnection: AnyObject, Sendable {
    /// Writes bytes; false once the peer has gone.
    @discardableResult func write(_ bytes: [UInt8]) -> Bool
    /// Reads exactly `count` bytes of what the client sends next (after the request the
    /// handler answers); nil once the peer has gone.
    func read(exactly count: Int) -> [UInt8]?
    /// Closes the connection after the handler returns.
    func close()
}

extension ServerConnection {
    @discardableResult public func write(_ text: String) -> Bool { write(Array(text.utf8)) }
}
