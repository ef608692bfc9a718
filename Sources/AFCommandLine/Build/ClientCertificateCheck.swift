@_spi(Locking) import AFEngine

/// `--cert`, `--cert-key` and `--cert-key-pass` checked before anything is sent: a file that
/// is no PEM certificate or key, a key that is not the certificate's, or a pass phrase that
/// does not open it used to surface as a failed TLS handshake (exit 7, in OpenSSL's words),
/// and an encrypted key without a pass phrase made OpenSSL ask on the terminal.
enum ClientCertificateCheck {
    /// The pass phrase for the transfer: `--cert-key-pass`, or one asked for on the terminal
    /// when the key is encrypted and none was given (as HTTPie asks). `certificateFile` and
    /// `keyFile` are where the files are read (`ReadOnceFiles`: a pipe or FIFO is checked as
    /// the copy the handshake reads too); messages name `settings`' paths.
    static func passPhrase(settings: Settings, certificateFile: String?, keyFile: String?, environment: Environment) throws(CommandFailure) -> String? {
        guard let certificatePath = settings.cert else { return settings.certKeyPass }
        // curl's `--cert FILE:PASSWORD`: a file by the name before the colon and none by the
        // whole. The message names the file alone: the rest is a pass phrase.
        if let colon = certificatePath.firstIndex(of: ":"), case let file = String(certificatePath[..<colon]), !file.isEmpty,
           !FileSystem.exists(certificatePath), FileSystem.exists(file) {
            throw .usage("--cert names '\(Quote.argument(file))' and, after ':', what curl's --cert FILE:PASSWORD takes as its pass phrase; in af, give --cert=FILE --cert-key-pass=PASSWORD")
        }
        // Each file is looked at and read once.
        let certificate = try FileReading.regularFile(atPath: certificateFile ?? certificatePath, item: "--cert")
        var key: [UInt8]?
        if let keyPath = settings.certKey {
            key = try FileReading.regularFile(atPath: keyFile ?? keyPath, item: "--cert-key")
            if key == nil { return settings.certKeyPass }
        }
        guard let certificate else { return settings.certKeyPass }
        let keyPath = settings.certKey ?? certificatePath
        let keyItem = settings.certKey == nil ? "--cert" : "--cert-key"
        var passPhrase = settings.certKeyPass
        var asked = false
        while true {
            switch problem(certificatePath: certificatePath, certificate: certificate, keyPath: settings.certKey, key: key, passPhrase: passPhrase) {
            case nil:
                return passPhrase
            case .noCertificate(let looksBinary)?:
                let remedy = looksBinary
                    ? "; it looks like DER or PKCS#12, which af does not read: convert it (openssl x509 -inform DER -in FILE -out FILE.pem)"
                    : "; name a file with a -----BEGIN CERTIFICATE----- block"
                throw .unreadable("cannot use '\(Quote.argument(certificatePath))' (from '--cert'): it holds no PEM certificate\(remedy)")
            case .noPrivateKey?:
                if settings.certKey == nil {
                    throw .unreadable("cannot use '\(Quote.argument(certificatePath))' (from '--cert'): it holds a certificate but no private key; give the key's file with --cert-key")
                }
                throw .unreadable("cannot use '\(Quote.argument(keyPath))' (from '--cert-key'): it holds no PEM private key; name a file with a -----BEGIN PRIVATE KEY----- block")
            case .keyDoesNotMatch?:
                throw .unreadable("cannot use '\(Quote.argument(keyPath))' (from '\(keyItem)'): its private key is not the one of the certificate in '\(Quote.argument(certificatePath))'; give the matching key")
            case .wrongPassPhrase?:
                let source = asked ? "the pass phrase typed" : "--cert-key-pass"
                throw .unreadable("cannot use '\(Quote.argument(keyPath))' (from '\(keyItem)'): \(source) does not decrypt its private key; check the pass phrase")
            case .passPhraseNeeded?:
                passPhrase = try prompt(keyPath: keyPath, environment: environment, allowed: !settings.ignoreStdin)
                asked = true
            }
        }
    }

    /// The engine's verdict on one combination of files and pass phrase, made once per process:
    /// every line of a batch that names the same files asks again, and an encrypted key costs
    /// a key derivation each time.
    private static func problem(certificatePath: String, certificate: [UInt8], keyPath: String?, key: [UInt8]?, passPhrase: String?) -> ClientIdentity.Problem? {
        let memoKey = [certificatePath, keyPath ?? "", passPhrase ?? "", passPhrase == nil ? "-" : "+"].joined(separator: "\u{0}")
        if let known = verdicts.withLock({ $0[memoKey] }) { return known }
        let verdict = ClientIdentity.problem(certificate: certificate, key: key, passPhrase: passPhrase)
        verdicts.withLock { $0[memoKey] = verdict }
        return verdict
    }

    private static let verdicts = Locked<[String: ClientIdentity.Problem?]>([:])

    /// Reads the key's pass phrase from the terminal with echo off; a usage error when af may
    /// not ask (standard input ignored, a line of af batch) or has no terminal to ask on.
    private static func prompt(keyPath: String, environment: Environment, allowed: Bool) throws(CommandFailure) -> String {
        let key = Quote.argument(keyPath)
        guard allowed else {
            throw .usage("the private key in '\(key)' is encrypted, and af may not ask for its pass phrase with standard input ignored (-I, and on every line of af batch); give --cert-key-pass=PASS")
        }
        guard environment.stdinIsTerminal else {
            throw .usage("the private key in '\(key)' is encrypted and standard input is not a terminal to ask for its pass phrase on; give --cert-key-pass=PASS")
        }
        return Authentication.readSecret(question: "Pass phrase for \(key): ", environment: environment)
    }
}
