import AFEngine

/// Renders request and response heads for the `H` and `h` sections.
struct HeadRenderer: Sendable {
    var theme: Theme?
    /// Escape control characters (output to a terminal).
    var terminal: Bool
    /// Show headers sorted by name (`--sorted`, `headers.sort:true`), request and response.
    var sortHeaders = false

    /// A request head as libcurl sent it (`GET / HTTP/1.1\r\nHost: …`). libcurl rewrites a
    /// user's `Host` header as `Host:`; the name is case-insensitive, so the line is shown as
    /// the user spelled it (`userHost`).
    func request(sentHead: String, userHost: HTTPHeader? = nil) -> String {
        // "\r\n" is a single Character in Swift, so split on both forms.
        var lines = sentHead.split(omittingEmptySubsequences: false) { $0 == "\r\n" || $0 == "\n" }.map(String.init)
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let first = lines.first else { return "" }
        var fields = Array(lines.dropFirst())
        if let userHost, let index = fields.firstIndex(where: { $0.lowercased().hasPrefix("host:") }) {
            fields[index] = "\(userHost.name.rawValue): \(userHost.value)"
        }
        return requestLine(first) + "\n" + ordered(fields).map { headerLine($0) + "\n" }.joined()
    }

    /// A request head built from a description, for `--offline` and failed attempts.
    func request(_ description: RequestDescription, url: HTTPURL) -> String {
        var fields: [String] = []
        if !description.headers.contains(.host), !description.suppressedHeaders.contains(.host) {
            let defaultPort = url.scheme == "https" ? 443 : 80
            // An IPv6 address comes with its brackets from the URL parser.
            let host = url.host
            fields.append("Host: " + (url.port.map { $0 == defaultPort ? host : "\(host):\($0)" } ?? host))
        }
        // A Host given as an item goes where libcurl sends it, first (it was printed after
        // the default headers).
        for header in description.headers where header.name == .host {
            fields.append("\(header.name.rawValue): \(header.value)")
        }
        for header in description.headers where header.name != .host {
            fields.append("\(header.name.rawValue): \(header.value)")
        }
        if !description.body.isEmpty, description.method != .head {
            if description.options.chunked || (try? description.body.contentLength()) == nil {
                fields.append("Transfer-Encoding: chunked")
            } else if let length = try? description.body.contentLength() {
                fields.append("Content-Length: \(length)")
            }
        } else if description.method == .post {
            fields.append("Content-Length: 0")
        }
        return requestLine("\(description.method.rawValue) \(url.target) HTTP/1.1") + "\n" + ordered(fields).map { headerLine($0) + "\n" }.joined()
    }

    /// Header lines (`Name: value`) in the order they are shown: as given, or by name
    /// (`headers.sort:true`), lines of one name keeping their order.
    private func ordered(_ lines: [String]) -> [String] {
        guard sortHeaders else { return lines }
        let keyed = lines.enumerated().map { offset, line -> (key: String, offset: Int, line: String) in
            let name = line.splitOnce(byte: UInt8(ascii: ":"))?.before ?? Substring(line)
            return (name.lowercased(), offset, line)
        }
        return keyed.sorted { $0.key == $1.key ? $0.offset < $1.offset : $0.key < $1.key }.map(\.line)
    }

    /// A response head.
    func response(_ head: ResponseHead) -> String {
        statusLine(head) + "\n" + fields(head.headers)
    }

    /// Header lines, each ending in a line break: a head's, or the trailer fields after a body.
    func fields(_ fields: HTTPHeaders) -> String {
        ordered(fields.map { "\($0.name.rawValue): \($0.value)" }).map { headerLine($0) + "\n" }.joined()
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
