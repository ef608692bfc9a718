extension Session {
    /// Connects to an https URL, completes the TLS handshake and returns the certificate
    /// chain as the server sent it, with the error, if any (the chain is returned even when
    /// verification fails, so that a user can inspect it).
    public func fetchCertificateChain(url: String, options: TransferOptions) -> ([ServerCertificate], AFError?) {
        probeCertificateChain(url: url, options: options).wait()
    }

    /// Starts what `fetchCertificateChain(url:options:)` does and returns at once: the probe
    /// can be cancelled while it waits (for a server that takes the connection and never
    /// answers, say) and gives its result to `wait()`.
    public func probeCertificateChain(url: String, options: TransferOptions) -> CertificateChainProbe {
        let probe = CertificateChainProbe(driver: driver)
        let description = RequestDescription(url: url, options: options)
        do {
            let parsed = try HTTPURL(parsing: url)
            let trust = try trustEvaluator(for: parsed)
            let transfer = try Transfer(description: description, attempt: 1, hop: 0, trust: trust, connectOnly: true, delegate: probe)
            transfer.attach(driver: driver, share: share)
            probe.started(transfer)
            transfer.start()
        } catch {
            probe.fail(error)
        }
        return probe
    }
}

/// A connect-only transfer that fetches a server's certificate chain: `wait()` for what it
/// saw, `cancel(_:)` to end it early (the chain is then whatever arrived, and the error the
/// cancellation).
public final class CertificateChainProbe: TransferDelegate {
    private let latch = Latch()
    private let state = Protected(State())
    private let driver: TransferDriver

    private struct State {
        /// The transfer while it runs, for `cancel(_:)`.
        var transfer: Transfer?
        /// What it saw, once it has finished.
        var result: ([ServerCertificate], AFError?)?
    }

    init(driver: TransferDriver) {
        self.driver = driver
    }

    var eventInterests: RequestEvent.Interests { [] }

    func transfer(_ transfer: any AttemptHandle, emit event: RequestEvent.Kind) {}

    func transfer(_ transfer: any AttemptHandle, routeFor head: ResponseHead) -> BodyRoute { .preview }

    func transfer(_ transfer: any AttemptHandle, didFinish outcome: TransferOutcome) {
        finish(chain: outcome.serverChain, error: outcome.error)
    }

    fileprivate func started(_ transfer: Transfer) {
        state.write { $0.transfer = transfer }
    }

    fileprivate func fail(_ error: AFError) {
        finish(chain: [], error: error)
    }

    private func finish(chain: [ServerCertificate], error: AFError?) {
        let first = state.write { state -> Bool in
            guard state.result == nil else { return false }
            state = State(transfer: nil, result: (chain, error))
            return true
        }
        if first { latch.open() }
    }

    /// Ends the probe with `.cancelled(reason)` unless it has finished; `wait()` then returns.
    public func cancel(_ reason: AFError.Cancellation = .explicitly) {
        state.read { $0.transfer }?.cancel(reason)
    }

    /// Blocks until the probe has finished or been cancelled: the chain as the server sent
    /// it (empty when none arrived) and the error, if any.
    public func wait() -> ([ServerCertificate], AFError?) {
        precondition(!driver.isCurrentThread, "CertificateChainProbe.wait() cannot wait on the session's transfer thread, which runs the probe")
        latch.wait()
        return state.read { $0.result } ?? ([], nil)
    }
}
