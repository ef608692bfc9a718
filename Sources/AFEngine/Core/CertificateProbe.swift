extension Session {
    /// Connects to an https URL, completes the TLS handshake and returns the certificate
    /// chain as the server sent it, with the error, if any (the chain is returned even when
    /// verification fails, so that a user can inspect it).
    public func fetchCertificateChain(url: String, options: TransferOptions) -> ([ServerCertificate], AFError?) {
        let probe = ChainProbe()
        let description = RequestDescription(url: url, options: options)
        do {
            let parsed = try HTTPURL(parsing: url)
            let trust = try trustEvaluator(for: parsed)
            let transfer = try Transfer(description: description, attempt: 1, hop: 0, trust: trust, connectOnly: true, delegate: probe)
            driver.submit(.add(transfer, share))
        } catch {
            return ([], error)
        }
        return probe.wait()
    }
}

/// Waits for a connect-only transfer and keeps what it saw.
private final class ChainProbe: TransferDelegate {
    private let latch = Latch()
    private let outcome = Protected<TransferOutcome?>(nil)

    var eventInterests: RequestEvent.Interests { [] }

    func transfer(_ transfer: any AttemptHandle, emit event: RequestEvent.Kind) {}

    func transfer(_ transfer: any AttemptHandle, routeFor head: ResponseHead) -> BodyRoute { .preview }

    func transfer(_ transfer: any AttemptHandle, didFinish outcome: TransferOutcome) {
        self.outcome.write { $0 = outcome }
        latch.open()
    }

    func wait() -> ([ServerCertificate], AFError?) {
        latch.wait()
        let result = outcome.value
        return (result?.serverChain ?? [], result?.error)
    }
}
