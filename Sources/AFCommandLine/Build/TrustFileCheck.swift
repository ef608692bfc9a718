@_spi(Locking) import AFEngine

/// A CA bundle (`--verify=PATH`, or one an environment variable names) and a CRL (`--crl`)
/// checked before anything is sent, as `--cert` is: a file that holds no PEM certificate (or
/// revocation list) surfaced as a failed TLS handshake (exit 7) after connecting, and never
/// for a plain-HTTP URL. Only regular files are read; a directory of hashed certificates, or
/// a FIFO that only its one reader may read, is left to the handshake.
enum TrustFileCheck {
    /// What the file is for, which decides what it must hold and what to say.
    enum Kind {
        case caBundle
        case revocationList
    }

    /// Why the file at `path` cannot serve as `kind`, or nil when it can (or af cannot tell
    /// before the handshake: a directory of hashed certificates, a FIFO). `item` names where
    /// the path came from, for a read error.
    static func problem(_ kind: Kind, path: String, item: String) throws(CommandFailure) -> String? {
        let memoKey = (kind == .caBundle ? "b\u{0}" : "c\u{0}") + path
        if let known = verdicts.withLock({ $0[memoKey] }) { return known }
        guard !FileIO.isDirectory(path), let bytes = try FileReading.regularFile(atPath: path, item: item) else { return nil }
        let verdict: String?
        switch kind {
        case .caBundle:
            verdict = Certificates.holdsPEM(.certificate, in: bytes) ? nil
                : bytes.first == 0x30
                ? "it looks like a DER certificate, and a CA bundle is PEM: convert it (openssl x509 -inform DER -in FILE -out FILE.pem)"
                : "it holds no PEM certificate; a CA bundle is a file of -----BEGIN CERTIFICATE----- blocks (or a directory of hashed ones)"
        case .revocationList:
            verdict = Certificates.holdsPEM(.revocationList, in: bytes) ? nil
                : bytes.first == 0x30
                ? "it looks like a DER revocation list, and --crl takes PEM: convert it (openssl crl -inform DER -in FILE -out FILE.pem)"
                : "it holds no PEM certificate revocation list; name a file with a -----BEGIN X509 CRL----- block"
        }
        verdicts.withLock { $0[memoKey] = .some(verdict) }
        return verdict
    }

    /// Verdicts by kind and path, made once per process: every line of a batch that names the
    /// same file asks again.
    private static let verdicts = Locked<[String: String?]>([:])
}
