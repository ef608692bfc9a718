/// Shared configuration and machinery for the requests it makes: the interceptor, trust
/// evaluation, redirect policy, event monitors, and the thread that runs transfers.
public final class Session: Sendable {
    /// What every request of the session shares.
    public struct Configuration: Sendable {
        /// Adapts descriptions before each attempt and decides on retries.
        public var interceptor: (any RequestInterceptor)?
        /// Per-host evaluators; hosts it does not cover use `defaultTrust`.
        public var trustManager: ServerTrustManager?
        /// The evaluator for https hosts the manager does not cover (nil: standard checks).
        public var defaultTrust: (any ServerTrustEvaluating)?
        /// Whether and how redirects are followed.
        public var redirectPolicy: RedirectPolicy
        /// Observers of every request event.
        public var eventMonitors: [any EventMonitor]

        /// Creates a configuration; the defaults make plain requests with standard TLS checks.
        public init(
            interceptor: (any RequestInterceptor)? = nil,
            trustManager: ServerTrustManager? = nil,
            defaultTrust: (any ServerTrustEvaluating)? = nil,
            redirectPolicy: RedirectPolicy = RedirectPolicy(),
            eventMonitors: [any EventMonitor] = []
        ) {
            self.interceptor = interceptor
            self.trustManager = trustManager
            self.defaultTrust = defaultTrust
            self.redirectPolicy = redirectPolicy
            self.eventMonitors = eventMonitors
        }
    }

    /// What the session was made with.
    public let configuration: Configuration
    let driver: TransferDriver
    /// What carries each attempt: libcurl, unless a test gives another.
    let transport: any AttemptTransport
    /// This session's cookies, and its DNS cache unless it shares another session's thread.
    let share: ShareHandle
    let monitor: CompositeEventMonitor

    /// The requests the session made that have not ended, held weakly: one in place, more in
    /// a table, so that a session making one request at a time (each line of `af batch` has
    /// its own) allocates no table for it.
    private struct LiveRequests: Sendable {
        private struct Entry: Sendable {
            let id: Int
            weak var request: Request?
        }

        private var single: Entry?
        private var table: [Int: Entry] = [:]

        mutating func insert(_ request: Request, id: Int) {
            if single == nil {
                single = Entry(id: id, request: request)
            } else {
                table[id] = Entry(id: id, request: request)
            }
        }

        mutating func remove(_ id: Int) {
            if single?.id == id {
                single = nil
            } else if !table.isEmpty {
                table[id] = nil
            }
        }

        /// Those not freed yet.
        var requests: [Request] {
            [single?.request].compactMap { $0 } + table.values.compactMap(\.request)
        }

        /// Whether every one has been freed.
        var allFreed: Bool {
            single?.request == nil && table.values.allSatisfy { $0.request == nil }
        }
    }

    private struct Lifecycle: Sendable {
        /// The last request number given out.
        var lastID = 0
        var live = LiveRequests()
        var shuttingDown = false
        /// The session no longer uses its driver.
        var released = false
    }

    private let lifecycle = Protected(Lifecycle())

    /// Creates a session with `configuration`.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        driver = TransferDriver()
        driver.retain()
        transport = CurlTransport()
        share = ShareHandle(holdsDNS: true)
        monitor = CompositeEventMonitor(configuration.eventMonitors)
    }

    /// A session whose attempts go through `transport` (an in-memory one in tests): the
    /// request logic runs on the session's thread exactly as with libcurl.
    init(configuration: Configuration, transport: any AttemptTransport) {
        self.configuration = configuration
        driver = TransferDriver()
        driver.retain()
        self.transport = transport
        share = ShareHandle(holdsDNS: true)
        monitor = CompositeEventMonitor(configuration.eventMonitors)
    }

    /// Creates a session with its own configuration and cookies that runs its transfers on
    /// `other`'s thread and multi handle, so that the two reuse each other's connections (and
    /// share HTTP/2 connections as streams) and the multi handle's DNS cache.
    ///
    /// Connections are reused whatever the sessions' trust settings, and names resolved (or
    /// pinned with `TransferOptions.resolve`) for one request serve all, so share only
    /// between sessions that evaluate servers and resolve names the same way.
    public init(configuration: Configuration, sharingConnectionsWith other: Session) {
        self.configuration = configuration
        driver = other.driver
        driver.retain()
        transport = other.transport
        share = ShareHandle(holdsDNS: false)
        monitor = CompositeEventMonitor(configuration.eventMonitors)
    }

    deinit {
        if !lifecycle.read({ $0.released }) { driver.release() }
    }

    /// Whether `shutdown()` was called.
    public var isShutDown: Bool { lifecycle.read { $0.shuttingDown } }

    /// `shutdown()`, then waits until the session's transfer thread has ended and let go of
    /// everything it held, or for at most `timeout` seconds: for a program about to exit
    /// that wants nothing left running behind it. The thread ends once every session using
    /// it has let go, so this waits for the requests still ending and for the other sessions
    /// that share the thread (`init(configuration:sharingConnectionsWith:)`) to be released
    /// too. Returns whether the thread has ended: true at once when none was started (a
    /// session driven with `drive(start:until:)`), false at once when called on it.
    @discardableResult
    public func shutdownAndWait(timeout: Double? = nil) -> Bool {
        shutdown()
        return driver.waitForThread(timeout: timeout)
    }

    /// Cancels every request the session has not finished (they end with
    /// `AFError.cancelled(.sessionShutDown)`), then lets go of the transfer thread: once no
    /// session uses it, it exits and libcurl's handles are freed. Requests made afterwards
    /// end at once with the same error. Dropping the last reference to a session has the
    /// same effect on its thread and handles.
    public func shutdown() {
        let (pending, releaseNow) = lifecycle.write { state -> ([Request], Bool) in
            guard !state.shuttingDown else { return ([], false) }
            state.shuttingDown = true
            let pending = state.live.requests
            if pending.isEmpty {
                state.released = true
                return ([], true)
            }
            return (pending, false)
        }
        for request in pending { request.cancel(.sessionShutDown) }
        if releaseNow { driver.release() }
    }

    /// A request of the session has ended.
    func requestEnded(_ id: Int) {
        let releaseNow = lifecycle.write { state -> Bool in
            state.live.remove(id)
            guard state.shuttingDown, !state.released, state.live.allFreed else { return false }
            state.released = true
            return true
        }
        if releaseNow { driver.release() }
    }

    /// Creates a request; call `resume()` to start it.
    ///
    /// - Parameters:
    ///   - sink: where the final response body goes.
    ///   - validation: statuses that count as success; nil accepts every status.
    public func request(
        _ description: RequestDescription,
        sink: any ResponseBodySink = MemorySink(),
        validation: StatusValidation? = nil
    ) -> Request {
        let id = lifecycle.write { state -> Int in
            state.lastID += 1
            return state.lastID
        }
        let request = Request(id: id, description: description, session: self, sink: sink, validation: validation)
        lifecycle.write { $0.live.insert(request, id: id) }
        return request
    }

    /// The evaluator for a URL's host: nil for plain http and for standard verification.
    func trustEvaluator(for url: HTTPURL) throws(AFError) -> (any ServerTrustEvaluating)? {
        guard url.scheme == "https" else { return nil }
        if let manager = configuration.trustManager, let evaluator = try manager.evaluator(forHost: url.host) {
            return evaluator
        }
        return configuration.defaultTrust
    }

    /// What the certificate of the HTTPS proxy `description` goes through for `url` is
    /// verified with: the default trust's CA bundle and switches (per-host evaluators and
    /// pins are the servers'); the defaults when there is no such proxy.
    func proxyTrustSettings(for description: RequestDescription, url: HTTPURL) -> TrustSettings {
        var settings = TrustSettings()
        if description.options.proxy.httpsProxy(forScheme: url.scheme) != nil {
            configuration.defaultTrust?.prepare(&settings)
        }
        return settings
    }

    /// Drives the session's transfers on the calling thread until `done()` holds, after
    /// calling `start()` there; completion handlers, `async` work and watched descriptors
    /// run on this thread meanwhile. Returns false, having only called `start()`, when the
    /// session's transfer thread already runs (then the caller must wait some other way).
    public func drive(start: () -> Void, until done: () -> Bool) -> Bool {
        driver.drive(start: start, until: done)
    }

    /// Starts the session's transfer thread now, rather than when work first needs it, and
    /// says whether it runs: false when the system refuses another thread (the limit on
    /// processes and threads, `ulimit -u`, or a container's). A caller that can do without
    /// it drives the session itself (`drive`) or does without the session; work given to a
    /// session whose thread cannot start ends the process.
    public func startTransferThread() -> Bool {
        driver.startThreadNow()
    }

    /// Runs `work` on the session's transfer thread, where request logic runs. After
    /// `shutdown()` the thread ends, and work given to it from then on may never run.
    public func async(_ work: @escaping @Sendable () -> Void) {
        driver.submit(.perform(work))
    }

    /// Runs `work` on the transfer thread after `delay` seconds.
    public func asyncAfter(_ delay: Double, _ work: @escaping @Sendable () -> Void) {
        driver.submit(.schedule(delay: delay, work))
    }

    /// Calls `handler` on the transfer thread whenever `fileDescriptor` is readable (or at
    /// its end, or in error); for a signal self-pipe, so a run needs no thread of its own to
    /// notice Ctrl-C, or for input read as it arrives. On the transfer thread it takes
    /// effect at once; from another thread it wakes a running loop to take it up (it starts
    /// no thread: a loop that runs later takes it up before it first waits).
    ///
    /// The handler is kept until `stopWatching(fileDescriptor:)`, or as long as the transfer
    /// thread's loop, which the session keeps: capture the session and its requests weakly,
    /// or they are never freed. A handler that reads to the end must stop watching there,
    /// or the loop calls it again and again for the end it has already seen.
    public func watch(fileDescriptor: Int32, handler: @escaping @Sendable () -> Void) {
        driver.watch(fileDescriptor, handler: handler)
    }

    /// Stops calling the handlers given to `watch(fileDescriptor:handler:)` for
    /// `fileDescriptor`, and lets go of them. On the transfer thread it takes effect at
    /// once; from another thread it returns once a running loop has applied it, so the
    /// handlers are not called after it returns and the descriptor may then be closed (with
    /// no loop running it is applied before the loop first waits). A reader that holds as
    /// much as it may stops watching until it has room again, so that a faster writer
    /// blocks (a full pipe) instead of filling memory; it then calls `watch` again.
    public func stopWatching(fileDescriptor: Int32) {
        driver.watch(fileDescriptor, handler: nil)
    }
}
