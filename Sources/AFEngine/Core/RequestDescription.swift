#if canImport(Glibc)
import Glibc
#endif

/// Everything needed to perform one HTTP exchange, as a value.
///
/// The command line builds one; adapters derive new ones from it (auth, compression, a
/// resume `Range`); the transport turns the final one into a libcurl transfer. Nothing in a
/// description refers to a live resource except a `.stream` body's file descriptor.
public struct RequestDescription: Sendable {
    /// The method, sent exactly as spelled.
    public var method: HTTPMethod {
        get { storage.values.method }
        _modify { yield &storage.values.method }
    }
    /// The absolute URL, already encoded.
    public var url: String {
        get { storage.values.url }
        _modify { yield &storage.values.url }
    }
    /// The headers to send, in order. An empty value sends an empty header.
    public var headers: HTTPHeaders {
        get { storage.values.headers }
        _modify { yield &storage.values.headers }
    }
    /// Headers that libcurl would add on its own (`Accept`, `Content-Type`, …) and that must
    /// not be sent.
    public var suppressedHeaders: [HTTPHeaders.Name] {
        get { storage.values.suppressedHeaders }
        _modify { yield &storage.values.suppressedHeaders }
    }
    /// The body.
    public var body: RequestBody {
        get { storage.values.body }
        _modify { yield &storage.values.body }
    }
    /// Credentials for a challenge-response scheme (digest) that only the transport can
    /// answer. Basic and bearer credentials are plain `Authorization` headers.
    public var challengeCredentials: Credentials? {
        get { storage.values.challengeCredentials }
        _modify { yield &storage.values.challengeCredentials }
    }
    /// Transfer settings: timeouts, limits, TLS files, network routing.
    public var options: TransferOptions {
        get { storage.values.options }
        _modify { yield &storage.values.options }
    }
    /// `url` as its builder already parsed it, with the `pathAsIs` it was parsed with, so
    /// that the engine need not parse it again (`parsedURL()`); ignored once either changes.
    package var parsed: (url: HTTPURL, pathAsIs: Bool)? {
        get { storage.values.parsed }
        _modify { yield &storage.values.parsed }
    }

    /// The fields, shared by copies until one of them changes (`CopyOnWrite`). A description
    /// is copied a dozen times on its way to libcurl (into the request's state, each attempt,
    /// the transfer, the response); as a plain struct each copy retained some forty strings
    /// and arrays, and a batch spent a tenth of its instructions on such reference counts.
    private var storage: CopyOnWrite<Fields>

    private struct Fields: Sendable {
        var method: HTTPMethod
        var url: String
        var headers: HTTPHeaders
        var suppressedHeaders: [HTTPHeaders.Name]
        var body: RequestBody
        var challengeCredentials: Credentials?
        var options: TransferOptions
        var parsed: (url: HTTPURL, pathAsIs: Bool)?
    }

    /// Describes a request; only `url` is required.
    public init(
        method: HTTPMethod = .get,
        url: String,
        headers: HTTPHeaders = [],
        suppressedHeaders: [HTTPHeaders.Name] = [],
        body: RequestBody = .empty,
        challengeCredentials: Credentials? = nil,
        options: TransferOptions = TransferOptions()
    ) {
        storage = CopyOnWrite(Fields(
            method: method, url: url, headers: headers, suppressedHeaders: suppressedHeaders, body: body,
            challengeCredentials: challengeCredentials, options: options, parsed: nil
        ))
    }
}

extension RequestDescription {
    /// `url` parsed (with `options.pathAsIs`): the builder's parse when it still applies.
    func parsedURL() throws(AFError) -> HTTPURL {
        if let parsed, parsed.pathAsIs == options.pathAsIs, parsed.url.string == url { return parsed.url }
        return try HTTPURL(parsing: url, pathAsIs: options.pathAsIs)
    }
}

/// A user name and password for an authentication scheme.
public struct Credentials: Sendable, Hashable {
    /// Authentication schemes that af speaks.
    public enum Scheme: String, Sendable, Hashable, CaseIterable {
        case basic, digest, bearer
    }

    /// The user name.
    public var user: String
    /// The password (or token, for bearer).
    public var password: String
    /// How the credentials are presented.
    public var scheme: Scheme

    /// Creates credentials.
    public init(user: String, password: String, scheme: Scheme) {
        self.user = user
        self.password = password
        self.scheme = scheme
    }

    /// The `Authorization` value that presents them up front: `Bearer TOKEN`, else `Basic
    /// BASE64` (digest answers a challenge instead; see `challengeCredentials`).
    public var authorizationValue: String {
        switch scheme {
        case .bearer: return "Bearer \(password)"
        default: return "Basic " + Base64.encode(Array("\(user):\(password)".utf8))
        }
    }
}

/// Per-transfer settings that are not part of the HTTP message itself.
public struct TransferOptions: Sendable {
    /// The HTTP version to ask for.
    public enum HTTPVersion: String, Sendable, CaseIterable {
        /// HTTP/2 over TLS when the server offers it, else HTTP/1.1.
        case automatic
        case http1_0 = "1.0"
        case http1_1 = "1.1"
        case http2 = "2"
        case http2PriorKnowledge = "2-prior-knowledge"
    }

    /// Which IP family to resolve host names to.
    public enum IPVersion: Sendable { case any, v4, v6 }

    /// Bound on each attempt, in seconds.
    public var timeout: Double? {
        get { storage.values.timeout }
        _modify { yield &storage.values.timeout }
    }
    /// Bound on the connection phase (including TLS), in seconds.
    public var connectTimeout: Double? {
        get { storage.values.connectTimeout }
        _modify { yield &storage.values.connectTimeout }
    }
    /// The HTTP version to ask for.
    public var httpVersion: HTTPVersion {
        get { storage.values.httpVersion }
        _modify { yield &storage.values.httpVersion }
    }
    /// Send the path exactly as given, without removing dot segments.
    public var pathAsIs: Bool {
        get { storage.values.pathAsIs }
        _modify { yield &storage.values.pathAsIs }
    }
    /// Send the body with `Transfer-Encoding: chunked`.
    public var chunked: Bool {
        get { storage.values.chunked }
        _modify { yield &storage.values.chunked }
    }
    /// Refuse response bodies larger than this many bytes.
    public var maxFileSize: Int64? {
        get { storage.values.maxFileSize }
        _modify { yield &storage.values.maxFileSize }
    }
    /// Refuse responses with more header lines than this, or more trailer lines; 0: no limit.
    /// 100 by default.
    public var maxHeaders: Int {
        get { storage.values.maxHeaders }
        _modify { yield &storage.values.maxHeaders }
    }
    /// Refuse compressed responses that inflate to more than this many times their size
    /// once past `decompressionAllowance` bytes; 200 by default.
    public var maxDecompressionRatio: Int64 {
        get { storage.values.maxDecompressionRatio }
        _modify { yield &storage.values.maxDecompressionRatio }
    }
    /// Decoded bytes allowed before the decompression ratio is enforced; 8 MiB by default.
    public var decompressionAllowance: Int64 {
        get { storage.values.decompressionAllowance }
        _modify { yield &storage.values.decompressionAllowance }
    }
    /// Decode `Content-Encoding` (gzip, deflate, br, zstd) before the body reaches its sink.
    public var decodeContent: Bool {
        get { storage.values.decodeContent }
        _modify { yield &storage.values.decodeContent }
    }
    /// `HOST:PORT:ADDR` entries that pin a name to an address.
    public var resolve: [String] {
        get { storage.values.resolve }
        _modify { yield &storage.values.resolve }
    }
    /// Connect through this Unix domain socket instead of TCP.
    public var unixSocketPath: String? {
        get { storage.values.unixSocketPath }
        _modify { yield &storage.values.unixSocketPath }
    }

    /// Why `path` cannot name a Unix domain socket to connect to, or nil: a socket address
    /// holds a path of at most 107 bytes (libcurl said "cannot resolve host" for a longer
    /// one), and a NUL would end the path early.
    package static func unixSocketPathProblem(_ path: String) -> String? {
        if path.utf8.contains(0) { return "the path has a NUL character" }
        let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        guard path.utf8.count >= capacity else { return nil }
        return "the path is \(path.utf8.count) bytes long, and a socket address holds at most \(capacity - 1); "
            + "give a shorter path to the socket (a symbolic link to it works)"
    }
    /// Use this network interface or local address.
    public var interface: String? {
        get { storage.values.interface }
        _modify { yield &storage.values.interface }
    }
    /// The IP family to resolve to.
    public var ipVersion: IPVersion {
        get { storage.values.ipVersion }
        _modify { yield &storage.values.ipVersion }
    }
    /// Proxy routing.
    public var proxy: ProxySettings {
        get { storage.values.proxy }
        _modify { yield &storage.values.proxy }
    }
    /// TLS material and protocol limits.
    public var tls: TLSOptions {
        get { storage.values.tls }
        _modify { yield &storage.values.tls }
    }
    /// Keep cookies set by the server for the rest of the run. A `Cookie` header of the
    /// description is then sent on one line with the cookies the session sends.
    public var cookies: Bool {
        get { storage.values.cookies }
        _modify { yield &storage.values.cookies }
    }
    /// Record the request head exactly as libcurl writes it (`Attempt.sentHead`, the
    /// `requestSent` event). It costs libcurl's verbose mode, so callers that never show
    /// the head can turn it off. On by default.
    public var recordsSentHead: Bool {
        get { storage.values.recordsSentHead }
        _modify { yield &storage.values.recordsSentHead }
    }
    /// Emit libcurl's verbose trace as `transportLog` events (a debugging aid; it costs a
    /// callback per line).
    public var logsTransport: Bool {
        get { storage.values.logsTransport }
        _modify { yield &storage.values.logsTransport }
    }
    /// Whether a transfer that could share a connection being opened as an HTTP/2 stream
    /// waits for it rather than opening another (for many requests to one origin at once).
    public var waitsForMultiplexing: Bool {
        get { storage.values.waitsForMultiplexing }
        _modify { yield &storage.values.waitsForMultiplexing }
    }

    /// The fields, shared by copies until one of them changes (`CopyOnWrite`): the options
    /// travel with every description, and as a plain struct each copy retained their
    /// strings, lists and TLS and proxy settings one by one.
    private var storage = CopyOnWrite(Fields())

    private struct Fields: Sendable {
        var timeout: Double?
        var connectTimeout: Double?
        var httpVersion: HTTPVersion = .automatic
        var pathAsIs: Bool = false
        var chunked: Bool = false
        var maxFileSize: Int64?
        var maxHeaders: Int = 100
        var maxDecompressionRatio: Int64 = 200
        var decompressionAllowance: Int64 = 8 << 20
        var decodeContent: Bool = true
        var resolve: [String] = []
        var unixSocketPath: String?
        var interface: String?
        var ipVersion: IPVersion = .any
        var proxy: ProxySettings = ProxySettings()
        var tls: TLSOptions = TLSOptions()
        var cookies: Bool = true
        var recordsSentHead: Bool = true
        var logsTransport: Bool = false
        var waitsForMultiplexing: Bool = false
    }

    /// Defaults: no timeouts, automatic HTTP version, content decoding and cookies on.
    public init() {}
}

/// Which proxy, if any, carries a request.
public struct ProxySettings: Sendable, Hashable {
    /// Explicit proxies by URL scheme (`http`, `https`, or `all`).
    public var explicit: [String: String] = [:]
    /// Host names that bypass any proxy (the `no_proxy` syntax).
    public var noProxy: String?
    /// Honour the `http_proxy`, `https_proxy`, `all_proxy` and `no_proxy` variables.
    public var useEnvironment = true

    /// Defaults: no explicit proxy, environment variables honoured.
    public init() {}

    /// The proxy URL for a request to a URL with `scheme`, from explicit settings only.
    public func explicitProxy(forScheme scheme: String) -> String? {
        explicit[scheme.lowercased()] ?? explicit["all"]
    }

    /// Whether `noProxy` sends a request to `host` around the proxy, read as the libcurl af
    /// runs with reads the list (`NoProxyList`); nil where that reading is not certain (an
    /// IPv6 range that does not end on a byte; before libcurl 7.86, a tab in the list or a
    /// host name's trailing dot), so a caller can stay silent rather than guess.
    public func bypassesProxy(forHost host: String) -> Bool? {
        Self.noProxyList(noProxy, sendsAround: host)
    }

    /// Whether the `no_proxy` list `list` sends a request to `host` around any proxy (see
    /// `bypassesProxy(forHost:)`); false without a list.
    public static func noProxyList(_ list: String?, sendsAround host: String) -> Bool? {
        guard let list else { return false }
        return NoProxyList.sendsAround(list, host: host, readsRanges: readsRanges)
    }

    /// Whether libcurl reads addresses in a `no_proxy` list as addresses and ranges (7.86
    /// and later) rather than as names.
    private static let readsRanges = CurlRuntime.versionNumber.map { $0 >= 0x075600 } ?? true

    /// The explicit proxy for `scheme` when it is reached over TLS (an `https://` proxy).
    public func httpsProxy(forScheme scheme: String) -> String? {
        explicitProxy(forScheme: scheme).flatMap { $0.lowercased().hasPrefix("https://") ? $0 : nil }
    }

    /// These settings with the proxy variables of `variables` (an environment other than
    /// this process's) folded in, read the way libcurl reads them: `http_proxy` (lower case
    /// only), `https_proxy`, `all_proxy` and `no_proxy` (either case). Explicit proxies keep
    /// precedence; the result no longer consults the process environment.
    public func resolvingEnvironment(_ variables: [String: String]) -> ProxySettings {
        resolvingEnvironment(ProxyEnvironment(variables))
    }

    /// These settings with `environment`'s proxy variables folded in (see above); for many
    /// requests, read the variables once into a `ProxyEnvironment` and pass that.
    public func resolvingEnvironment(_ environment: ProxyEnvironment) -> ProxySettings {
        guard useEnvironment else { return self }
        var resolved = self
        resolved.useEnvironment = false
        if explicit["all"] == nil {
            if explicit["http"] == nil, let proxy = environment.http { resolved.explicit["http"] = proxy }
            if explicit["https"] == nil, let proxy = environment.https { resolved.explicit["https"] = proxy }
            if let proxy = environment.all {
                for scheme in ["http", "https"] where resolved.explicit[scheme] == nil { resolved.explicit[scheme] = proxy }
            }
        }
        if resolved.noProxy == nil { resolved.noProxy = environment.noProxy ?? "" }
        return resolved
    }
}

/// The proxy variables of an environment, read once, the way libcurl reads them.
public struct ProxyEnvironment: Sendable, Equatable {
    /// `http_proxy` (lower case only: `HTTP_PROXY` can be set by a CGI request's `Proxy:`
    /// header), nil when unset or empty.
    public var http: String?
    /// `https_proxy`, else `HTTPS_PROXY`.
    public var https: String?
    /// `all_proxy`, else `ALL_PROXY`.
    public var all: String?
    /// `no_proxy`, else `NO_PROXY`.
    public var noProxy: String?

    /// Reads the variables from `variables`.
    public init(_ variables: [String: String]) {
        // The upper-case spellings are written out: `uppercased()` per lookup cost more than
        // the rest of resolving together, for every request of a batch.
        func variable(_ name: String, _ upperCase: String? = nil) -> String? {
            let value = variables[name] ?? upperCase.flatMap { variables[$0] }
            return value.flatMap { $0.isEmpty ? nil : $0 }
        }
        http = variable("http_proxy")
        https = variable("https_proxy", "HTTPS_PROXY")
        all = variable("all_proxy", "ALL_PROXY")
        noProxy = variable("no_proxy", "NO_PROXY")
    }
}

/// TLS files and protocol settings that apply whatever the trust evaluation.
public struct TLSOptions: Sendable, Hashable {
    /// A TLS version af speaks.
    public enum Version: String, Sendable, CaseIterable {
        case tls1_2 = "tls1.2"
        case tls1_3 = "tls1.3"
    }

    /// Client certificate (PEM) for mutual TLS.
    public var clientCertificate: String?
    /// Private key for the client certificate, when not in the same file.
    public var clientKey: String?
    /// Pass phrase for the private key.
    public var clientKeyPassword: String?
    /// The lowest TLS version accepted; nil for TLS 1.2 (TLS 1.0 and 1.1 are never used:
    /// RFC 8996 retired them).
    public var minimumVersion: Version?
    /// The highest TLS version offered; nil for TLS 1.3. TLS 1.2 here reaches a server over
    /// TLS 1.2 even when it speaks 1.3 (to test its TLS 1.2 setup, or to match a peer that
    /// mishandles 1.3).
    public var maximumVersion: Version?
    /// OpenSSL cipher list.
    public var ciphers: String?

    /// Defaults: no client certificate, TLS 1.2 or 1.3, the library's default ciphers.
    public init() {}
}
