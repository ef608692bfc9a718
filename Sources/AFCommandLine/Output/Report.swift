import AFEngine

/// `--report=json`: one JSON document describing the whole run, success or failure, on one
/// line (a JSON body is included without its insignificant whitespace).
enum Report {
    /// Writes the report to `out`; `line` (in `af batch`) comes first as `"line": N`. The
    /// body is streamed from where `body` keeps it, so memory does not grow with its size;
    /// a report that fits in `ReportBodyWriter.flushSize` goes out in one write.
    static func write(response: Response, body: ReportBody, exitCode: Int32, settings: Settings, line: Int? = nil, to out: OutputChannel) throws(AFError) {
        let document = render(response: response, exitCode: exitCode, settings: settings, line: line)
        guard let hole = document.firstIndex(of: bodyHole) else {
            try out.write(document)
            return
        }
        let writer = ReportBodyWriter(pending: Array(document[..<hole]), out: out)
        try writer.write(body, form: ReportBodyWriter.form(of: body))
        writer.append(document[(hole + 1)...])
        try out.write(writer.pending)
    }

    /// Where the body's value goes in the rendered document: a byte JSON text never holds
    /// outside a string, where the writer escapes it.
    private static let bodyHole: UInt8 = 0

    /// The document, with `bodyHole` in place of the response body's value.
    private static func render(response: Response, exitCode: Int32, settings: Settings, line: Int?) -> [UInt8] {
        var json = JSONWriter(capacity: 1024)
        json.object { json in
            if let line { json.member("line") { $0.number(line) } }
            let request = response.finalRequest
            json.member("request") { json in
                json.object { json in
                    json.member("method") { $0.string(request.method.rawValue) }
                    json.member("url") { $0.string(request.url) }
                    json.member("headers") { requestHeaders(sentHeaders(response) ?? request.headers, secretHeaders: settings.secretHeaders, into: &$0) }
                }
            }
            json.key("response")
            if let head = response.head {
                json.object { json in
                    json.member("status") { $0.number(head.status) }
                    json.member("reason") { $0.string(head.displayReason) }
                    json.member("http_version") { $0.string(head.httpVersion) }
                    json.member("headers") { headers(head.headers, into: &$0) }
                    if !head.informational.isEmpty {
                        json.member("informational") { $0.array(head.informational) { informational($1, into: &$0) } }
                    }
                    let trailers = response.trailers
                    if !trailers.isEmpty { json.member("trailers") { headers(trailers, into: &$0) } }
                    json.member("body") { $0.fragment(CollectionOfOne(bodyHole)) }
                }
            } else {
                json.null()
            }
            json.member("attempts") { $0.array(response.attempts) { attempt($1, into: &$0) } }
            json.member("redirects") { $0.array(response.redirects) { redirect($1, into: &$0) } }
            json.key("error")
            if let error = response.error, exitCode != 0 || !isStatusOnly(error) {
                let message = ExitMapping.message(for: error, attempts: response.tries)
                    + ExitMapping.redirectHint(for: error, head: response.head, follow: settings.follow)
                json.object { json in
                    json.member("kind") { $0.string(kind(of: error)) }
                    json.member("message") { $0.string(message) }
                    json.member("exit_code") { $0.number(exitCode) }
                }
            } else {
                json.null()
            }
        }
        return json.bytes + [UInt8(ascii: "\n")]
    }

    private static func isStatusOnly(_ error: AFError) -> Bool {
        if case .responseValidationFailed = error { return true }
        return false
    }

    /// An informational (1xx) response: `{"status", "reason", "http_version", "headers"}`.
    private static func informational(_ head: ResponseHead, into json: inout JSONWriter) {
        json.object { json in
            json.member("status") { $0.number(head.status) }
            json.member("reason") { $0.string(head.displayReason) }
            json.member("http_version") { $0.string(head.httpVersion) }
            json.member("headers") { headers(head.headers, into: &$0) }
        }
    }

    /// Headers as `[[name, value], …]`, in order, repeats kept.
    static func headers(_ headers: HTTPHeaders, into json: inout JSONWriter) {
        json.array(headers) { json, header in
            json.array { json in
                json.string(header.name.rawValue)
                json.string(header.value)
            }
        }
    }

    /// The header fields of the last request head sent, as libcurl wrote it: with the
    /// `Host`, the `Content-Length` or `Transfer-Encoding` and the cookies it adds to the
    /// description's headers, as `-v` prints them. Nil when the last attempt sent no head (it
    /// failed before, or `--offline`): the description's headers are what af would send.
    private static func sentHeaders(_ response: Response) -> HTTPHeaders? {
        guard let head = response.attempts.last?.sentHead else { return nil }
        var fields = HTTPHeaders()
        // The request line first, then one field a line up to the blank line.
        for line in head.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropFirst() {
            let text = line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...]
            if text.isEmpty { break }
            guard let colon = text.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let value = text[text.index(after: colon)...].drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            fields.add(HTTPHeader(String(decoding: text[..<colon], as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return fields
    }

    /// The headers af sent, as `headers` writes them, with the values of credentials hidden
    /// (`CredentialRedaction`): a report is kept, and the user who wants the token knows it.
    private static func requestHeaders(_ headers: HTTPHeaders, secretHeaders: [String], into json: inout JSONWriter) {
        guard headers.contains(where: { CredentialRedaction.isCredential($0.name, secretHeaders: secretHeaders) }) else {
            return Self.headers(headers, into: &json)
        }
        let redaction = CredentialRedaction(secretHeaders: secretHeaders)
        json.array(headers) { json, header in
            json.array { json in
                json.string(header.name.rawValue)
                json.string(redaction.value(of: header))
            }
        }
    }

    private static func attempt(_ attempt: Attempt, into json: inout JSONWriter) {
        json.object { json in
            json.member("attempt") { $0.number(attempt.number) }
            json.member("hop") { $0.number(attempt.hop) }
            json.member("method") { $0.string(attempt.method.rawValue) }
            json.member("url") { $0.string(attempt.url) }
            json.member("status") { $0.number(attempt.response?.status) }
            json.member("error") { $0.string(attempt.error?.description) }
            json.member("retry_delay") { $0.number(attempt.retryDelay, places: 6) }
            json.key("metrics")
            if let metrics = attempt.metrics { self.metrics(metrics, into: &json) } else { json.null() }
        }
    }

    private static func metrics(_ metrics: TransferMetrics, into json: inout JSONWriter) {
        json.object { json in
            json.member("http_version") { $0.string(metrics.httpVersion) }
            json.member("remote_address") { $0.string(metrics.remoteAddress) }
            json.member("remote_port") { $0.number(metrics.remotePort) }
            json.member("dns") { $0.number(metrics.dnsDuration, places: 6) }
            json.member("connect") { $0.number(metrics.connectDuration, places: 6) }
            json.member("tls") { $0.number(metrics.tlsDuration, places: 6) }
            json.member("first_byte") { $0.number(metrics.firstByte, places: 6) }
            json.member("total") { $0.number(metrics.total, places: 6) }
            json.member("bytes_sent") { $0.number(metrics.bytesSent) }
            json.member("bytes_received") { $0.number(metrics.bytesReceived) }
            json.member("download_speed") { $0.number(Int64(metrics.downloadSpeed)) }
            json.member("upload_speed") { $0.number(Int64(metrics.uploadSpeed)) }
            json.member("new_connections") { $0.number(metrics.newConnections) }
            if let tls = metrics.tls {
                json.member("tls_protocol") { $0.string(tls.protocolVersion) }
                json.member("tls_cipher") { $0.string(tls.cipher) }
                json.member("pin_result") { $0.string(tls.pinResult) }
                json.member("tls_resumed") { $0.bool(tls.resumed) }
            }
        }
    }

    private static func redirect(_ record: RedirectRecord, into json: inout JSONWriter) {
        json.object { json in
            json.member("status") { $0.number(record.status) }
            json.member("from") { $0.string(record.from) }
            json.member("to") { $0.string(record.to) }
            json.member("method") { $0.string(record.method.rawValue) }
            json.member("dropped") { $0.array(record.dropped) { $0.string($1) } }
        }
    }

    /// A stable name for the class of failure.
    static func kind(of error: AFError) -> String {
        switch error.underlyingError {
        case .invalidRequest: return "invalid_request"
        case .inputUnreadable: return "input_unreadable"
        case .adaptationFailed: return "adaptation_failed"
        case .transport(let failure):
            switch failure.kind {
            case .dnsFailure: return "dns"
            case .connectionRefused: return "connection_refused"
            case .connectionReset: return "connection_reset"
            case .connectTimeout: return "connect_timeout"
            case .timeout: return "timeout"
            case .tls: return "tls"
            case .pinning: return "pinning"
            case .malformedResponse: return "malformed_response"
            case .truncatedBody: return "truncated_body"
            case .limitExceeded: return "limit_exceeded"
            case .sendFailed: return "send_failed"
            case .proxy: return "proxy"
            case .other: return "network"
            }
        case .responseValidationFailed: return "http_status"
        case .tooManyRedirects: return "too_many_redirects"
        case .redirectFailed: return "redirect_failed"
        case .output: return "output"
        case .cancelled(.interrupted): return "interrupted"
        case .cancelled(.terminated): return "terminated"
        case .cancelled(.explicitly), .cancelled(.sessionShutDown): return "cancelled"
        case .requestRetryFailed: return "retry_failed"
        }
    }
}
