@_spi(Locking) import AFEngine

/// Prints the exchange as it happens: request head and body, response head, response body,
/// and intermediate hops with `--all`. It is both the request's body sink and an event
/// monitor.
///
/// Without retries, output is live: the final hop's heads print when its response arrives
/// and the body streams. With retries, an attempt may be thrown away, so the body is spooled
/// to a temporary file and everything prints when the request ends; with `--stream`, only
/// an answer of another status than 2xx (which a retry may replace) is held so. A spooled
/// body cut short is kept for the retry to ask only for the rest (`DownloadResumer`), when
/// it came as it is (no `Content-Encoding`) with a validator to send in `If-Range`.
final class ExchangePrinter: ResumableBodySink, EventMonitor {
    /// What happens to the response body.
    enum BodyTarget: Sendable {
        /// Printed to standard output.
        case print
        /// Handed to another sink (a file, memory for a report).
        case forward(any ResponseBodySink)
        /// Dropped.
        case discard
    }

    private final class State {
        var sentHeads: [Int: String] = [:]
        var lastSent: Int?
        var lastFinished: Attempt?
        var openHead: ResponseHead?
        var openAttempt = 0
        /// The open answer is held until the request ends (`OutputPlan.hold`).
        var holding = false
        /// The answer whose body is in the spool, and its validator when a body cut short
        /// could be resumed.
        var spooledHead: ResponseHead?
        var validator: String?
        /// Bytes of a body cut short kept in the spool for the next attempt to continue.
        var kept: Int64 = 0
        /// The range the open answer continues the spooled body with.
        var resumed: ResumedBody?
        /// The body of an answer of another status held beside a body cut short (`spool`),
        /// which the retry after it may still continue.
        var aside: Spool?
        var printer: BodyPrinter?
        var spool: Spool?
        /// Something was printed and the next section needs a blank line before it.
        var needsSeparator = false
        var printedFinalHeads = false
    }

    private let plan: OutputPlan
    private let built: BuiltRequest
    private let out: OutputChannel
    private let heads: OutputChannel
    private let target: BodyTarget
    private let temporaryDirectory: String
    /// Where warnings about the output go (nil with --quiet).
    private let warnings: OutputChannel?
    private let state = Locked(State())

    init(plan: OutputPlan, built: BuiltRequest, stdout: OutputChannel, stderr: OutputChannel, target: BodyTarget,
         temporaryDirectory: String, quiet: Bool) {
        self.plan = plan
        self.built = built
        out = stdout
        warnings = quiet ? nil : stderr
        heads = plan.headsToStandardError ? stderr : stdout
        self.target = target
        self.temporaryDirectory = temporaryDirectory
    }

    private var printsBody: Bool {
        if case .print = target { return plan.shows("b") }
        return false
    }

    // MARK: EventMonitor

    /// The heads sent, and with `--all` the exchanges before the last (redirects, answered
    /// challenges).
    var interests: RequestEvent.Interests {
        plan.all ? [.requestSent, .attemptFinished, .challengeAnswered, .redirected] : .requestSent
    }

    func request(_ request: Request, didEmit event: RequestEvent) {
        switch event.kind {
        case .requestSent(let attempt, let head):
            state.withLock { state in
                state.sentHeads[attempt] = head
                state.lastSent = attempt
            }
        case .attemptFinished(let attempt):
            state.withLock { $0.lastFinished = attempt }
        case .challengeAnswered(let attempt, let head):
            // With --all, the challenge is an exchange of its own, like a redirect hop.
            guard plan.all else { return }
            state.withLock { state in
                try? printRequest(sentHead: state.sentHeads[attempt], plan.historySections, state)
                if plan.historySections.contains("h") { try? responseSections(head, state) }
            }
        case .redirected:
            guard plan.all else { return }
            state.withLock { state in
                guard let attempt = state.lastFinished else { return }
                printIntermediate(attempt, state)
            }
        default:
            break
        }
    }

    // MARK: ResponseBodySink

    func open(_ head: ResponseHead, attempt: Int) throws(AFError) {
        try state.withLock { state throws(AFError) in
            state.openHead = head
            state.openAttempt = attempt
            state.holding = plan.hold.holds(head.status)
            if state.holding {
                if printsBody { try spoolBody(of: head, state) }
            } else {
                try printFinalHeads(state)
                if printsBody { state.printer = BodyPrinter(head: head, style: plan.body) }
            }
            if case .forward(let sink) = target { try sink.open(head, attempt: attempt) }
        }
    }

    /// Where a held answer's body goes: on the end of a body cut short that it continues;
    /// into a spool of its own beside that body when it is another status's (a 503 before the
    /// retry that may still continue the body); else into the emptied spool. An answer to the
    /// range af asked for that does not continue the body fails the attempt: it is not the
    /// response the user asked for, and is never printed as one.
    private func spoolBody(of head: ResponseHead, _ state: State) throws(AFError) {
        if state.spool == nil { state.spool = Spool(directory: temporaryDirectory) }
        state.aside = nil
        state.resumed = nil
        guard state.kept > 0 else { return startSpool(head, state) }
        let length = state.spooledHead?.headers.value(for: .contentLength).flatMap { Int64($0) }
        if head.status == 206, Self.isUnencoded(head), case .continues(let resumed) = ResumedBody.verdict(on: head, start: state.kept, resourceLength: length) {
            // Printed as the answer whose body this is, the rest now added.
            state.resumed = resumed
            state.openHead = state.spooledHead
            state.kept = 0
            return
        }
        if head.status == 206 || head.status == 416 {
            let asked = state.kept
            state.spool?.reset()
            state.kept = 0
            state.openHead = nil
            let range = head.headers.value(for: .contentRange).map { " (Content-Range: \(Quote.controls(Quote.argument($0))))" } ?? ""
            throw .transport(TransportFailure(
                kind: .malformedResponse,
                message: "asked for the rest of the body from byte \(asked), the server answered \(head.status) \(head.displayReason)\(range), which does not continue it; run again to fetch it whole",
                curlCode: 0
            ))
        }
        if !(200...299).contains(head.status) {
            state.aside = Spool(directory: temporaryDirectory)
            return
        }
        state.kept = 0
        startSpool(head, state)
    }

    /// Spools `head`'s body from its start, resumable when it came unencoded with a validator.
    private func startSpool(_ head: ResponseHead, _ state: State) {
        state.spool?.reset()
        state.spooledHead = head
        state.validator = head.status == 200 && Self.isUnencoded(head) ? DownloadSink.validator(of: head) : nil
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(AFError) {
        try state.withLock { state throws(AFError) in
            switch target {
            case .print:
                guard plan.shows("b") else { return }
                if state.holding, let spool = state.aside ?? state.spool {
                    var bytes = bytes
                    if state.resumed != nil { bytes = state.resumed?.admit(bytes, kept: Int64(spool.size)) ?? bytes }
                    try spool.write(bytes)
                } else {
                    try state.printer?.write(bytes, to: out)
                }
            case .forward(let sink):
                try sink.write(bytes)
            case .discard:
                break
            }
        }
    }

    func bodyDidEnd() -> AFError? {
        if case .forward(let sink) = target { return sink.bodyDidEnd() }
        return state.withLock { state in state.resumed?.problem(kept: Int64(state.spool?.size ?? 0)) }
    }

    func rollback() {
        state.withLock { state in
            state.openHead = nil
            if state.aside != nil {
                // The body cut short stays kept for the next attempt.
                state.aside = nil
            } else if let spool = state.spool, spool.size > 0, state.validator != nil, state.holding {
                state.kept = Int64(spool.size)
            } else {
                state.spool?.reset()
                state.kept = 0
            }
        }
        if case .forward(let sink) = target { sink.rollback() }
    }

    // MARK: ResumableBodySink

    var partialBytes: Int64 { state.withLock { $0.kept } }

    var rangeValidator: String? { state.withLock { $0.validator } }

    /// Whether a body cut short may be resumed: printed (`-p b`) and held whole until the
    /// request ends.
    var resumesBody: Bool {
        guard case .print = target, case .everything = plan.hold else { return false }
        return plan.shows("b")
    }

    /// The body comes as the resource is, so a byte range of it continues it.
    private static func isUnencoded(_ head: ResponseHead) -> Bool {
        head.headers.value(for: .contentEncoding).map { $0.trimmingCharacters(in: " \t").lowercased() == "identity" } ?? true
    }

    func finish(error: AFError?) -> AFError? {
        var result = error
        if case .forward(let sink) = target { result = sink.finish(error: error) }
        do {
            try state.withLock { state throws(AFError) in
                if state.holding || state.openHead == nil {
                    try printFinalHeads(state)
                    if let head = state.openHead, printsBody {
                        let printer = BodyPrinter(head: head, style: plan.body)
                        state.printer = printer
                        try (state.aside ?? state.spool)?.replay { chunk throws(AFError) in try printer.write(chunk, to: out) }
                    }
                }
                if let printer = state.printer {
                    try printer.finish(to: out)
                    if printer.byteCount > 0 { state.needsSeparator = true }
                    if printer.sortingTooCostly {
                        warnings?.writeNotice("warning: the JSON body nests objects too deep around large values for --sort-keys to reorder them all, so its outer objects are shown with their keys in their own order")
                    } else if printer.gaveUpSorting {
                        warnings?.writeNotice("warning: the JSON body outgrew the \(Format.bytes(Int64(JSONFormatter.defaultSortLimit))) that --sort-keys may hold in memory, so it is shown with its keys in their own order")
                    }
                }
            }
        } catch {
            if result == nil { result = error }
        }
        return result
    }

    // MARK: Printing

    /// Prints the request (H, B) and response head (h) of the exchange that ends the run.
    private func printFinalHeads(_ state: State) throws(AFError) {
        guard !state.printedFinalHeads else { return }
        state.printedFinalHeads = true
        let attempt = state.openHead == nil ? state.lastSent : state.openAttempt
        try printRequest(sentHead: attempt.flatMap { state.sentHeads[$0] }, plan.sections, state)
        if let head = state.openHead, plan.shows("h") {
            try responseSections(head, state)
        }
        if printsBody, state.openHead != nil, state.needsSeparator {
            try writeHeads("\n")
            state.needsSeparator = false
        }
    }

    /// The request head (H) and body (B) of an exchange, as far as `sections` shows them.
    private func printRequest(sentHead: String?, _ sections: OutputPlan.Sections, _ state: State) throws(AFError) {
        if sections.contains("H"), let sentHead {
            let host = built.givenHeaders.last { $0.name == .host }
            try section(plan.head.request(sentHead: sentHead, userHost: host), state)
        }
        if sections.contains("B"), let sentHead,
           let body = RequestBodyRenderer(style: requestBodyStyle).render(built.body.origin, contentType: built.body.contentType)
        {
            let deflated = sentHead.lowercased().containsBytes(of: "\ncontent-encoding: deflate") && !built.description.headers.contains(.contentEncoding)
            try bodySection(body, deflated: deflated, state)
        }
    }

    private func printIntermediate(_ attempt: Attempt, _ state: State) {
        let sections = plan.historySections
        try? printRequest(sentHead: attempt.sentHead, sections, state)
        if sections.contains("h"), let head = attempt.response {
            try? responseSections(head, state)
        }
        if sections.contains("b"), !attempt.bodyPreview.isEmpty, let head = attempt.response {
            let printer = BodyPrinter(head: head, style: plan.body)
            try? attempt.bodyPreview.withBytes { raw throws(AFError) in try printer.write(raw, to: heads) }
            try? printer.finish(to: heads)
            state.needsSeparator = true
        }
    }

    /// A response head, after the informational (1xx) heads that came before it, each a
    /// block of its own as on the wire (`103 Early Hints`, then `200 OK`).
    private func responseSections(_ head: ResponseHead, _ state: State) throws(AFError) {
        for interim in head.informational { try section(plan.head.response(interim), state) }
        try section(plan.head.response(head), state)
    }

    /// Writes a head or body block, separated from what came before by a blank line.
    private func section(_ text: String, _ state: State) throws(AFError) {
        if state.needsSeparator { try writeHeads("\n") }
        try writeHeads(text)
        state.needsSeparator = true
    }

    /// Writes to the heads' channel. A download's heads go to standard error, which is for
    /// diagnostics: one that cannot be written there (closed, or a full disk) does not fail
    /// the download, which is what the user asked for.
    private func writeHeads(_ text: String) throws(AFError) {
        do { try heads.write(text) } catch { if !plan.headsToStandardError { throw error } }
    }

    private func writeHeads(_ bytes: [UInt8]) throws(AFError) {
        do { try heads.write(bytes) } catch { if !plan.headsToStandardError { throw error } }
    }

    /// The request body section. Shown for reading it ends with a line break; alone into a
    /// pipe (`-p B`) it is left as it is, so the output holds exactly what was sent.
    private func bodySection(_ body: [UInt8], deflated: Bool, _ state: State) throws(AFError) {
        if state.needsSeparator { try writeHeads("\n") }
        let note = deflatedNote(deflated)
        if !note.isEmpty { try writeHeads(note) }
        try writeHeads(body)
        // With other sections around it, the body ends its line like they do.
        if requestBodyStyle.escapes || plan.sections != ["B"], body.last != 10 { try writeHeads("\n") }
        state.needsSeparator = true
    }

    /// A note that the body shown is the original of what went out deflated (`-x`).
    private func deflatedNote(_ deflated: Bool) -> String {
        deflated ? Theme.paint("[sent deflated (Content-Encoding: deflate); the body before compression:]", plan.body.theme?.note ?? "") + "\n" : ""
    }

    private var requestBodyStyle: BodyStyle {
        var style = plan.body
        style.terminal = heads.isTerminal
        return style
    }

    /// Prints the request as it would be sent, for `--offline`.
    func printOffline(_ description: RequestDescription) throws(AFError) {
        try state.withLock { state throws(AFError) in
            if plan.shows("H") {
                try section(plan.head.request(description, url: built.url), state)
            }
            if plan.shows("B"), let body = RequestBodyRenderer(style: requestBodyStyle).render(built.body.origin, contentType: description.headers.value(for: .contentType)) {
                let deflated = description.headers.value(for: .contentEncoding) == "deflate" && !built.description.headers.contains(.contentEncoding)
                try bodySection(body, deflated: deflated, state)
            }
        }
    }

    /// Writes a block after the exchange (trailer fields, metadata), separated by a blank line.
    func printAfterExchange(_ text: String) throws(AFError) {
        try state.withLock { state throws(AFError) in try section(text, state) }
    }
}
