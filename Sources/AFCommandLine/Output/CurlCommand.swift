import AFEngine

/// `--curl`: a curl command line that makes the same request, shell-quoted so it runs as
/// printed.
enum CurlCommand {
    /// `caBundle`: the CA bundle af trusts instead of the system's roots (`--verify=PATH`'s, or
    /// one an environment variable names), printed as `--cacert`, or `--capath` for a directory.
    /// `description`: the request as it would be sent, when it is more than `built`'s (a
    /// session's cookies). `netrcFile`: the netrc af takes this request's credentials from
    /// (or a redirect's), given to curl by its path so that the line does not print them.
    static func render(built: BuiltRequest, description: RequestDescription? = nil, settings: Settings, caBundle: String?, netrcFile: String? = nil) -> String {
        let description = description ?? built.description
        var words = ["curl"]
        func add(_ items: String...) { words += items }
        let method = description.method
        let hasBody = !description.body.isEmpty && method != .head
        if method == .head {
            add("--head")
        } else if !(method == .get && !hasBody) && !(method == .post && hasBody) {
            add("--request", method.rawValue)
        }
        add(quote(description.url))
        var isMultipart = false
        if case .multipart = built.body.origin { isMultipart = true }
        for header in description.headers {
            if isMultipart, header.name == .contentType { continue }
            add("--header", quote(header.value.isEmpty ? "\(header.name.rawValue);" : "\(header.name.rawValue): \(header.value)"))
        }
        for name in description.suppressedHeaders { add("--header", quote("\(name.rawValue):")) }
        // curl frames a body of any kind in chunks when told by this header.
        if hasBody, description.options.chunked { add("--header", quote("Transfer-Encoding: chunked")) }
        if hasBody, !description.headers.contains(.expect) { add("--header", quote("Expect:")) }
        if hasBody, !isMultipart, !description.headers.contains(.contentType) { add("--header", quote("Content-Type:")) }
        if description.headers.contains(.acceptEncoding) && !settings.download { add("--compressed") }
        if hasBody { words += bodyWords(built.body.origin) }
        if let credentials = description.challengeCredentials {
            add("--digest", "--user", quote("\(credentials.user):\(credentials.password)"))
        }
        if let command = settings.authCmd {
            // The token is what the command prints when the line runs (af runs it with sh -c
            // too), so the line works as long as the token does, and does not print it.
            add("--oauth2-bearer", "\"$(sh -c \(quote(command)))\"")
        }
        if let netrcFile { add("--netrc-file", quote(netrcFile)) }
        words += optionWords(settings, description: description, caBundle: caBundle)
        words += outputWords(settings)
        words += failWords(settings)
        return words.joined(separator: " ")
    }

    /// Whether the curl of this libcurl's version has `--fail-with-body` (7.76.0 on).
    static let curlHasFailWithBody = CurlRuntime.versionNumber.map { $0 >= 0x074C00 } ?? false

    /// `--check-status` as curl says it: `--fail-with-body` fails on a status of 400 or more
    /// and still prints the body, as af does (curl's code is 22 where af's are 4 and 5). Not
    /// when `--accept-status` takes such a status (curl has nothing like it), nor for a
    /// download, which has `--fail` already.
    private static func failWords(_ settings: Settings) -> [String] {
        guard settings.checkStatus, !settings.download, !settings.resume, curlHasFailWithBody,
              !settings.acceptStatus.contains(where: { $0.upperBound >= 400 }) else { return [] }
        return ["--fail-with-body"]
    }

    /// Whether the curl of this libcurl's version has `--no-clobber` (7.83.0 on; the curl
    /// tool on a system is as new as its libcurl).
    static let curlHasNoClobber = CurlRuntime.versionNumber.map { $0 >= 0x075300 } ?? false

    /// Where the body goes, as curl says it: `-o FILE` as `--output`; a download (`-d`) with
    /// the name from the URL or `Content-Disposition` (`--remote-name --remote-header-name`;
    /// curl cannot resume with the latter, and af names a resumed file from the URL too),
    /// only for a 2xx response (`--fail`; a resume too), without replacing a file unless `--overwrite`
    /// (`--no-clobber`, which picks `NAME.1` where af picks `NAME-1` or stops).
    private static func outputWords(_ settings: Settings) -> [String] {
        guard settings.download || settings.output != nil else { return [] }
        if let stream = settings.outputStream {
            // curl's --no-clobber would take an existing /dev/stderr (or /dev/fd/3) for a file to keep.
            let name = stream == 2 ? "/dev/stderr" : "/dev/fd/\(stream)"
            return (stream == 1 ? [] : ["--output", name]) + (settings.download ? ["--fail"] : [])
        }
        var words: [String] = []
        if let output = settings.output {
            words += ["--output", quote(output)]
        } else {
            words.append("--remote-name")
            if !settings.resume { words.append("--remote-header-name") }
        }
        if let directory = settings.outputDir { words += ["--output-dir", quote(directory)] }
        if settings.createDirs { words.append("--create-dirs") }
        if settings.resume { words += ["--continue-at", "-"] } else if !settings.overwrite, curlHasNoClobber { words.append("--no-clobber") }
        if settings.download || settings.resume { words.append("--fail") }
        return words
    }

    private static func bodyWords(_ origin: BodyOrigin) -> [String] {
        switch origin {
        case .none:
            return []
        case .text(let text):
            return ["--data-raw", quote(text)]
        case .file(let path), .heldFile(let path, _):
            return ["--data-binary", quote("@" + path)]
        case .standardInput(let held):
            let bytes: [UInt8]? = switch held {
            case .bytes(let bytes): bytes
            case .file(let path): try? FileReading.bytes(atPath: path, item: "standard input")
            case nil: nil
            }
            if let bytes, bytes.count <= 1 << 20, let text = String(validating: bytes, as: UTF8.self), !text.contains("\0") {
                return ["--data-raw", quote(text)]
            }
            return ["--data-binary", "@-"]
        case .multipart(let form):
            var words: [String] = []
            for part in form.parts {
                switch part.content {
                case .bytes(let bytes):
                    words += ["--form-string", quote("\(part.name)=\(String(decoding: bytes, as: UTF8.self))")]
                case .file(let path):
                    // Standard input is curl's `@-` too: the command reads what af was given.
                    let source = StandardInputItems.isStandardInput(part, path: path) ? "-" : formQuoted(path)
                    var spec = "\(part.name)=@\(source)"
                    if let type = part.contentType { spec += ";type=\(type)" }
                    if let filename = part.filename { spec += ";filename=\(formQuoted(filename))" }
                    words += ["--form", quote(spec)]
                }
            }
            return words
        }
    }

    private static func optionWords(_ settings: Settings, description: RequestDescription, caBundle: String?) -> [String] {
        var words: [String] = []
        let options = description.options
        if let timeout = options.timeout { words += ["--max-time", number(timeout)] }
        if let timeout = options.connectTimeout { words += ["--connect-timeout", number(timeout)] }
        if settings.retry > 0 {
            words += ["--retry", "\(settings.retry)", "--retry-connrefused"]
            if settings.retryDelay != 0.5 { words += ["--retry-delay", number(settings.retryDelay)] }
            if let maxTime = settings.retryMaxTime { words += ["--retry-max-time", number(maxTime)] }
        }
        if settings.follow {
            words += ["--location", "--max-redirs", "\(settings.maxRedirects)"]
            if settings.locationTrusted { words.append("--location-trusted") }
        }
        switch options.httpVersion {
        case .automatic: break
        case .http1_0: words.append("--http1.0")
        case .http1_1: words.append("--http1.1")
        case .http2: words.append("--http2")
        case .http2PriorKnowledge: words.append("--http2-prior-knowledge")
        }
        if settings.verify == .off {
            words.append("--insecure")
        } else if let bundle = caBundle {
            if FileIO.isCertificateDirectory(bundle) {
                words += ["--capath", quote(bundle)]
            } else {
                words += ["--cacert", quote(bundle)]
            }
        }
        if let cert = options.tls.clientCertificate { words += ["--cert", quote(cert)] }
        if let key = options.tls.clientKey { words += ["--key", quote(key)] }
        if let password = options.tls.clientKeyPassword { words += ["--pass", quote(password)] }
        switch options.tls.minimumVersion {
        case .tls1_2?: words.append("--tlsv1.2")
        case .tls1_3?: words.append("--tlsv1.3")
        case nil: break
        }
        if let highest = options.tls.maximumVersion { words += ["--tls-max", highest == .tls1_2 ? "1.2" : "1.3"] }
        if let ciphers = options.tls.ciphers { words += ["--ciphers", quote(ciphers)] }
        var pins = settings.pins
        for path in settings.pinCerts {
            if let certificates = try? Certificates.load(path: path) {
                pins += certificates.compactMap { Certificates.details(der: $0)?.publicKeyPin }
            }
        }
        if !pins.isEmpty { words += ["--pinnedpubkey", quote(pins.joined(separator: ";"))] }
        if settings.checkRevocation { words.append("--cert-status") }
        if let crl = settings.crl { words += ["--crlfile", quote(crl)] }
        if let url = try? HTTPURL(parsing: description.url), let proxy = options.proxy.explicitProxy(forScheme: url.scheme) {
            words += ["--proxy", quote(proxy)]
            // af verifies an HTTPS proxy as it verifies the server; curl has options of its own.
            if options.proxy.httpsProxy(forScheme: url.scheme) != nil {
                if settings.verify == .off {
                    words.append("--proxy-insecure")
                } else if let bundle = caBundle {
                    words += [FileIO.isCertificateDirectory(bundle) ? "--proxy-capath" : "--proxy-cacert", quote(bundle)]
                }
            }
        }
        for entry in options.resolve { words += ["--resolve", quote(entry)] }
        if let socket = options.unixSocketPath { words += ["--unix-socket", quote(socket)] }
        if let interface = options.interface { words += ["--interface", quote(interface)] }
        switch options.ipVersion {
        case .v4: words.append("--ipv4")
        case .v6: words.append("--ipv6")
        case .any: break
        }
        if options.pathAsIs { words.append("--path-as-is") }
        if let limit = options.maxFileSize { words += ["--max-filesize", "\(limit)"] }
        return words
    }

    private static func number(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value))" : "\(value)"
    }

    /// Quotes a word for a POSIX shell; plain words stay bare.
    static func quote(_ word: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:@%+=")
        if !word.isEmpty, word.allSatisfy({ safe.contains($0) }) { return word }
        return "'" + word.replacingBytes(of: "'", with: "'\\''") + "'"
    }

    /// Quotes a value inside a curl `-F` specification when it holds `;`, `,` or `"`.
    private static func formQuoted(_ value: String) -> String {
        // Bytes, not characters: a quote followed by a combining mark is still a quote to curl.
        guard ";,\"".utf8.contains(where: value.containsByte) else { return value }
        return "\"" + value.replacingBytes(of: "\\", with: "\\\\").replacingBytes(of: "\"", with: "\\\"") + "\""
    }
}
