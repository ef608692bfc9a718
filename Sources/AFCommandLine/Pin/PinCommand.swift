import AFEngine

/// `af pin HOST[:PORT]` and `af pin --file CERT`: the certificate chain with the SHA-256
/// fingerprint and `sha256//` public-key pin of each certificate.
enum PinCommand {
    static func run(positionals: [Positional], settings: Settings, environment: Environment, stdout: OutputChannel, stderr: OutputChannel) throws(CommandFailure) -> Int32 {
        let theme = environment.stdoutIsTerminal && !environment.derived.noColor ? Theme.named(settings.style) : nil
        if let file = settings.pinFile {
            guard positionals.isEmpty else { throw .usage("af pin --file takes no host; got '\(positionals[0].text)'") }
            try FileReading.checkReadable(file, item: "--file")
            // A pipe (`--file <(openssl s_client …)`) or FIFO is read by af, so that a signal
            // ends the wait for its writer (OpenSSL's open of it failed as "interrupted system
            // call", exit 66).
            let readable = try ReadOnceFiles.stablePath(file, item: "--file", environment: environment)
            let certificates: [[UInt8]]
            do {
                certificates = try Certificates.load(path: readable)
            } catch {
                throw .unreadable("cannot read certificates from '\(Quote.argument(file))': \(error.unreadableReason)")
            }
            return stdout.writeResult(render(certificates, theme: theme, served: false), errors: stderr)
        }
        guard positionals.count == 1, let target = positionals.first?.text else {
            throw .usage("usage: af pin HOST[:PORT] or af pin --file CERT.pem")
        }
        let url = try hostURL(target)
        let trust = try TrustConfiguration.make(settings: settings, environment: environment, usesTLS: true)
        if let warning = trust.warning { stderr.writeNotice(warning) }
        let session = Session(configuration: Session.Configuration(trustManager: trust.manager, defaultTrust: trust.defaultTrust))
        let probe = session.probeCertificateChain(url: url, options: try RequestBuilder.transferOptions(settings, environment: environment))
        // A server that takes the connection and says nothing holds the probe until the
        // connect timeout; Ctrl-C or a script's SIGTERM must not wait for it.
        SignalWatcher.install(on: session) { reason in probe.cancel(reason) }
        let (chain, error) = probe.wait()
        let rendered = chain.isEmpty ? nil : render(chain.map(\.der), theme: theme, served: true)
        if let error {
            // The server's failure is the run's error line, not the output's.
            if let rendered { stdout.writeQuietly(rendered) }
            let status = ExitMapping.status(for: error, checkStatus: false)
            let hint = chain.isEmpty ? "" : " (the chain above is what the server presented)"
            stderr.writeError(ExitMapping.message(for: error, attempts: 1, tlsOnly: true, caBundle: settings.verifyBundle) + hint)
            return status
        }
        return rendered.map { stdout.writeResult($0, errors: stderr) } ?? ExitStatus.success
    }

    /// `https://HOST:PORT/` from `HOST`, `HOST:PORT` or a URL.
    static func hostURL(_ target: String) throws(CommandFailure) -> String {
        var text = target
        if text.hasPrefix("https://") { text.removeFirst(8) } else if text.hasPrefix("http://") { text.removeFirst(7) }
        if let slash = text.utf8.firstIndex(of: UInt8(ascii: "/")) { text = String(text[..<slash]) }
        guard !text.isEmpty else { throw .usage("af pin needs a host, such as af pin example.org:443") }
        do {
            return try HTTPURL(parsing: "https://\(text)/").string
        } catch {
            throw .usage("'\(target)' is not a host name with an optional port: \(error.description)")
        }
    }

    /// The chain as text; `served` chains name the leaf.
    static func render(_ certificates: [[UInt8]], theme: Theme?, served: Bool) -> String {
        var out = ""
        for (index, der) in certificates.enumerated() {
            guard let details = Certificates.details(der: der) else { continue }
            let role = served && index == 0 ? " (leaf)" : ""
            if index > 0 { out += "\n" }
            out += Theme.paint("Certificate \(index + 1)\(role)", theme?.headerName ?? "") + "\n"
            out += "  Subject:     \(details.subject)\n"
            out += "  Issuer:      \(details.issuer)\n"
            out += "  Not before:  \(details.notBefore)\n"
            out += "  Not after:   \(details.notAfter)\n"
            out += "  SHA-256:     \(details.sha256Fingerprint)\n"
            out += "  Pin:         " + Theme.paint(details.publicKeyPin, theme?.string ?? "") + "\n"
        }
        return out
    }
}
