internal import CCurl
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How a transfer reports to the request that started it.
protocol TransferDelegate: AnyObject, Sendable {
    /// The kinds of event the request's monitors want: the transfer builds no other.
    var eventInterests: RequestEvent.Interests { get }
    func transfer(_ transfer: any AttemptHandle, emit event: RequestEvent.Kind)
    /// Decides where the body of a response goes once its head is known.
    func transfer(_ transfer: any AttemptHandle, routeFor head: ResponseHead) -> BodyRoute
    func transfer(_ transfer: any AttemptHandle, didFinish outcome: TransferOutcome)
}

/// Where the body of a response goes.
enum BodyRoute {
    /// To the request's sink: this response may end the request.
    case sink(any ResponseBodySink)
    /// Kept only as a short preview: a redirect or other response that will not be final.
    case preview
    /// The response cannot be accepted; the transfer fails with this error.
    case refuse(AFError)
}

/// What one transfer produced.
struct TransferOutcome: Sendable {
    var head: ResponseHead?
    var sentHead: String?
    var metrics: TransferMetrics
    var error: AFError?
    var preview: [UInt8]
    var serverChain: [ServerCertificate]
    /// Trailer fields after the body.
    var trailers = HTTPHeaders()
}

/// One attempt on the wire: a configured libcurl easy handle, its callbacks and what they saw.
///
/// Created on the session's transfer thread and confined to it; the driver runs
/// every callback; that confinement is why it is `@unchecked Sendable`.
final class Transfer: AttemptHandle, @unchecked Sendable {
    static let previewLimit = 16 * 1024

    /// The driver and share handle the attempt runs on (set by `CurlTransport`).
    private var driver: TransferDriver?
    private var share: ShareHandle?

    func attach(driver: TransferDriver, share: ShareHandle) {
        self.driver = driver
        self.share = share
    }

    func start() {
        guard let driver, let share else { return }
        driver.submit(.add(self, share))
    }

    func pause() { driver?.submit(.pause(self)) }

    func unpause() { driver?.submit(.unpause(self)) }

    func cancel(_ reason: AFError.Cancellation) { driver?.submit(.cancel(self, reason)) }

    /// Whether the request paused the transfer (`pause()`), as the driver last applied it;
    /// the driver's thread only. A body that becomes readable then does not resume it.
    var isSuspended = false

    /// The body's pipe had nothing to give at the last read (`TransferProgress.awaitingBody`).
    private var awaitingBody = false

    let description: RequestDescription
    let url: HTTPURL
    let attempt: Int
    let hop: Int
    let easy: EasyHandle
    let trust: (any ServerTrustEvaluating)?
    let trustSettings: TrustSettings
    /// What an HTTPS proxy's certificate is verified with (`Session.proxyTrustSettings`).
    let proxyTrustSettings: TrustSettings
    /// Bytes the sink held before this attempt (a resumed download), for progress.
    let resumedFrom: Int64
    /// Set only for `af pin`: connect, shake hands, stop.
    let connectOnly: Bool
    private let delegate: any TransferDelegate
    /// What the request's monitors want to hear (`emit`).
    let interests: RequestEvent.Interests
    private let reader: BodyReader?
    private let uploadSize: Int64?

    // State touched only by callbacks on the driver thread. Those read and written for every
    // header line and body chunk skip the runtime's dynamic exclusivity check: one thread,
    // one callback at a time, so no two accesses overlap.
    @exclusivity(unchecked) var parser = ResponseHeadParser()
    var head: ResponseHead?
    @exclusivity(unchecked) var route: BodyRoute = .preview
    var preview: [UInt8] = []
    /// Small pieces of the body gathered for the sink (`deliverBody`), handed on together
    /// before the driver next waits (`flushGatheredBody`).
    @exclusivity(unchecked) private var gathered: [UInt8] = []
    /// Pieces smaller than this are gathered: libcurl hands a chunked body over chunk by
    /// chunk, and a server that sends one byte a chunk cost a sink call (and a printer a
    /// write) for every byte, 17 times curl's time for 2 MB.
    static let gatherBelow = 512
    /// Gathered bytes are handed on at this size at the latest.
    static let gatherCapacity = 64 * 1024
    var decodedBytes: Int64 = 0
    /// Body bytes as they came, for a watchdog on another thread (`Request.bodyBytesReceived`).
    private let received = Atomic<Int64>(0)
    var bodyBytesReceived: Int64 { received.load(ordering: .relaxed) }
    /// Bytes of the body the client already has before this answer's range (a resumed
    /// download), counted toward `maxFileSize`.
    var priorBytes: Int64 = 0
    @exclusivity(unchecked) var failure: AFError?
    /// af's own decoder for a gzip or deflate body (see `InflateDecoder`); nil when libcurl
    /// decodes, or nothing does.
    private var inflater: InflateDecoder?
    /// Whether body bytes went through `inflater`.
    private var inflaterStarted = false
    /// A digest challenge (a 401) held until libcurl shows what it made of it: it answers one
    /// it can use by sending the request again within this transfer, and ignores one it cannot
    /// (no nonce, a value past its limits, a second one that does not call the nonce of the
    /// answer stale), whose 401 is then the response.
    private(set) var heldChallenge: ResponseHead?
    /// Digest challenges libcurl answered in this transfer.
    private(set) var challengesAnswered = 0
    /// How many challenges libcurl may answer in one transfer: the first, and two that call
    /// the answer's nonce stale. It answers every one that does, so a server that calls each
    /// nonce stale got requests without end (each 401 adding to one response head, until it
    /// passed libcurl's size limit: some 2,500 requests).
    static let challengeLimit = 3
    var sentHead: String?
    var sentHeadComplete = false
    /// libcurl has read the request body to its end.
    private var bodySent = false
    /// An answer of 300 or more came before a body of unknown length was sent whole: the
    /// body ends at the next read (`headDidComplete`).
    private var bodyEndsEarly = false
    var serverChain: [ServerCertificate] = []
    /// libcurl handed over a TLS context for a new connection of this transfer, which it does
    /// once the connection below TLS is up: the handshake began.
    var handshakeStarted = false
    var handshakeSeen = false
    /// The server asked for a client certificate in the handshake, and this transfer had
    /// none to give (OpenSSL asks for one only then).
    var clientCertificateRequested = false
    var pinResult: String?
    var chainVerified = false
    /// The HTTPS proxy this transfer goes through, whose TLS handshake the handshake hooks
    /// tell from the server's by the name it was sent for.
    private(set) var httpsProxy: HTTPURL?
    /// Sockets libcurl opened for this transfer, and how many of them the last `connected`
    /// event covered (-1: none announced yet).
    var socketsOpened = 0
    var socketsAnnounced = -1
    private var tlsDetails: (version: String, cipher: String, resumed: Bool)?
    /// This transfer's new connection resumed a TLS session (no certificates were exchanged,
    /// so no full handshake was seen).
    var tlsResumed: Bool { !handshakeSeen && tlsDetails?.resumed == true }
    var lastProgress: Double = -1
    var cancellation: AFError.Cancellation?
    private var finished = false
    private let startedAt = Monotonic.now()

    init(
        description: RequestDescription,
        attempt: Int,
        hop: Int,
        trust: (any ServerTrustEvaluating)?,
        proxyTrust: TrustSettings = TrustSettings(),
        resumedFrom: Int64 = 0,
        connectOnly: Bool = false,
        parsedURL: HTTPURL? = nil,
        handles: EasyHandlePool? = nil,
        delegate: any TransferDelegate
    ) throws(AFError) {
        self.description = description
        self.attempt = attempt
        self.hop = hop
        self.trust = trust
        self.resumedFrom = resumedFrom
        self.connectOnly = connectOnly
        self.delegate = delegate
        interests = delegate.eventInterests
        // The caller may have parsed the description's URL already (parsing costs libcurl a
        // dozen allocations).
        if let parsedURL {
            url = parsedURL
        } else {
            url = try HTTPURL(parsing: description.url, pathAsIs: description.options.pathAsIs)
        }
        parser.maxHeaders = description.options.maxHeaders
        parser.origin = url.authority
        var settings = TrustSettings()
        trust?.prepare(&settings)
        trustSettings = settings
        proxyTrustSettings = proxyTrust
        easy = try EasyHandle(pool: handles)
        if description.body.isEmpty || description.method == .head {
            reader = nil
            uploadSize = nil
        } else {
            reader = try BodyReader(body: description.body)
            uploadSize = description.options.chunked ? nil : try description.body.contentLength()
        }
        try configure()
    }

    /// Seconds since this transfer was created.
    var elapsed: Double { Monotonic.now() - startedAt }

    private var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    // MARK: Configuration

    private func configure() throws(AFError) {
        let options = description.options
        try easy.set(CURLOPT_URL, copying: url.string)
        try easy.set(CURLOPT_PROTOCOLS_STR, copying: "http,https")
        try easy.set(CURLOPT_REDIR_PROTOCOLS_STR, copying: "http,https")
        try easy.set(CURLOPT_FOLLOWLOCATION, false)
        try easy.set(CURLOPT_NOSIGNAL, true)
        // A name still resolving when the transfer ends (its timeout, a cancel, Ctrl-C) is
        // left to its resolver thread: libcurl otherwise joins that thread inside
        // curl_multi_perform, which stalls every transfer of the loop until getaddrinfo
        // gives up on its own (5 s a server and attempt by default), as curl's tool avoids.
        try easy.set(CURLOPT_QUICK_EXIT, true)
        try easy.set(CURLOPT_PATH_AS_IS, options.pathAsIs)
        try easy.set(CURLOPT_SUPPRESS_CONNECT_HEADERS, true)
        try easy.set(CURLOPT_BUFFERSIZE, 256 * 1024)
        try easy.set(CURLOPT_TCP_KEEPALIVE, true)
        if let timeout = options.timeout { try easy.set(CURLOPT_TIMEOUT_MS, Self.milliseconds(timeout)) }
        if let timeout = options.connectTimeout { try easy.set(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(timeout)) }
        try easy.set(CURLOPT_HTTP_VERSION, afcurl_http_version(Self.httpVersionCode(options.httpVersion)))
        if options.cookies { try easy.set(CURLOPT_COOKIEFILE, copying: "") }
        if options.httpVersion == .http2PriorKnowledge, url.scheme == "http", !CurlRuntime.reusesPriorKnowledgeConnections {
            // libcurl 7.x set its HTTP/2 layer up once more on a reused cleartext
            // prior-knowledge connection and failed ("Error in the HTTP2 framing layer"), so the
            // second request on one, in turn or as a stream beside the first, failed: a
            // connection each, not kept.
            try easy.set(CURLOPT_FRESH_CONNECT, true)
            try easy.set(CURLOPT_FORBID_REUSE, true)
        } else if options.waitsForMultiplexing {
            try easy.set(CURLOPT_PIPEWAIT, true)
        }
        if let limit = options.maxFileSize { try easy.set(CURLOPT_MAXFILESIZE_LARGE, offset: limit) }
        try configureNetwork(options)
        try configureMethodAndBody()
        try configureHeaders()
        try configureTLS()
        if connectOnly { try easy.set(CURLOPT_CONNECT_ONLY, 1) }
        try installCallbacks()
    }

    private static func milliseconds(_ seconds: Double) -> Int {
        Saturating.milliseconds(seconds, minimum: 1)
    }

    private static func httpVersionCode(_ version: TransferOptions.HTTPVersion) -> Int32 {
        switch version {
        case .automatic: return 20
        case .http1_0: return 10
        case .http1_1: return 11
        case .http2: return 20
        case .http2PriorKnowledge: return 21
        }
    }

    private func configureNetwork(_ options: TransferOptions) throws(AFError) {
        try easy.set(CURLOPT_RESOLVE, list: options.resolve)
        if let path = options.unixSocketPath {
            if let problem = TransferOptions.unixSocketPathProblem(path) {
                throw .invalidRequest(reason: "cannot connect to unix socket '\(MessageQuote.capped(path))': \(problem)")
            }
            try easy.set(CURLOPT_UNIX_SOCKET_PATH, copying: path)
        }
        if let interface = options.interface { try easy.set(CURLOPT_INTERFACE, copying: interface) }
        switch options.ipVersion {
        case .any: break
        case .v4: try easy.set(CURLOPT_IPRESOLVE, Int(CURL_IPRESOLVE_V4))
        case .v6: try easy.set(CURLOPT_IPRESOLVE, Int(CURL_IPRESOLVE_V6))
        }
        if let proxy = options.proxy.explicitProxy(forScheme: url.scheme) {
            try easy.set(CURLOPT_PROXY, copying: proxy)
        } else if !options.proxy.useEnvironment {
            try easy.set(CURLOPT_PROXY, copying: "")
        }
        if let noProxy = options.proxy.noProxy { try easy.set(CURLOPT_NOPROXY, copying: IDNA.asciiHostList(noProxy)) }
    }

    private func configureMethodAndBody() throws(AFError) {
        let method = description.method
        if method == .head {
            try easy.set(CURLOPT_NOBODY, true)
            return
        }
        guard reader != nil else {
            if method == .get {
                try easy.set(CURLOPT_HTTPGET, true)
            } else if method == .post {
                try easy.set(CURLOPT_POST, true)
                try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: 0)
                try easy.set(CURLOPT_COPYPOSTFIELDS, copying: "")
            } else {
                try easy.set(CURLOPT_CUSTOMREQUEST, copying: method.rawValue)
            }
            return
        }
        if uploadSize == nil, description.options.httpVersion == .http1_0 {
            // libcurl said "Chunky upload is not supported by HTTP 1.0" once connected.
            throw .invalidRequest(reason: "HTTP/1.0 has no chunked encoding, so a body must be sent with its length, and this one's is not known (a stream, or chunked asked for); use HTTP/1.1 or a body of known length")
        }
        try easy.set(CURLOPT_POST, true)
        if method != .post { try easy.set(CURLOPT_CUSTOMREQUEST, copying: method.rawValue) }
        try easy.set(CURLOPT_POSTFIELDSIZE_LARGE, offset: uploadSize ?? -1)
        // A large body (or one of unknown length) is read and sent in blocks as large as half
        // the CPU's L2 cache allows; small ones keep libcurl's 64 KiB.
        if (uploadSize ?? Int64.max) > Self.largeBody {
            try easy.set(CURLOPT_UPLOAD_BUFFERSIZE, Self.uploadBlock)
        }
    }

    /// Bodies larger than this get `uploadBlock`-sized reads and sends.
    static let largeBody: Int64 = 1 << 20

    /// The block a large body is read and sent in: half the L2 cache, from 64 KiB (libcurl's
    /// default) to 512 KiB. Each block costs a `read`, a `sendto` and two `poll` calls, and
    /// fewer, larger blocks measured much faster (1 GiB to upload-sink.py on a 1 MiB L2: 64 KiB
    /// 504 ms, 256 KiB 428 ms, 512 KiB 373 ms, 20 interleaved runs); but the block must stay in
    /// the cache between the copy from the file and the copy into the socket, or every byte
    /// crosses memory twice (on a machine with a smaller cache, 512 KiB measured slower than
    /// 64 KiB: Benchmarks/README.md). `sysconf` reads the size from `cpuid`, once.
    static let uploadBlock: Int = {
        let level2 = sysconf(Int32(_SC_LEVEL2_CACHE_SIZE))
        guard level2 > 0 else { return 64 * 1024 }
        return min(max(level2 / 2, 64 * 1024), 512 * 1024)
    }()

    /// The header lines for libcurl: the description's headers in order, then removals of
    /// headers libcurl would otherwise add by itself.
    private func configureHeaders() throws(AFError) {
        let options = description.options
        var cookies: [String] = []
        try easy.set(CURLOPT_HTTPHEADER) { (lines: inout CurlLines) throws(AFError) in
            // libcurl adds Expect, Content-Type (for a body) and Accept of its own unless they
            // are given or removed; each line is looked at once for them (this runs for every
            // request).
            var handled = (expect: false, contentType: false, accept: false)
            func note(_ name: HTTPHeaders.Name) {
                if name == .expect { handled.expect = true } else if name == .contentType { handled.contentType = true } else if name == .accept { handled.accept = true }
            }
            for header in description.headers {
                try Self.checkHeader(header)
                note(header.name)
                // With the cookie engine on, a Cookie header given joins the cookies the
                // engine sends (a session's, a redirect's) on their line: libcurl would send
                // its own Cookie line beside it, and RFC 6265 §5.4 allows one, which is all
                // many servers read.
                if options.cookies, !header.value.isEmpty, header.name == .cookie {
                    cookies.append(header.value)
                    continue
                }
                if header.value.isEmpty {
                    lines.append(header.name.rawValue, ";", "")
                } else {
                    lines.append(header.name.rawValue, ": ", header.value)
                }
            }
            for name in description.suppressedHeaders where !description.headers.contains(name) {
                note(name)
                lines.append(name.rawValue, ":", "")
            }
            if !handled.expect { lines.append("Expect:") }
            // A POST without a body would get libcurl's `application/x-www-form-urlencoded`,
            // which no one asked for (curl -X POST sends none either).
            if reader != nil || description.method == .post, !handled.contentType { lines.append("Content-Type:") }
            if !handled.accept { lines.append("Accept:") }
        }
        if !cookies.isEmpty { try easy.set(CURLOPT_COOKIE, copying: cookies.joined(separator: "; ")) }
        if let encodings = description.headers.value(for: .acceptEncoding), description.options.decodeContent,
           CurlRuntime.decodesEveryCoding(in: encodings) {
            try easy.set(CURLOPT_ACCEPT_ENCODING, copying: encodings)
        }
        try easy.set(CURLOPT_HTTP_CONTENT_DECODING, description.options.decodeContent)
        if let credentials = description.challengeCredentials, credentials.scheme == .digest {
            try easy.set(CURLOPT_HTTPAUTH, Int(afcurl_auth_digest()))
            try easy.set(CURLOPT_USERNAME, copying: credentials.user)
            try easy.set(CURLOPT_PASSWORD, copying: credentials.password)
        }
    }

    /// The TLS of an HTTPS proxy's connection: verified with the session's default trust
    /// (its CA bundle, or not at all), TLS 1.2 at least; pins and trust evaluators judge the
    /// server alone. libcurl otherwise verified the proxy against its built-in bundle,
    /// whatever the trust settings said, and the handshake hooks judged the proxy's chain as
    /// the server's.
    private func configureProxyTLS(_ proxy: String) throws(AFError) {
        httpsProxy = try? HTTPURL(parsing: proxy)
        try easy.set(CURLOPT_PROXY_SSL_VERIFYPEER, proxyTrustSettings.verifyPeer)
        try easy.set(CURLOPT_PROXY_SSL_VERIFYHOST, proxyTrustSettings.verifyHost ? 2 : 0)
        if let bundle = proxyTrustSettings.caBundle {
            if FileIO.isCertificateDirectory(bundle) {
                try easy.set(CURLOPT_PROXY_CAPATH, copying: bundle)
                try easy.set(CURLOPT_PROXY_CAINFO, copying: nil)
            } else {
                try easy.set(CURLOPT_PROXY_CAINFO, copying: bundle)
            }
        }
        try easy.set(CURLOPT_PROXY_SSLVERSION, afcurl_sslversion(12, 0))
    }

    /// Refuses header names and values that would smuggle extra lines into the request.
    static func checkHeader(_ header: HTTPHeader) throws(AFError) {
        let name = header.name.rawValue
        // In place where the bytes are contiguous: this runs for every header of every request.
        func has(_ text: String, _ bad: (UInt8) -> Bool) -> Bool {
            text.utf8.withContiguousStorageIfAvailable { $0.contains(where: bad) } ?? text.utf8.contains(where: bad)
        }
        if name.isEmpty || has(name, { $0 <= 32 || $0 == 58 || $0 >= 127 }) {
            throw .invalidRequest(reason: "invalid header name '\(name)'")
        }
        if let problem = header.valueProblem {
            throw .invalidRequest(reason: "header '\(name)' \(problem)")
        }
    }

    private func configureTLS() throws(AFError) {
        if let proxy = description.options.proxy.httpsProxy(forScheme: url.scheme) { try configureProxyTLS(proxy) }
        guard url.scheme == "https" else { return }
        let tls = description.options.tls
        try easy.set(CURLOPT_SSL_VERIFYPEER, trustSettings.verifyPeer)
        try easy.set(CURLOPT_SSL_VERIFYHOST, trustSettings.verifyHost ? 2 : 0)
        if let bundle = trustSettings.caBundle {
            let checked = trustSettings.checkedBundle.flatMap { $0.path == bundle ? $0.isDirectory : nil }
            if checked ?? FileIO.isCertificateDirectory(bundle) {
                // A directory of hashed certificates (openssl rehash), or a list of them, and
                // those CAs alone: a CA path and no CA file.
                try easy.set(CURLOPT_CAPATH, copying: bundle)
                try easy.set(CURLOPT_CAINFO, copying: nil)
            } else {
                try easy.set(CURLOPT_CAINFO, copying: bundle)
            }
        }
        if let crl = trustSettings.crlFile { try easy.set(CURLOPT_CRLFILE, copying: crl) }
        if trustSettings.requireStapledOCSP { try easy.set(CURLOPT_SSL_VERIFYSTATUS, true) }
        // TLS 1.2 at least unless asked for 1.3: this libcurl's own floor is TLS 1.0, which
        // RFC 8996 retired with 1.1 (libcurl 8.16 raised its floor to 1.2 too); at most what
        // was asked for, else the highest both sides speak.
        let number = { (version: TLSOptions.Version) -> Int32 in version == .tls1_3 ? 13 : 12 }
        try easy.set(CURLOPT_SSLVERSION, afcurl_sslversion(number(tls.minimumVersion ?? .tls1_2), tls.maximumVersion.map(number) ?? 0))
        if let ciphers = tls.ciphers {
            // OpenSSL configures TLS 1.3 suites (TLS_…) apart from the older cipher list.
            let selection = CipherSelection(ciphers)
            if let classic = selection.classic { try easy.set(CURLOPT_SSL_CIPHER_LIST, copying: classic) }
            if let modern = selection.modern { try easy.set(CURLOPT_TLS13_CIPHERS, copying: modern) }
        }
        if let cert = tls.clientCertificate { try easy.set(CURLOPT_SSLCERT, copying: cert) }
        if let key = tls.clientKey { try easy.set(CURLOPT_SSLKEY, copying: key) }
        if tls.clientCertificate != nil || tls.clientKey != nil {
            // Always a pass phrase, empty when none was given: without one OpenSSL asks on the
            // terminal for an encrypted key's, which stops a script (or prompts mid-batch).
            try easy.set(CURLOPT_KEYPASSWD, copying: tls.clientKeyPassword ?? "")
        }
        try easy.set(CURLOPT_SSL_SESSIONID_CACHE, resumesTLSSessions)
        try easy.set(CURLOPT_SSL_CTX_DATA, pointer: context)
        try check(afcurl_easy_setopt_sslctx_cb(easy.raw, TLSHandshake.contextCallback))
    }

    /// Whether this transfer may resume (and offer for resumption) a TLS session of its
    /// driver's earlier connections. A resumed handshake skips certificate verification, so
    /// only where nothing is checked beyond what libcurl keys its session cache by (CA file,
    /// verification switches, client certificate, versions, ciphers): never with pins or
    /// anchors, revocation checks, or for a certificate probe, which must see a full chain.
    private var resumesTLSSessions: Bool {
        guard !connectOnly, trust?.allowsSessionResumption ?? true else { return false }
        return trustSettings.anchors.isEmpty && trustSettings.crlFile == nil && !trustSettings.requireStapledOCSP
    }

    private func installCallbacks() throws(AFError) {
        try easy.set(CURLOPT_PRIVATE, pointer: context)
        try easy.set(CURLOPT_HEADERDATA, pointer: context)
        try check(afcurl_easy_setopt_data_cb(easy.raw, CURLOPT_HEADERFUNCTION, TransferCallbacks.header))
        try easy.set(CURLOPT_WRITEDATA, pointer: context)
        try check(afcurl_easy_setopt_data_cb(easy.raw, CURLOPT_WRITEFUNCTION, TransferCallbacks.write))
        if reader != nil {
            try easy.set(CURLOPT_READDATA, pointer: context)
            try check(afcurl_easy_setopt_data_cb(easy.raw, CURLOPT_READFUNCTION, TransferCallbacks.read))
            try easy.set(CURLOPT_SEEKDATA, pointer: context)
            try check(afcurl_easy_setopt_seek_cb(easy.raw, TransferCallbacks.seek))
        }
        // libcurl calls the progress callback about eleven times for a small GET. Only a
        // monitor that wants progress needs it: a failure is raised inside the callback that
        // then tells libcurl to stop, and a cancellation takes the handle out of the multi.
        if interests.contains(.progress) {
            try easy.set(CURLOPT_NOPROGRESS, false)
            try easy.set(CURLOPT_XFERINFODATA, pointer: context)
            try check(afcurl_easy_setopt_xferinfo_cb(easy.raw, TransferCallbacks.progress))
        }
        if description.options.recordsSentHead || description.options.logsTransport {
            try easy.set(CURLOPT_VERBOSE, true)
            try easy.set(CURLOPT_DEBUGDATA, pointer: context)
            try check(afcurl_easy_setopt_debug_cb(easy.raw, TransferCallbacks.debug))
        }
        try easy.set(CURLOPT_PREREQDATA, pointer: context)
        try check(afcurl_easy_setopt_prereq_cb(easy.raw, TransferCallbacks.prerequest))
        try easy.set(CURLOPT_OPENSOCKETDATA, pointer: context)
        try check(afcurl_easy_setopt_opensocket_cb(easy.raw, TransferCallbacks.openSocket))
    }

    private func check(_ code: CURLcode) throws(AFError) {
        guard code == CURLE_OK else {
            throw .transport(TransportFailure(kind: .other, message: "libcurl refused a callback: \(String(cString: curl_easy_strerror(code)))", curlCode: Int(code.rawValue)))
        }
    }

    // MARK: Events from callbacks

    /// Tells the request's monitors, when they want `interest`; `kind` is built only then.
    func emit(_ interest: RequestEvent.Interests, _ kind: @autoclosure () -> RequestEvent.Kind) {
        guard interests.contains(interest) else { return }
        delegate.transfer(self, emit: kind())
    }

    /// Records the first failure raised inside a callback; libcurl is then told to stop.
    func fail(_ error: AFError) {
        if failure == nil { failure = error }
    }

    /// From libcurl's read callback: the next bytes of the body, 0 at its end, libcurl's
    /// pause code when a pipe has nothing yet (the driver resumes sending once it has), or
    /// nil on a failure.
    func readBody(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard let reader else { return 0 }
        if bodyEndsEarly {
            bodySent = true
            awaitingBody = false
            return 0
        }
        do {
            // Only a started transfer is read, and starting one needs its driver.
            switch try reader.readAvailable(into: buffer) {
            case .bytes(let count):
                if count == 0 { bodySent = true }
                awaitingBody = false
                return count
            case .waiting(let fd):
                driver?.awaitBody(on: fd, for: self)
                if !awaitingBody {
                    // Said at once: libcurl reports no progress while nothing moves.
                    awaitingBody = true
                    emit(.progress, .progress(currentProgress()))
                }
                return afcurl_readfunc_pause()
            }
        } catch {
            fail(error)
            return nil
        }
    }

    func rewindBody() -> Bool {
        bodySent = false
        return reader?.rewind() ?? true
    }

    /// Whether the request has a body that libcurl had not read to its end: a failure to
    /// send after the response head came is then the server closing the connection on an
    /// upload it answered early.
    var isStillSendingBody: Bool { reader != nil && !bodySent }

    /// Whether `head` may be a digest challenge that libcurl answers by itself inside this
    /// transfer (it sends the request again with the computed `Authorization`); it is then held
    /// until `settleChallenge(answered:)` says whether it was, or was the response after all.
    /// Every such 401 is held: libcurl answers the first, and each later one that calls the
    /// nonce of the answer stale (a second 401 without that means the credentials were
    /// refused, and its body settles it as the response). Taking a stale one for the
    /// response had printed its head over the body of the 200 that came after it.
    func holdsChallenge(_ head: ResponseHead) -> Bool {
        guard head.status == 401, description.challengeCredentials?.scheme == .digest,
              head.headers.values(for: .wwwAuthenticate).contains(where: { $0.lowercased().hasPrefix("digest") })
        else { return false }
        heldChallenge = head
        return true
    }

    /// Settles a held challenge: `answered` when libcurl sends the request again, otherwise
    /// (body bytes, or the end of the transfer, come first) the challenge is the response.
    func settleChallenge(answered: Bool) {
        guard let held = heldChallenge else { return }
        heldChallenge = nil
        if answered {
            challengesAnswered += 1
            emit(.challengeAnswered, .challengeAnswered(attempt: attempt, held))
        } else {
            headDidComplete(held)
        }
    }

    /// Called when the blank line ends a final (non-1xx) response head.
    func headDidComplete(_ received: ResponseHead) {
        flushGatheredBody()
        head = received
        // An answer of 300 or more before a body of unknown length (sent chunked) went whole
        // ends the body, as libcurl stops sending on such an answer itself — but only while it
        // sends: a body paused for its next bytes (a pipe whose writer is slow or never ends,
        // such as a log followed with `tail -f`) held the finished exchange, and its client,
        // until the writer closed. A last empty chunk ends it properly; an answer below 300 (a
        // server that answers at once and reads on) leaves the body to its end.
        if received.status >= 300, reader != nil, uploadSize == nil, !bodySent {
            bodyEndsEarly = true
            if awaitingBody { driver?.submit(.resumeBody(self)) }
        }
        settleDecoding(received)
        emit(.responseHead, .responseHead(attempt: attempt, received))
        route = delegate.transfer(self, routeFor: received)
        if case .refuse(let error) = route { fail(error) }
        if case .sink = route, let error = resumedSizeProblem(received) {
            route = .preview
            fail(error)
        }
        if case .sink(let sink) = route {
            do {
                try sink.open(received, attempt: attempt)
            } catch {
                route = .preview
                fail(error)
            }
        }
    }

    /// Decides who decodes the body, once its head is complete. libcurl reads its decoding
    /// switch as each body chunk arrives (7.x), so turning it off here hands af the raw bytes:
    ///
    /// - A coding libcurl cannot decode (servers send `Content-Encoding: utf-8` or `binary`)
    ///   would fail the transfer at the first body byte and lose the body; it passes as it
    ///   came instead, as HTTPie and browsers show it.
    /// - A gzip or deflate body is decoded in af instead of libcurl, so that data that stops
    ///   short is noticed, over HTTP/1 or HTTP/2: a message or stream that ends properly can
    ///   still carry compressed data cut short. Should a libcurl decode gzip anyway, the
    ///   first bytes are no gzip member and af passes them on as they are; deflate, whose
    ///   raw form has no marks to tell, is taken over only where the switch is known to work.
    private func settleDecoding(_ received: ResponseHead) {
        inflater = nil
        inflaterStarted = false
        // Every Content-Encoding header, as libcurl stacks its decoders over all of them: taking
        // the first alone read `gzip` and `gzip` in two headers as one layer of gzip.
        // (Most responses have none: looked for once before all are gathered.)
        guard description.options.decodeContent, let first = received.headers.value(for: .contentEncoding) else { return }
        let codings = received.headers.values(for: .contentEncoding)
        let encoding = codings.count == 1 ? first : codings.joined(separator: ", ")
        if !CurlRuntime.decodesEveryCoding(in: encoding) {
            if CurlRuntime.decodingSwitchIsLive { _ = try? easy.set(CURLOPT_HTTP_CONTENT_DECODING, false) }
            return
        }
        let coding: InflateDecoder.Coding
        switch encoding.trimmingCharacters(in: " \t").lowercased() {
        case "gzip", "x-gzip": coding = .gzip
        case "deflate" where CurlRuntime.decodingSwitchIsLive: coding = .deflate
        default: return
        }
        guard (try? easy.set(CURLOPT_HTTP_CONTENT_DECODING, false)) != nil else { return }
        inflater = InflateDecoder(coding)
    }

    /// Receives body bytes as libcurl delivers them; false stops the transfer.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        received.add(Int64(bytes.count), ordering: .relaxed)
        if head == nil {
            // A digest challenge libcurl did not answer: its body is the response's.
            settleChallenge(answered: false)
            if head == nil {
                fail(.transport(TransportFailure(kind: .malformedResponse, message: "\(url.authority) sent a body without a response head")))
            }
        }
        guard failure == nil else { return false }
        guard let decoder = inflater, !bytes.isEmpty else { return deliverBody(bytes) }
        if !inflaterStarted {
            inflaterStarted = true
            if !CurlRuntime.decodingSwitchIsLive, !InflateDecoder.startsMember(bytes) {
                // This libcurl decoded the body already.
                inflater = nil
                inflaterStarted = false
                return deliverBody(bytes)
            }
        }
        do throws(InflateDecoder.Failure) {
            return try decoder.decode(bytes) { deliverBody($0) }
        } catch {
            let reason: String
            switch error {
            case .corrupt(let detail): reason = "the body is not valid \(decoder.coding.name) data (\(detail))"
            case .garbageAfterEnd: reason = "there are bytes after the end of the \(decoder.coding.name) data"
            }
            fail(.transport(TransportFailure(kind: .malformedResponse, message: "malformed response from \(url.authority): \(reason)")))
            return false
        }
    }

    /// The coding of a compressed body that ended early, when af decoded it: the connection
    /// closed (or the `Content-Length` or the chunks ran out) inside the compressed data.
    private var truncatedCoding: String? {
        guard let inflater, inflaterStarted, !inflater.ended else { return nil }
        return inflater.coding.name
    }

    /// A body that continues one the client has `N` bytes of (it asked for `Range: bytes=N-`
    /// and the answer starts there) makes a file of the resource's size: `maxFileSize` bounds
    /// that, not the part this answer brings, or resuming would save a file of any size.
    private func resumedSizeProblem(_ received: ResponseHead) -> AFError? {
        priorBytes = 0
        guard received.status == 206, let limit = description.options.maxFileSize,
              let start = ByteRanges.restStart(description.headers.value(for: .range)),
              let range = ByteRanges.contentRange(received.headers.value(for: .contentRange)), range.first == start
        else { return nil }
        priorBytes = start
        let size = range.total ?? (range.last < Int64.max ? range.last + 1 : range.last)
        guard size > limit else { return nil }
        return .transport(TransportFailure(
            kind: .limitExceeded, message: "the resumed body makes a file of \(size) bytes, over the size limit of \(limit) bytes", cause: .bodyTooLarge(limit: limit)
        ))
    }

    /// Delivers decoded body bytes to the route; false stops the transfer.
    private func deliverBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard failure == nil else { return false }
        decodedBytes += Int64(bytes.count)
        if let limit = description.options.maxFileSize, decodedBytes > limit - min(priorBytes, limit) {
            fail(.transport(TransportFailure(
                kind: .limitExceeded, message: "the response body exceeds the size limit of \(limit) bytes", cause: .bodyTooLarge(limit: limit)
            )))
            return false
        }
        if decodedBytes > description.options.decompressionAllowance {
            let wire = max(easy.offset(CURLINFO_SIZE_DOWNLOAD_T), 1)
            let ratio = description.options.maxDecompressionRatio
            if decodedBytes / wire > ratio {
                fail(.transport(TransportFailure(
                    kind: .limitExceeded,
                    message: "the response inflates more than \(ratio)× (\(Format.bytes(wire)) became \(Format.bytes(decodedBytes)) as it was decoded); refusing a likely decompression bomb",
                    cause: .inflatedTooFar(ratio: ratio)
                )))
                return false
            }
        }
        switch route {
        case .sink(let sink):
            if bytes.count < Self.gatherBelow {
                // Grown as pieces come, not reserved: a small body (a short JSON answer, one
                // piece) keeps a small buffer, however many transfers a batch has in flight.
                if gathered.isEmpty { driver?.noteGathering(self) }
                gathered.append(contentsOf: bytes)
                return gathered.count < Self.gatherCapacity || flushGatheredBody()
            }
            guard flushGatheredBody() else { return false }
            do {
                try sink.write(bytes)
            } catch {
                fail(error)
                return false
            }
        case .preview:
            let room = Self.previewLimit - preview.count
            if room > 0 { preview.append(contentsOf: bytes.prefix(room)) }
        case .refuse:
            return false
        }
        return true
    }

    /// Hands the gathered pieces to the sink, as one write; false when that failed (the
    /// failure is recorded). The driver calls it after each turn of libcurl's work for the
    /// transfers that gathered (`TransferDriver.noteGathering`), before it waits, so that
    /// nothing gathered waits on the network; the head of another answer and the end of the
    /// transfer call it first too.
    @discardableResult
    func flushGatheredBody() -> Bool {
        guard !gathered.isEmpty else { return failure == nil }
        defer { gathered.removeAll(keepingCapacity: true) }
        guard failure == nil, case .sink(let sink) = route else { return false }
        var thrown: AFError?
        gathered.withUnsafeBytes { bytes in
            do throws(AFError) {
                try sink.write(bytes)
            } catch {
                thrown = error
            }
        }
        if let thrown {
            fail(thrown)
            return false
        }
        return true
    }

    /// From libcurl's progress callback, which is installed only when a monitor wants
    /// progress (`installCallbacks`); reported at most every 50 ms.
    func reportProgress(received: Int64, expectedReceive: Int64, sent: Int64, expectedSend: Int64) {
        let now = elapsed
        guard now - lastProgress >= 0.05 else { return }
        lastProgress = now
        emit(.progress, .progress(TransferProgress(
            received: received,
            expectedToReceive: expectedReceive > 0 ? expectedReceive : nil,
            sent: sent,
            expectedToSend: expectedSend > 0 ? expectedSend : uploadSize,
            resumedFrom: resumedFrom,
            awaitingBody: awaitingBody
        )))
    }

    // MARK: Completion

    /// Called by the driver once libcurl is done with the handle (or it was cancelled).
    func finish(code: CURLcode) {
        guard !finished else { return }
        finished = true
        flushGatheredBody()
        if code == CURLE_OK, cancellation == nil, failure == nil {
            // libcurl ended the transfer on the challenge it did not answer.
            settleChallenge(answered: false)
        }
        let metrics = collectMetrics()
        var error: AFError?
        if let cancellation {
            error = .cancelled(cancellation)
        } else if let failure {
            error = failure
        } else if code != CURLE_OK {
            error = CurlErrorMapping.error(for: code, transfer: self)
        } else if let coding = truncatedCoding {
            error = .transport(TransportFailure(
                kind: .truncatedBody, message: "the \(coding) body from \(url.authority) ends before the \(coding) data does (the response was cut short)"
            ))
        } else if head == nil, !connectOnly {
            error = .transport(TransportFailure(kind: .malformedResponse, message: "\(url.authority) sent no response head"))
        }
        awaitingBody = false
        if head != nil { emit(.progress, .progress(currentProgress())) }
        let outcome = TransferOutcome(
            head: head,
            sentHead: sentHead,
            metrics: metrics,
            error: error,
            preview: preview,
            serverChain: serverChain,
            // Those of a complete exchange only: not the ones kept before too many came.
            trailers: error == nil ? parser.trailers : HTTPHeaders()
        )
        delegate.transfer(self, didFinish: outcome)
    }

    /// Progress as libcurl counts it now.
    private func currentProgress() -> TransferProgress {
        let expected = easy.offset(CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
        return TransferProgress(
            received: easy.offset(CURLINFO_SIZE_DOWNLOAD_T),
            expectedToReceive: expected > 0 ? expected : nil,
            sent: easy.offset(CURLINFO_SIZE_UPLOAD_T),
            expectedToSend: uploadSize,
            resumedFrom: resumedFrom,
            awaitingBody: awaitingBody
        )
    }

    private func collectMetrics() -> TransferMetrics {
        var metrics = TransferMetrics()
        switch easy.long(CURLINFO_HTTP_VERSION) {
        case CURL_HTTP_VERSION_1_0: metrics.httpVersion = "HTTP/1.0"
        case CURL_HTTP_VERSION_1_1: metrics.httpVersion = "HTTP/1.1"
        case CURL_HTTP_VERSION_2_0: metrics.httpVersion = "HTTP/2"
        case CURL_HTTP_VERSION_3: metrics.httpVersion = "HTTP/3"
        default: metrics.httpVersion = head?.httpVersion
        }
        metrics.remoteAddress = easy.string(CURLINFO_PRIMARY_IP).flatMap { $0.isEmpty ? nil : $0 }
        let remotePort = easy.long(CURLINFO_PRIMARY_PORT)
        metrics.remotePort = remotePort > 0 ? remotePort : nil
        metrics.localAddress = easy.string(CURLINFO_LOCAL_IP).flatMap { $0.isEmpty ? nil : $0 }
        let localPort = easy.long(CURLINFO_LOCAL_PORT)
        metrics.localPort = localPort > 0 ? localPort : nil
        metrics.nameLookup = easy.seconds(CURLINFO_NAMELOOKUP_TIME_T)
        metrics.connect = easy.seconds(CURLINFO_CONNECT_TIME_T)
        metrics.tlsDone = easy.seconds(CURLINFO_APPCONNECT_TIME_T)
        metrics.pretransfer = easy.seconds(CURLINFO_PRETRANSFER_TIME_T)
        metrics.firstByte = easy.seconds(CURLINFO_STARTTRANSFER_TIME_T)
        metrics.total = easy.seconds(CURLINFO_TOTAL_TIME_T)
        metrics.bytesSent = Int64(easy.long(CURLINFO_REQUEST_SIZE)) + easy.offset(CURLINFO_SIZE_UPLOAD_T)
        metrics.bytesReceived = Int64(easy.long(CURLINFO_HEADER_SIZE)) + easy.offset(CURLINFO_SIZE_DOWNLOAD_T)
        metrics.uploadSpeed = Double(easy.offset(CURLINFO_SPEED_UPLOAD_T))
        metrics.downloadSpeed = Double(easy.offset(CURLINFO_SPEED_DOWNLOAD_T))
        metrics.newConnections = easy.long(CURLINFO_NUM_CONNECTS)
        if handshakeSeen || tlsResumed { metrics.tls = tlsReport() }
        return metrics
    }

    /// Whether the connection this transfer just opened resumed a TLS session; looked at once
    /// the connection is up (a resumed handshake runs no verification callback).
    func detectResumedTLSSession() -> Bool {
        guard !handshakeSeen, url.scheme == "https" else { return false }
        return connectionTLSDetails().resumed
    }

    /// The connection's TLS details, read once while the connection is up and kept: after
    /// the transfer libcurl no longer hands out the TLS session.
    private func connectionTLSDetails() -> (version: String, cipher: String, resumed: Bool) {
        if let tlsDetails { return tlsDetails }
        let details = TLSHandshake.sessionDetails(of: easy)
        tlsDetails = details
        return details
    }

    /// Protocol and cipher of the connection's TLS session. A resumed session was verified
    /// when it was first negotiated, under the same verification settings.
    func tlsReport() -> TLSReport {
        let details = connectionTLSDetails()
        let verified = chainVerified || (tlsResumed && trustSettings.verifyPeer)
        return TLSReport(protocolVersion: details.version, cipher: details.cipher, pinResult: pinResult, verified: verified, resumed: tlsResumed)
    }
}
