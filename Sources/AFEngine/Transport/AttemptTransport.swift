/// One attempt as the request logic sees it, whatever carries it: libcurl (`Transfer`), or
/// an in-memory transport in tests. The request starts, pauses, resumes and cancels it, and
/// learns what it saw through its `TransferDelegate`.
protocol AttemptHandle: AnyObject, Sendable {
    var description: RequestDescription { get }
    var url: HTTPURL { get }
    var attempt: Int { get }
    var hop: Int { get }
    /// Response body bytes received so far, as they came (before af decodes a compressed
    /// body); read from any thread.
    var bodyBytesReceived: Int64 { get }
    /// Puts the attempt on the wire.
    func start()
    func pause()
    func unpause()
    /// Stops the attempt; its outcome still arrives, once.
    func cancel(_ reason: AFError.Cancellation)
}

/// Makes attempts. The request logic (state machine, retries, redirects, validation,
/// trust decisions, where a body goes) runs the same over any transport, so it can be
/// tested without sockets.
protocol AttemptTransport: Sendable {
    func makeAttempt(
        _ description: RequestDescription, url: HTTPURL, attempt: Int, hop: Int,
        trust: (any ServerTrustEvaluating)?, session: Session, delegate: any TransferDelegate
    ) throws(AFError) -> any AttemptHandle
}

/// libcurl, on the session's driver thread: the transport every session uses unless a test
/// gives it another.
struct CurlTransport: AttemptTransport {
    func makeAttempt(
        _ description: RequestDescription, url: HTTPURL, attempt: Int, hop: Int,
        trust: (any ServerTrustEvaluating)?, session: Session, delegate: any TransferDelegate
    ) throws(AFError) -> any AttemptHandle {
        let proxyTrust = session.proxyTrustSettings(for: description, url: url)
        let transfer = try Transfer(description: description, attempt: attempt, hop: hop, trust: trust, proxyTrust: proxyTrust,
                                    parsedURL: url, handles: session.driver.easyHandles, delegate: delegate)
        transfer.attach(driver: session.driver, share: session.share)
        return transfer
    }
}
