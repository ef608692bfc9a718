@_spi(Locking) @testable import AFEngine

/// A transport without sockets: each attempt is answered by a script, on the session's
/// thread, through the same delegate calls libcurl's transfers make. The request logic
/// (state machine, retries, redirects, validation, where bodies go) runs unchanged.
final class InMemoryTransport: AttemptTransport, @unchecked Sendable {
    /// What one attempt gets.
    enum Reply: Sendable {
        case response(status: Int, headers: [(String, String)] = [], body: [UInt8] = [])
        /// The head and part of the body, then the connection breaks.
        case truncated(status: Int, headers: [(String, String)], body: [UInt8])
        case failure(AFError)
    }

    private let answer: @Sendable (RequestDescription, Int) -> Reply
    private let log = Protected<[RequestDescription]>([])

    /// `answer` gets each attempt's description and its 1-based number across the session.
    init(_ answer: @escaping @Sendable (RequestDescription, Int) -> Reply) {
        self.answer = answer
    }

    /// Every attempt's description, in order.
    var attempts: [RequestDescription] { log.value }

    func makeAttempt(
        _ description: RequestDescription, url: HTTPURL, attempt: Int, hop: Int,
        trust: (any ServerTrustEvaluating)?, session: Session, delegate: any TransferDelegate
    ) throws(AFError) -> any AttemptHandle {
        let number = log.write { log -> Int in
            log.append(description)
            return log.count
        }
        return ScriptedAttempt(description: description, url: url, attempt: attempt, hop: hop, session: session,
                               delegate: delegate, reply: answer(description, number))
    }
}

/// One scripted attempt; all of its work runs on the session's thread.
final class ScriptedAttempt: AttemptHandle, @unchecked Sendable {
    let description: RequestDescription
    let url: HTTPURL
    let attempt: Int
    let hop: Int
    /// The scripted body is handed over at once: this counts it, as libcurl's transfers do.
    private let received = Protected<Int64>(0)
    var bodyBytesReceived: Int64 { received.value }
    private let session: Session
    private let delegate: any TransferDelegate
    private let reply: InMemoryTransport.Reply
    private let finished = Protected(false)
    private let paused = Protected(false)

    init(description: RequestDescription, url: HTTPURL, attempt: Int, hop: Int, session: Session,
         delegate: any TransferDelegate, reply: InMemoryTransport.Reply) {
        self.description = description
        self.url = url
        self.attempt = attempt
        self.hop = hop
        self.session = session
        self.delegate = delegate
        self.reply = reply
    }

    func start() {
        session.async { self.deliver() }
    }

    func pause() { paused.write { $0 = true } }

    func unpause() {
        paused.write { $0 = false }
        session.async { self.deliver() }
    }

    func cancel(_ reason: AFError.Cancellation) {
        session.async { self.finish(head: nil, preview: [], error: .cancelled(reason)) }
    }

    private func deliver() {
        guard !paused.value else { return }
        switch reply {
        case .failure(let error):
            finish(head: nil, preview: [], error: error)
        case .response(let status, let headers, let body):
            respond(status: status, headers: headers, body: body, brokenAfterBody: false)
        case .truncated(let status, let headers, let body):
            respond(status: status, headers: headers, body: body, brokenAfterBody: true)
        }
    }

    private func respond(status: Int, headers: [(String, String)], body: [UInt8], brokenAfterBody: Bool) {
        var fields = HTTPHeaders()
        for (name, value) in headers { fields.add(name: HTTPHeaders.Name(name), value: value) }
        let head = ResponseHead(status: status, reason: HTTPStatus.phrase(for: status), httpVersion: "HTTP/1.1", headers: fields)
        delegate.transfer(self, emit: .responseHead(attempt: attempt, head))
        var preview: [UInt8] = []
        var failure: AFError?
        received.write { $0 += Int64(body.count) }
        switch delegate.transfer(self, routeFor: head) {
        case .sink(let sink):
            do throws(AFError) {
                try sink.open(head, attempt: attempt)
                try body.withBytes { bytes throws(AFError) in try sink.write(bytes) }
            } catch {
                failure = error
            }
        case .preview:
            preview = body
        case .refuse(let error):
            failure = error
        }
        if brokenAfterBody, failure == nil {
            failure = .transport(TransportFailure(kind: .truncatedBody, message: "the connection to \(url.authority) broke during the response body"))
        }
        finish(head: head, preview: preview, error: failure)
    }

    private func finish(head: ResponseHead?, preview: [UInt8], error: AFError?) {
        let first = finished.write { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else { return }
        delegate.transfer(self, didFinish: TransferOutcome(
            head: head, sentHead: nil, metrics: TransferMetrics(), error: error, preview: preview, serverChain: []
        ))
    }
}
