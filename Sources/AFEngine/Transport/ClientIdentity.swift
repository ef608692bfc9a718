internal import COpenSSL

/// A client certificate and its private key, checked as the TLS handshake will load them, so
/// that a wrong file or pass phrase is found before anything is sent rather than as a failed
/// handshake. The checks read PEM text, as libcurl's default certificate and key types do.
public enum ClientIdentity {
    /// Why a certificate and key cannot be used.
    public enum Problem: Error, Sendable, Equatable {
        /// The certificate text holds no PEM certificate. `looksBinary`: it starts as DER
        /// (and PKCS#12) files do, so converting it to PEM is the remedy.
        case noCertificate(looksBinary: Bool)
        /// The key text (the certificate's own when no key was given) holds no PEM private key.
        case noPrivateKey
        /// The private key is encrypted and no pass phrase was given.
        case passPhraseNeeded
        /// The pass phrase given does not decrypt the private key.
        case wrongPassPhrase
        /// The private key does not belong to the certificate.
        case keyDoesNotMatch
    }

    /// Checks `certificate` (PEM text) and `key` (PEM text, or nil when the key is in the
    /// certificate's text) with `passPhrase`; nil when the handshake can use them. OpenSSL is
    /// never left to ask for a pass phrase on the terminal.
    public static func problem(certificate: [UInt8], key: [UInt8]?, passPhrase: String?) -> Problem? {
        // OpenSSL set up as the transfers need it (no exit-time cleanup) before its first use.
        CurlRuntime.ensureInitialized()
        // OpenSSL's PEM reading decides by the last error on the queue whether a file ended;
        // one left there by another caller would change the verdict.
        ERR_clear_error()
        defer { ERR_clear_error() }
        guard let x509 = withBIO(certificate, { PEM_read_bio_X509($0, nil, refusePassPhrase, nil) }) else {
            return .noCertificate(looksBinary: certificate.first == 0x30)
        }
        defer { X509_free(x509) }
        let box = PassPhrase(passPhrase.map { Array($0.utf8) })
        let privateKey = withExtendedLifetime(box) {
            withBIO(key ?? certificate) { PEM_read_bio_PrivateKey($0, nil, supplyPassPhrase, Unmanaged.passUnretained(box).toOpaque()) }
        }
        guard let privateKey else {
            guard box.wasAsked else { return .noPrivateKey }
            return passPhrase == nil ? .passPhraseNeeded : .wrongPassPhrase
        }
        defer { EVP_PKEY_free(privateKey) }
        return X509_check_private_key(x509, privateKey) == 1 ? nil : .keyDoesNotMatch
    }

    /// Runs `body` on a read-only memory BIO over `bytes`.
    private static func withBIO<T>(_ bytes: [UInt8], _ body: (OpaquePointer) -> T?) -> T? {
        bytes.withUnsafeBytes { raw -> T? in
            guard let base = raw.baseAddress, let bio = BIO_new_mem_buf(base, Int32(clamping: raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return body(bio)
        }
    }
}

/// The pass phrase handed to OpenSSL's callback, and whether the key asked for one (used on
/// the calling thread only, while OpenSSL reads the key).
private final class PassPhrase {
    let bytes: [UInt8]?
    var wasAsked = false

    init(_ bytes: [UInt8]?) { self.bytes = bytes }

    /// Copies the pass phrase into OpenSSL's buffer: its length, or -1 when there is none or
    /// it does not fit.
    func supply(into buffer: UnsafeMutablePointer<CChar>, size: Int) -> Int32 {
        wasAsked = true
        guard let bytes, bytes.count <= size else { return -1 }
        buffer.withMemoryRebound(to: UInt8.self, capacity: size) { target in
            for (index, byte) in bytes.enumerated() { target[index] = byte }
        }
        return Int32(bytes.count)
    }
}

/// A certificate is never encrypted: OpenSSL gets no pass phrase (and asks nobody for one).
private func refusePassPhrase(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int32, _ writing: Int32, _ user: UnsafeMutableRawPointer?) -> Int32 {
    -1
}

/// Copies the given pass phrase into OpenSSL's buffer, noting that the key asked; -1 (no pass
/// phrase) when none was given or it does not fit.
private func supplyPassPhrase(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int32, _ writing: Int32, _ user: UnsafeMutableRawPointer?) -> Int32 {
    guard let user, let buffer else { return -1 }
    return Unmanaged<PassPhrase>.fromOpaque(user).takeUnretainedValue().supply(into: buffer, size: Int(size))
}
