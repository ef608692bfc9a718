import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on 127.0.0.1 (or a Unix socket) that a test starts for itself.
///
/// Every request is recorded so tests can check, server-side, exactly what arrived and how
/// often. Routes added with `route` take precedence over the built-in ones (`BuiltinRoutes`).
public final class TestServer: @unchecked Sendable {
    /// A route handler: the request and how many requests that path has had (1 for the first).
    public typealias Handler = @Sendable (ServerRequest, Int) -> Reply

    public let port: Int
    public let scheme: String
    public let unixSocketPath: String?
    private let listener: Listener
    private let tls: TLSServerContext?
    private let lock = NSLock()
    private var recorded: [ServerRequest] = []
    private var hitCounts: [String: Int] = [:]
    private var routes: [(pattern: String, handler: Handler)] = []
    private var connectionCount = 0
    private var handshakeCount = 0
    private var stopped = false
    private var openChannels: [ObjectIdentifier: Channel] = [:]

    /// Whether `requests` keeps what arrived; the standalone server (benchmarks, hundreds of
    /// thousands of requests) keeps nothing, so its memory does not grow with every request.
    private let recordsRequests: Bool

    /// Starts listening on an ephemeral port of 127.0.0.1 (or on `unixSocketPath`), with TLS
    /// when `tls` is given. Without `recordsRequests`, `requests` stays empty (hits and
    /// connections are still counted).
    public init(tls: TLSServerIdentity? = nil, unixSocketPath: String? = nil, port requestedPort: Int = 0, recordsRequests: Bool = true) throws {
        self.recordsRequests = recordsRequests
        // A client that hangs up (a refused pin, a timeout) must not kill the test process
        // when the server writes to the dead socket.
        signal(SIGPIPE, SIG_IGN)
        self.tls = try tls.map { try TLSServerContext(identity: $0) }
        scheme = tls == nil ? "http" : "https"
        self.unixSocketPath = unixSocketPath
        if let path = unixSocketPath {
            unlink(path)
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw ServerError.socket("socket: \(errno)") }
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                for (index, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[index] = byte }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard bound == 0, listen(fd, 128) == 0 else { throw ServerError.socket("bind \(path): \(errno)") }
            listener = Listener(fd: fd)
            port = 0
        } else {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw ServerError.socket("socket: \(errno)") }
            var yes: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(requestedPort).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0, listen(fd, 128) == 0 else { throw ServerError.socket("bind: \(errno)") }
            var actual = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &actual) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            listener = Listener(fd: fd)
            port = Int(UInt16(bigEndian: actual.sin_port))
        }
        // The loop holds the server weakly, so a server that a test lets go of is stopped by
        // `deinit` instead of listening until the process ends.
        let listener = listener
        let thread = Thread { [weak self] in Self.acceptLoop(listener: listener) { self } }
        thread.stackSize = 1 << 20
        thread.start()
    }

    deinit {
        stop()
    }

    /// `scheme://127.0.0.1:port`.
    public var baseURL: String { "\(scheme)://127.0.0.1:\(port)" }

    /// The absolute URL of `path` on this server.
    public func url(_ path: String) -> String { baseURL + path }

    /// Adds a route. `pattern` is an exact path, or a prefix ending in `*`.
    public func route(_ pattern: String, _ handler: @escaping Handler) {
        lock.withLock { routes.insert((pattern, handler), at: 0) }
    }

    /// Every request received, in order.
    public var requests: [ServerRequest] { lock.withLock { recorded } }

    /// Requests whose path is `path`.
    public func requests(to path: String) -> [ServerRequest] { requests.filter { $0.path == path } }

    /// How many requests reached `path`.
    public func hits(_ path: String) -> Int { lock.withLock { hitCounts[path] ?? 0 } }

    /// Connections accepted so far.
    public var connections: Int { lock.withLock { connectionCount } }

    /// Connections open now.
    public var openConnections: Int { lock.withLock { openChannels.count } }

    /// TLS handshakes that completed.
    public var completedHandshakes: Int { lock.withLock { handshakeCount } }

    /// A port on 127.0.0.1 that a server had a moment ago and nothing listens on now, for
    /// connections that must be refused.
    public static func closedPort() throws -> Int {
        let gone = try TestServer()
        let port = gone.port
        gone.stop()
        return port
    }

    /// Stops accepting and closes open connections.
    public func stop() {
        // Only wake the threads here; each closes its own descriptor, so no number is reused
        // while a thread still blocks on it. Channels are interrupted under the lock, which a
        // serving thread must take to unregister before it closes.
        let first: Bool = lock.withLock {
            if stopped { return false }
            stopped = true
            for channel in openChannels.values { channel.interrupt() }
            return true
        }
        if first { listener.shutDown() }
        if let unixSocketPath { unlink(unixSocketPath) }
    }

    var isStopped: Bool { lock.withLock { stopped } }

    // MARK: Connections

    /// Accepts until the server stops or goes away, then closes the listening socket — here,
    /// on the thread that blocks on it, never under it.
    private static func acceptLoop(listener: Listener, server: () -> TestServer?) {
        defer { listener.close() }
        while true {
            let fd = accept(listener.fd, nil, nil)
            guard let server = server(), !server.isStopped else {
                if fd >= 0 { close(fd) }
                return
            }
            if fd < 0 {
                if errno != EINTR, errno != ECONNABORTED { usleep(1000) }
                continue
            }
            server.start(fd: fd)
        }
    }

    private func start(fd: Int32) {
        var yes: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        let number: Int = lock.withLock {
            connectionCount += 1
            return connectionCount
        }
        let thread = Thread { [self] in serve(fd: fd, connection: number) }
        thread.stackSize = 1 << 20
        thread.start()
    }

    private func serve(fd: Int32, connection: Int) {
        let channel: Channel
        if let tls {
            guard let secure = tls.accept(fd: fd) else {
                Glibc.close(fd)
                return
            }
            lock.withLock { handshakeCount += 1 }
            channel = secure
        } else {
            channel = SocketChannel(fd: fd)
        }
        let key = ObjectIdentifier(channel)
        let registered = lock.withLock { () -> Bool in
            if stopped { return false }
            openChannels[key] = channel
            return true
        }
        defer {
            _ = lock.withLock { openChannels.removeValue(forKey: key) }
            channel.close()
        }
        guard registered else { return }
        let reader = RequestReader(channel: channel)
        while !isStopped {
            guard var request = reader.next() else { return }
            request.connection = connection
            request.receivedAt = ProcessInfo.processInfo.systemUptime
            let (handler, hit) = lock.withLock { () -> (Handler?, Int) in
                if recordsRequests { recorded.append(request) }
                hitCounts[request.path, default: 0] += 1
                let hit = hitCounts[request.path] ?? 1
                let handler = routes.first { Self.matches($0.pattern, request.path) }?.handler
                return (handler, hit)
            }
            let reply = handler?(request, hit) ?? BuiltinRoutes.reply(to: request, hit: hit)
            let writer = ConnectionWriter(channel: channel, reader: reader)
            let keepOpen = writer.send(reply, for: request)
            if !keepOpen || request.header("Connection")?.lowercased() == "close" { return }
        }
    }

    private static func matches(_ pattern: String, _ path: String) -> Bool {
        if pattern.hasSuffix("*") { return path.hasPrefix(String(pattern.dropLast())) }
        return pattern == path
    }
}

/// A listening socket shared by a server and its accept thread. Any thread may shut it down
/// (which wakes `accept`); only the accept thread closes it. Both take the lock, so neither
/// acts on a descriptor number that has since been reused.
final class Listener: @unchecked Sendable {
    let fd: Int32
    private let lock = NSLock()
    private var closed = false

    init(fd: Int32) {
        self.fd = fd
    }

    func shutDown() {
        lock.withLock {
            if !closed { _ = shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    func close() {
        lock.withLock {
            if !closed { _ = Glibc.close(fd) }
            closed = true
        }
    }
}

public enum ServerError: Error {
    case socket(String)
    case tls(String)
}

/// Sends replies on a connection.
final class ConnectionWriter: ServerConnection, @unchecked Sendable {
    private let channel: Channel
    private let reader: RequestReader
    private var closeRequested = false

    init(channel: Channel, reader: RequestReader) {
        self.channel = channel
        self.reader = reader
    }

    func read(exactly count: Int) -> [UInt8]? {
        reader.read(exactly: count)
    }

    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { channel.write($0) }
    }

    func close() {
        closeRequested = true
    }

    /// Sends `reply`; returns whether the connection stays open.
    func send(_ reply: Reply, for request: ServerRequest) -> Bool {
        switch reply {
        case .response(let status, let reason, let headers, let body):
            var head = "HTTP/1.1 \(status) \(reason ?? Self.phrase(status))\r\n"
            let names = Set(headers.map { $0.0.lowercased() })
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            if !names.contains("content-length"), !names.contains("transfer-encoding"), status != 204, status != 304 {
                head += "Content-Length: \(body.count)\r\n"
            }
            head += "\r\n"
            var bytes = Array(head.utf8)
            if request.method != "HEAD" { bytes += body }
            return write(bytes)
        case .raw(let bytes, let close):
            return write(bytes) && !close
        case .custom(let handler):
            handler(self)
            return !closeRequested
        }
    }

    static func phrase(_ status: Int) -> String {
        switch status {
        case 200: return "OK"
        case 201: return "Created"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 301: return "Moved Permanently"
        case 302: return "Found"
        case 303: return "See Other"
        case 304: return "Not Modified"
        case 307: return "Temporary Redirect"
        case 308: return "Permanent Redirect"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 416: return "Range Not Satisfiable"
        case 418: return "I'm a teapot"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return "Status"
        }
    }
}

/// Reads requests off a connection: head, then body by length or chunked framing.
final class RequestReader {
    private let channel: Channel
    private var buffer: [UInt8] = []
    private var scratch = [UInt8](repeating: 0, count: 65536)

    init(channel: Channel) {
        self.channel = channel
    }

    private func fill() -> Bool {
        let count = scratch.withUnsafeMutableBytes { channel.read(into: $0) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: scratch[0..<count])
        return true
    }

    private func headEnd() -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4) where buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// The next `count` bytes, for a handler that reads the connection itself.
    func read(exactly count: Int) -> [UInt8]? { take(count) }

    private func take(_ count: Int) -> [UInt8]? {
        while buffer.count < count { guard fill() else { return nil } }
        let bytes = Array(buffer[0..<count])
        buffer.removeFirst(count)
        return bytes
    }

    /// Reads and drops `count` bytes (bodies sent to `/discard`, which may be huge).
    private func discard(_ count: Int) -> Bool {
        var remaining = count
        let buffered = min(buffer.count, remaining)
        buffer.removeFirst(buffered)
        remaining -= buffered
        while remaining > 0 {
            let got = scratch.withUnsafeMutableBytes { channel.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<min($0.count, remaining)])) }
            guard got > 0 else { return false }
            remaining -= got
        }
        return true
    }

    private func line() -> String? {
        while true {
            if let index = buffer.firstIndex(of: 10) {
                var bytes = Array(buffer[0..<index])
                buffer.removeFirst(index + 1)
                if bytes.last == 13 { bytes.removeLast() }
                return String(decoding: bytes, as: UTF8.self)
            }
            guard fill() else { return nil }
        }
    }

    func next() -> ServerRequest? {
        var end = headEnd()
        while end == nil {
            guard buffer.count < 1 << 20, fill() else { return nil }
            end = headEnd()
        }
        guard let end else { return nil }
        let head = Array(buffer[0..<end])
        let rawHead = String(decoding: head, as: UTF8.self)
        buffer.removeFirst(end + 4)
        // Lines end at CR LF; each header line is split at its first colon and the value
        // trimmed, from the bytes (Foundation's string splitting and trimming per header were
        // most of the server's time per request, which benchmarks share with the client).
        var lines: [ArraySlice<UInt8>] = []
        var lineStart = 0
        var index = 0
        while index + 1 < head.count {
            if head[index] == 13, head[index + 1] == 10 {
                lines.append(head[lineStart..<index])
                index += 2
                lineStart = index
            } else {
                index += 1
            }
        }
        lines.append(head[lineStart...])
        let requestLine = String(decoding: lines.removeFirst(), as: UTF8.self).split(separator: " ", maxSplits: 2).map(String.init)
        guard requestLine.count == 3 else { return nil }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = String(decoding: line[..<colon], as: UTF8.self)
            var value = line[(colon + 1)...]
            while let first = value.first, first == 32 || first == 9 { value.removeFirst() }
            while let last = value.last, last == 32 || last == 9 { value.removeLast() }
            let text = String(decoding: value, as: UTF8.self)
            // Other whitespace (no-break spaces and the like) is trimmed as before.
            let trimmed = value.first.map { $0 >= 0x80 } == true || value.last.map { $0 >= 0x80 } == true
                ? text.trimmingCharacters(in: .whitespaces) : text
            headers.append((name, trimmed))
        }
        var request = ServerRequest(
            method: requestLine[0], target: requestLine[1], httpVersion: requestLine[2],
            headers: headers, body: [], chunked: false, rawHead: rawHead, connection: 0
        )
        request.rawHeadBytes = head
        if request.header("Expect")?.lowercased() == "100-continue" {
            _ = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8).withUnsafeBytes { channel.write($0) }
        }
        if request.header("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            request.chunked = true
            var body: [UInt8] = []
            while true {
                guard let sizeLine = line() else { return nil }
                let hex = sizeLine.split(separator: ";").first.map(String.init) ?? ""
                guard let size = Int(hex.trimmingCharacters(in: .whitespaces), radix: 16) else { return nil }
                if size == 0 {
                    while let trailer = line(), !trailer.isEmpty {}
                    break
                }
                guard let chunk = take(size), line() != nil else { return nil }
                body += chunk
            }
            request.body = body
        } else if let length = request.header("Content-Length").flatMap({ Int($0) }), length > 0 {
            if request.path == "/discard" {
                guard discard(length) else { return nil }
                request.discardedBytes = length
            } else {
                guard let body = take(length) else { return nil }
                request.body = body
            }
        }
        return request
    }
}
