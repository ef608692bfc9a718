import AFEngine

/// The `m` section: per attempt, status, protocol, address, timings, sizes and speed.
struct MetadataRenderer: Sendable {
    var theme: Theme?

    func render(_ response: Response) -> String {
        var out = ""
        for attempt in response.attempts {
            out += line(for: attempt)
        }
        if !response.redirects.isEmpty {
            out += paint("Redirects: \(response.redirects.count)", theme?.headerName) + "\n"
        }
        return out
    }

    private func line(for attempt: Attempt) -> String {
        var title = "Attempt \(attempt.number)"
        if attempt.hop > 0 { title += " (hop \(attempt.hop))" }
        var summary: String
        if let head = attempt.response {
            summary = "\(head.status) \(head.displayReason)"
        } else if let error = attempt.error {
            summary = "error: \(error.description)"
        } else {
            summary = "no response"
        }
        if let metrics = attempt.metrics {
            if let version = metrics.httpVersion { summary += "  \(version)" }
            if let address = metrics.remoteAddress {
                let port = metrics.remotePort.map { ":\($0)" } ?? ""
                summary += address.contains(":") ? "  [\(address)]\(port)" : "  \(address)\(port)"
            }
        }
        // The reason phrase and an error's text come from the server: escaped like a head's
        // text, so that a reason carrying an escape sequence cannot drive the terminal (`-m`
        // printed it as sent).
        let line = TerminalText.escaped("\(summary)  \(attempt.method.rawValue) \(attempt.url)", highlight: theme?.escape ?? "")
        var out = paint(title + ":", theme?.headerName) + " \(line)\n"
        guard let metrics = attempt.metrics else { return out }
        let tls = metrics.tlsDone > 0 ? milliseconds(metrics.tlsDuration) : "-"
        out += "  DNS \(milliseconds(metrics.dnsDuration))  connect \(milliseconds(metrics.connectDuration))  TLS \(tls)"
        out += "  first byte \(milliseconds(metrics.firstByte))  total \(milliseconds(metrics.total))\n"
        out += "  sent \(Format.bytes(metrics.bytesSent))  received \(Format.bytes(metrics.bytesReceived))"
        out += "  speed \(Format.bytes(Int64(metrics.downloadSpeed)))/s"
        out += metrics.newConnections == 0 ? "  reused connection" : ""
        if let tlsReport = metrics.tls {
            out += "\n  \(tlsReport.protocolVersion) \(tlsReport.cipher)\(tlsReport.resumed ? "  session resumed" : "")"
            if let pins = tlsReport.pinResult { out += "  \(pins)" }
        }
        if let delay = attempt.retryDelay { out += "\n  retried after \(Format.seconds(delay))" }
        return out + "\n"
    }

    private func milliseconds(_ seconds: Double) -> String {
        Format.decimal(seconds * 1000, places: 1) + " ms"
    }

    private func paint(_ text: String, _ color: String?) -> String {
        Theme.paint(text, color ?? "")
    }
}
