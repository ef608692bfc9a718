import AFEngine

/// `--trace`: every lifecycle event on standard error as it happens, with a monotonic
/// timestamp; `--trace=json` writes one JSON object per line.
struct TraceMonitor: EventMonitor {
    let format: Settings.TraceFormat
    let output: OutputChannel

    func request(_ request: Request, didEmit event: RequestEvent) {
        guard let (name, fields, text) = Self.describe(event.kind) else { return }
        let line: String
        switch format {
        case .json:
            var json = JSONWriter()
            json.object { json in
                json.member("time") { $0.number(event.time, places: 6) }
                json.member("event") { $0.string(name) }
                for (key, value) in fields {
                    json.key(key)
                    json.value(value)
                }
            }
            line = json.text + "\n"
        case .text:
            line = "af: [\(Format.decimal(event.time, places: 6))] \(TerminalText.escaped(text))\n"
        }
        output.writeQuietly(line)
    }

    /// The event's name, its JSON fields and a sentence.
    static func describe(_ kind: RequestEvent.Kind) -> (String, [(String, JSONValue)], String)? {
        func string(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        func integer<T: BinaryInteger>(_ value: T?) -> JSONValue { value.map { .number(String($0)) } ?? .null }
        func number(_ value: Double?) -> JSONValue { value.map { .number(Format.decimal($0, places: 6)) } ?? .null }
        switch kind {
        case .created(let description):
            return ("request_built", [("method", string(description.method.rawValue)), ("url", string(description.url))],
                    "request built: \(description.method.rawValue) \(description.url)")
        case .challengeAnswered(let attempt, let head):
            return ("challenge_answered", [("attempt", integer(attempt)), ("status", integer(head.status))],
                    "attempt \(attempt): \(head.status) challenge answered with credentials")
        case .resumed, .suspended, .progress, .transportLog:
            return nil
        case .adapted(let attempt, let description):
            return ("request_adapted", [("attempt", integer(attempt)), ("url", string(description.url))],
                    "attempt \(attempt): request adapted (\(description.headers.count) headers)")
        case .attemptStarted(let attempt, let hop, let method, let url):
            return ("attempt_started", [("attempt", integer(attempt)), ("hop", integer(hop)), ("method", string(method.rawValue)), ("url", string(url))],
                    "attempt \(attempt) started: \(method.rawValue) \(url)")
        case .resolved(let host, let address):
            return ("resolved", [("host", string(host)), ("address", string(address))], "resolved \(host) to \(address)")
        case .connected(let address, let port, let reused):
            return ("connected", [("address", string(address)), ("port", integer(port)), ("reused", .bool(reused))],
                    reused ? "reusing the connection to \(address):\(port)" : "connected to \(address):\(port)")
        case .tlsEstablished(let report):
            var fields = [("protocol", string(report.protocolVersion)), ("cipher", string(report.cipher)), ("verified", .bool(report.verified))]
            fields.append(("pin_result", string(report.pinResult)))
            fields.append(("resumed", .bool(report.resumed)))
            let pins = report.pinResult.map { "; \($0)" } ?? ""
            let resumed = report.resumed ? " (session resumed)" : ""
            return ("tls_established", fields, "TLS established\(resumed): \(report.protocolVersion) \(report.cipher)\(report.verified ? ", chain verified" : ", chain not verified")\(pins)")
        case .requestSent(let attempt, let head):
            let line = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
            return ("request_sent", [("attempt", integer(attempt)), ("request_line", string(line)), ("head_bytes", integer(head.utf8.count))],
                    "attempt \(attempt) sent: \(line)")
        case .informational(let attempt, let head):
            return ("informational_response", [("attempt", integer(attempt)), ("status", integer(head.status)), ("http_version", string(head.httpVersion))],
                    "attempt \(attempt) informational response: \(head.httpVersion) \(head.status) \(head.displayReason)")
        case .responseHead(let attempt, let head):
            return ("response_head", [("attempt", integer(attempt)), ("status", integer(head.status)), ("http_version", string(head.httpVersion))],
                    "attempt \(attempt) response: \(head.httpVersion) \(head.status) \(head.displayReason)")
        case .attemptFinished(let attempt):
            let outcome = attempt.error.map { "error: \($0.description)" } ?? attempt.response.map { "\($0.status) \($0.displayReason)" } ?? "no response"
            var fields = [("attempt", integer(attempt.number))]
            fields.append(("status", integer(attempt.response?.status)))
            fields.append(("error", string(attempt.error?.description)))
            fields.append(("total", number(attempt.metrics?.total)))
            return ("attempt_finished", fields, "attempt \(attempt.number) finished: \(outcome)")
        case .retryScheduled(let attempt, let reason, let delay, let refreshed):
            return ("retry_scheduled", [("attempt", integer(attempt)), ("reason", string(reason)), ("delay", number(delay)), ("refreshed", .bool(refreshed))],
                    "retry scheduled: attempt \(attempt) in \(Format.seconds(delay)) because \(reason)\(refreshed ? " (credentials renewed)" : "")")
        case .redirected(let record):
            var fields = [("status", integer(record.status)), ("from", string(record.from)), ("to", string(record.to)), ("method", string(record.method.rawValue))]
            fields.append(("dropped", .array(record.dropped.map { .string($0) })))
            let dropped = record.dropped.isEmpty ? "" : "; dropped \(record.dropped.joined(separator: ", "))"
            return ("redirect", fields, "redirect \(record.status) to \(record.method.rawValue) \(record.to)\(dropped)")
        case .finished(let response):
            var fields = [("status", integer(response.status))]
            fields.append(("error", string(response.error?.description)))
            fields.append(("attempts", integer(response.attempts.count)))
            let outcome = response.error.map { "with error: \($0.description)" } ?? "with \(response.status ?? 0)"
            return ("finished", fields, "finished \(outcome) after \(response.attempts.count) attempt(s)")
        case .cancelled(let reason):
            return ("cancelled", [("reason", string(reason.rawValue))], "cancelled (\(reason.rawValue))")
        }
    }
}
