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
            var members = ["\"time\": \(Self.number(event.time))", "\"event\": \(JSONText.quote(name))"]
            members += fields.map { "\(JSONText.quote($0.0)): \($0.1)" }
            line = "{" + members.joined(separator: ", ") + "}\n"
        case .text:
            line = "af: [\(Format.decimal(event.time, places: 6))] \(TerminalText.escaped(text))\n"
        }
        output.writeQuietly(line)
    }

    static func number(_ value: Double) -> String {
        Format.decimal(value, places: 6)
    }

    /// The event's name, its JSON fields (values already encoded) and a sentence.
    static func describe(_ kind: RequestEvent.Kind) -> (String, [(String, String)], String)? {
        func string(_ value: String) -> String { JSONText.quote(value) }
        switch kind {
        case .created(let description):
            return ("request_built", [("method", string(description.method.rawValue)), ("url", string(description.url))],
                    "request built: \(description.method.rawValue) \(description.url)")
        case .challengeAnswered(let attempt, let head):
            return ("challenge_answered", [("attempt", "\(attempt)"), ("status", "\(head.status)")],
                    "attempt \(attempt): \(head.status) challenge answered with credentials")
        case .resumed, .suspended, .progress, .transportLog:
            return nil
        case .adapted(let attempt, let description):
            return ("request_adapted", [("attempt", "\(attempt)"), ("url", string(description.url))],
                    "attempt \(attempt): request adapted (\(description.headers.count) headers)")
        case .attemptStarted(let attempt, let hop, let method, let url):
            return ("attempt_started", [("attempt", "\(attempt)"), ("hop", "\(hop)"), ("method", string(method.rawValue)), ("url", string(url))],
                    "attempt \(attempt) started: \(method.rawValue) \(url)")
        case .resolved(let host, let address):
            return ("resolved", [("host", string(host)), ("address", string(address))], "resolved \(host) to \(address)")
        case .connected(let address, let port, let reused):
            return ("connected", [("address", string(address)), ("port", "\(port)"), ("reused", reused ? "true" : "false")],
                    reused ? "reusing the connection to \(address):\(port)" : "connected to \(address):\(port)")
        case .tlsEstablished(let report):
            var fields = [("protocol", string(report.protocolVersion)), ("cipher", string(report.cipher)), ("verified", report.verified ? "true" : "false")]
            fields.append(("pin_result", report.pinResult.map(string) ?? "null"))
            let pins = report.pinResult.map { "; \($0)" } ?? ""
            return ("tls_established", fields, "TLS established: \(report.protocolVersion) \(report.cipher)\(report.verified ? ", chain verified" : ", chain not verified")\(pins)")
        case .requestSent(let attempt, let head):
            let line = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
            return ("request_sent", [("attempt", "\(attempt)"), ("request_line", string(line)), ("head_bytes", "\(head.utf8.count)")],
                    "attempt \(attempt) sent: \(line)")
        case .responseHead(let attempt, let head):
            return ("response_head", [("attempt", "\(attempt)"), ("status", "\(head.status)"), ("http_version", string(head.httpVersion))],
                    "attempt \(attempt) response: \(head.httpVersion) \(head.status) \(head.displayReason)")
        case .attemptFinished(let attempt):
            let outcome = attempt.error.map { "error: \($0.description)" } ?? attempt.response.map { "\($0.status) \($0.displayReason)" } ?? "no response"
            var fields = [("attempt", "\(attempt.number)")]
            fields.append(("status", attempt.response.map { "\($0.status)" } ?? "null"))
            fields.append(("error", attempt.error.map { string($0.description) } ?? "null"))
            fields.append(("total", attempt.metrics.map { number($0.total) } ?? "null"))
            return ("attempt_finished", fields, "attempt \(attempt.number) finished: \(outcome)")
        case .retryScheduled(let attempt, let reason, let delay):
            return ("retry_scheduled", [("attempt", "\(attempt)"), ("reason", string(reason)), ("delay", number(delay))],
                    "retry scheduled: attempt \(attempt) in \(Format.seconds(delay)) because \(reason)")
        case .redirected(let record):
            var fields = [("status", "\(record.status)"), ("from", string(record.from)), ("to", string(record.to)), ("method", string(record.method.rawValue))]
            fields.append(("dropped", "[" + record.dropped.map(string).joined(separator: ", ") + "]"))
            let dropped = record.dropped.isEmpty ? "" : "; dropped \(record.dropped.joined(separator: ", "))"
            return ("redirect", fields, "redirect \(record.status) to \(record.method.rawValue) \(record.to)\(dropped)")
        case .finished(let response):
            var fields = [("status", response.status.map { "\($0)" } ?? "null")]
            fields.append(("error", response.error.map { string($0.description) } ?? "null"))
            fields.append(("attempts", "\(response.attempts.count)"))
            let outcome = response.error.map { "with error: \($0.description)" } ?? "with \(response.status ?? 0)"
            return ("finished", fields, "finished \(outcome) after \(response.attempts.count) attempt(s)")
        case .cancelled(let reason):
            return ("cancelled", [("reason", string(reason.rawValue))], "cancelled (\(reason.rawValue))")
        }
    }
}
