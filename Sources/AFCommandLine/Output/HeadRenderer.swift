import AFEngine

/// Renders request and response heads for the `H` and `h` sections.
struct HeadRenderer: Sendable {
    var theme: Theme?
    /// Escape control characters (output to a terminal).
    var terminal: Bool
    /// Show response headers sorted by name (`--sorted`, `headers.sort:true`).
    var sortHeaders = false

    /// A request head as libcurl sent it (`GET / HTTP/1.1\r\nHost: …`). libcurl rewrites a
    /// user's `Host` header as `Host:`; the name is case-insensitive, so the line is shown as
    /// the user spelled it (`userHost`).
    func request(sentHead: String, userHost: HTTPHeader? = nil) -> String {
        // "\r\n" is a single Character in Swift, so split on both forms.
        var lines = sentHead.split(omittingEmptySubsequences: false) { $0 == "\r\n" || $0 == "\n" }.map(String.init)
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let first = lines.first else { return "" }
        var out = requestLine(first) + "\n"
        for line in lines.dropFirst() {
            if let userHost, line.lowercased().hasPrefix("host:") {
                out += headerLine("\(userHost.name.rawValue): \(userHost.value)") + "\n"
            } else {
                out += headerLine(line) + "\n"
            }
        }
        return out
    }

    /// A request head built from a description, for `--offline` and failed attempts.
    func request(_ description: RequestDescription, url: HTTPURL) -> String {
        var out = requestLine("\(description.method.rawValue) \(url.target) HTTP/1.1") + "\n"
        if !description.headers.contains(.host), !description.suppressedHeaders.contains(.host) {
            let defaultPort = url.scheme == "https" ? 443 : 80
            // An IPv6 address comes with its brackets from the URL parser.
            let host = url.host
            out += headerLine("Host: " + (url.port.map { $0 == defaultPort ? host : "\(host):\($0)" } ?? host)) + "\n"
        }
        // A Host given as an item goes where libcurl sends it, first (it was printed after
        // the default headers).
        for header in description.headers where header.name == .host {
            out += headerLine("\(header.name.rawValue): \(header.value)") + "\n"
        }
        for header in description.headers where header.name != .host {
            out += headerLine("\(header.name.rawValue): \(header.value)") + "\n"
        }
        if !description.body.isEmpty, description.method != .head {
            if description.options.chunked || (try? description.body.contentLength()) == nil {
                out += headerLine("Transfer-Encoding: chunked") + "\n"
            } else if let length = try? description.body.contentLength() {
                out += headerLine("Content-Length: \(length)") + "\n"
            }
        } else if description.method == .post {
            out += headerLine("Content-Length: 0") + "\n"
        }
        return out
    }

    /// A response head.
    func response(_ head: ResponseHead) -> String {
        statusLine(head) + "\n" + fields(head.headers)
    }

    /// Header lines, each ending in a line break: a head's, or the trailer fields after a body.
    func fields(_ fields: HTTPHeaders) -> String {
        let ordered = sortHeaders
            ? fields.enumerated().sorted { lhs, rhs in
                let (a, b) = (lhs.element.name.rawValue.lowercased(), rhs.element.name.rawValue.lowercased())
                return a == b ? lhs.offset < rhs.offset : a < b
            }.map(\.element)
            : Array(fields)
        var out = ""
        for header in ordered {
            out += headerLine("\(header.name.rawValue): \(header.value)") + "\n"
        }
        return out
    }

    private func statusLine(_ head: ResponseHead) -> String {
        let reason = head.reason.isEmpty ? head.displayReason : head.reason
        let status = "\(head.status) \(clean(reason))".trimmingCharacters(in: " ")
        guard let theme else { return "\(head.httpVersion) \(status)" }
        let color = head.status >= 400 ? theme.statusError : (head.status >= 300 ? theme.statusRedirect : theme.statusSuccess)
        return Theme.paint(head.httpVersion, theme.version) + " " + Theme.paint(status, color)
    }

    private func requestLine(_ line: String) -> String {
        let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
        guard let theme, parts.count == 3 else { return clean(line) }
        return Theme.paint(clean(parts[0]), theme.method) + " " + Theme.paint(clean(parts[1]), theme.url) + " " + Theme.paint(parts[2], theme.version)
    }

    private func headerLine(_ line: String) -> String {
        guard let (rawName, rawValue) = line.splitOnce(byte: UInt8(ascii: ":")) else { return clean(line) }
        let name = clean(String(rawName))
        var value = String(rawValue)
        if value.hasPrefix(" ") { value.removeFirst() }
        let cleanValue = clean(value)
        guard let theme else { return "\(name): \(cleanValue)" }
        return Theme.paint(name, theme.headerName) + ": " + Theme.paint(cleanValue, theme.headerValue)
    }

    /// Escapes control characters on a terminal; leaves text alone otherwise.
    private func clean(_ text: String) -> String {
        terminal || theme != nil ? TerminalText.escaped(text, highlight: theme?.escape ?? "") : text
    }
}
