import AFEngine

/// `--report=json`: one JSON document describing the whole run, success or failure, on one
/// line (a JSON body is included without its insignificant whitespace).
enum Report {
    /// The report; `line` (in `af batch`) comes first as `"line": N`.
    static func render(response: Response, body: [UInt8], exitCode: Int32, settings: Settings, line: Int? = nil) -> String {
        var members: [String] = []
        if let line { members.append("\"line\": \(line)") }
        let request = response.finalRequest
        members.append("\"request\": {\"method\": \(JSONText.quote(request.method.rawValue)), \"url\": \(JSONText.quote(request.url)), \"headers\": \(headers(request.headers))}")
        if let head = response.head {
            var fields = [
                "\"status\": \(head.status)", "\"reason\": \(JSONText.quote(head.displayReason))",
                "\"http_version\": \(JSONText.quote(head.httpVersion))", "\"headers\": \(headers(head.headers))",
            ]
            fields.append("\"body\": \(bodyValue(body, contentType: head.headers.value(for: .contentType)))")
            members.append("\"response\": {" + fields.joined(separator: ", ") + "}")
        } else {
            members.append("\"response\": null")
        }
        members.append("\"attempts\": [" + response.attempts.map(attempt).joined(separator: ", ") + "]")
        members.append("\"redirects\": [" + response.redirects.map(redirect).joined(separator: ", ") + "]")
        if let error = response.error, exitCode != 0 || !isStatusOnly(error) {
            let message = ExitMapping.message(for: error, retries: settings.retry, attempts: response.attempts.count)
            members.append("\"error\": {\"kind\": \(JSONText.quote(kind(of: error))), \"message\": \(JSONText.quote(message)), \"exit_code\": \(exitCode)}")
        } else {
            members.append("\"error\": null")
        }
        return "{" + members.joined(separator: ", ") + "}\n"
    }

    private static func isStatusOnly(_ error: AFError) -> Bool {
        if case .responseValidationFailed = error { return true }
        return false
    }

    static func headers(_ headers: HTTPHeaders) -> String {
        "[" + headers.map { "[\(JSONText.quote($0.name.rawValue)), \(JSONText.quote($0.value))]" }.joined(separator: ", ") + "]"
    }

    /// The body as a JSON value when it is JSON, a string when it is UTF-8 text, else base64.
    static func bodyValue(_ body: [UInt8], contentType: String?) -> String {
        let (_, json) = BodyPrinter.splitXSSI(body)
        let candidate = Array(json)
        if !candidate.isEmpty, JSONScanner.validate(candidate) == nil {
            return String(decoding: compact(candidate), as: UTF8.self)
        }
        if !body.contains(0), let text = String(validating: body, as: UTF8.self) {
            return JSONText.quote(text)
        }
        return "{\"base64\": \(JSONText.quote(Base64.encode(body)))}"
    }

    /// Valid JSON without the whitespace between tokens; every token stays as it came.
    static func compact(_ json: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(json.count)
        var inString = false
        var escaped = false
        for byte in json {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                out.append(byte)
            } else if byte == 32 || byte == 9 || byte == 10 || byte == 13 {
                continue
            } else {
                if byte == UInt8(ascii: "\"") { inString = true }
                out.append(byte)
            }
        }
        return out
    }

    private static func attempt(_ attempt: Attempt) -> String {
        var fields = [
            "\"attempt\": \(attempt.number)", "\"hop\": \(attempt.hop)",
            "\"method\": \(JSONText.quote(attempt.method.rawValue))", "\"url\": \(JSONText.quote(attempt.url))",
        ]
        fields.append("\"status\": \(attempt.response.map { "\($0.status)" } ?? "null")")
        fields.append("\"error\": \(attempt.error.map { JSONText.quote($0.description) } ?? "null")")
        fields.append("\"retry_delay\": \(attempt.retryDelay.map(number) ?? "null")")
        fields.append("\"metrics\": \(attempt.metrics.map(metrics) ?? "null")")
        return "{" + fields.joined(separator: ", ") + "}"
    }

    private static func metrics(_ metrics: TransferMetrics) -> String {
        var fields = [
            "\"http_version\": \(metrics.httpVersion.map(JSONText.quote) ?? "null")",
            "\"remote_address\": \(metrics.remoteAddress.map(JSONText.quote) ?? "null")",
            "\"remote_port\": \(metrics.remotePort.map { "\($0)" } ?? "null")",
            "\"dns\": \(number(metrics.dnsDuration))", "\"connect\": \(number(metrics.connectDuration))",
            "\"tls\": \(number(metrics.tlsDuration))", "\"first_byte\": \(number(metrics.firstByte))",
            "\"total\": \(number(metrics.total))", "\"bytes_sent\": \(metrics.bytesSent)",
            "\"bytes_received\": \(metrics.bytesReceived)", "\"download_speed\": \(Int64(metrics.downloadSpeed))",
            "\"upload_speed\": \(Int64(metrics.uploadSpeed))", "\"new_connections\": \(metrics.newConnections)",
        ]
        if let tls = metrics.tls {
            fields.append("\"tls_protocol\": \(JSONText.quote(tls.protocolVersion))")
            fields.append("\"tls_cipher\": \(JSONText.quote(tls.cipher))")
            fields.append("\"pin_result\": \(tls.pinResult.map(JSONText.quote) ?? "null")")
        }
        return "{" + fields.joined(separator: ", ") + "}"
    }

    private static func redirect(_ record: RedirectRecord) -> String {
        "{\"status\": \(record.status), \"from\": \(JSONText.quote(record.from)), \"to\": \(JSONText.quote(record.to)), "
            + "\"method\": \(JSONText.quote(record.method.rawValue)), \"dropped\": [\(record.dropped.map(JSONText.quote).joined(separator: ", "))]}"
    }

    static func number(_ value: Double) -> String {
        Format.decimal(value, places: 6)
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
