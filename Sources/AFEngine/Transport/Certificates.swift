internal import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// Certificate reading and hashing with OpenSSL.
public enum Certificates {
    /// Reads every certificate in a PEM file, or the one certificate in a DER file, as DER.
    public static func load(path: String) throws(AFError) -> [[UInt8]] {
        // A directory opens (for reading, as a stream) and then reads as nothing at all.
        if FileIO.isDirectory(path) {
            throw .inputUnreadable(path: path, reason: "it is a directory; name a certificate file")
        }
        guard let bio = BIO_new_file(path, "rb") else {
            let reason = POSIXFailure(code: errno).description
            ERR_clear_error()
            throw .inputUnreadable(path: path, reason: reason)
        }
        defer { BIO_free(bio) }
        var result: [[UInt8]] = []
        while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
            result.append(der(of: certificate))
            X509_free(certificate)
        }
        ERR_clear_error()
        if result.isEmpty {
            _ = BIO_ctrl(bio, BIO_CTRL_RESET, 0, nil)
            if let certificate = d2i_X509_bio(bio, nil) {
                result.append(der(of: certificate))
                X509_free(certificate)
            }
            ERR_clear_error()
        }
        guard !result.isEmpty else {
            throw .inputUnreadable(path: path, reason: "it holds no PEM or DER certificate")
        }
        return result
    }

    /// What a file of trust material holds, for `holdsPEM(_:in:)`.
    public enum PEMContent: Sendable {
        /// A certificate (`CERTIFICATE`, `X509 CERTIFICATE` or `TRUSTED CERTIFICATE`), as a
        /// CA bundle holds them.
        case certificate
        /// A certificate revocation list (`X509 CRL`).
        case revocationList
    }

    /// Whether `bytes` hold a PEM block of `content` that OpenSSL reads, as the handshake's
    /// loading of a CA bundle or CRL file needs at least one. Blocks of other kinds, and text
    /// between blocks, are passed over as OpenSSL's loaders pass them over. Only the first
    /// such block is decoded: a bundle may hold hundreds.
    public static func holdsPEM(_ content: PEMContent, in bytes: [UInt8]) -> Bool {
        CurlRuntime.ensureInitialized()
        defer { ERR_clear_error() }
        // Each block kind decoded as the loader decodes it: a `CERTIFICATE` as a plain X.509
        // structure (bytes after it are ignored), a `TRUSTED CERTIFICATE` with its trust
        // settings after it.
        func reads(_ read: (OpaquePointer) -> Bool) -> Bool {
            bytes.withUnsafeBytes { raw -> Bool in
                guard let base = raw.baseAddress, let bio = BIO_new_mem_buf(base, Int32(clamping: raw.count)) else { return false }
                defer { BIO_free(bio) }
                return read(bio)
            }
        }
        switch content {
        case .certificate:
            let plain = { (bio: OpaquePointer) -> Bool in
                guard let certificate = PEM_read_bio_X509(bio, nil, nil, nil) else { return false }
                X509_free(certificate)
                return true
            }
            let trusted = { (bio: OpaquePointer) -> Bool in
                guard let certificate = PEM_read_bio_X509_AUX(bio, nil, nil, nil) else { return false }
                X509_free(certificate)
                return true
            }
            return reads(plain) || reads(trusted)
        case .revocationList:
            return reads { bio in
                guard let list = PEM_read_bio_X509_CRL(bio, nil, nil, nil) else { return false }
                X509_CRL_free(list)
                return true
            }
        }
    }

    /// Details of a certificate for display.
    public struct Details: Sendable, Equatable {
        /// The subject distinguished name, one line.
        public var subject: String
        /// The issuer distinguished name, one line.
        public var issuer: String
        /// Start of validity, as OpenSSL prints it.
        public var notBefore: String
        /// End of validity, as OpenSSL prints it.
        public var notAfter: String
        /// Colon-separated upper-case hex SHA-256 of the DER encoding.
        public var sha256Fingerprint: String
        /// `sha256//BASE64` of the SubjectPublicKeyInfo.
        public var publicKeyPin: String
    }

    /// Subject, issuer, validity, fingerprint and pin of a DER certificate.
    public static func details(der: [UInt8]) -> Details? {
        defer { ERR_clear_error() }
        guard let certificate = decode(der: der) else { return nil }
        defer { X509_free(certificate) }
        return details(of: certificate, der: der)
    }

    /// The same of a certificate OpenSSL holds (one the handshake is verifying).
    static func details(of certificate: OpaquePointer, der: [UInt8]? = nil) -> Details {
        let fingerprint = Hex.encode(sha256(der ?? Self.der(of: certificate)), uppercase: true, separator: ":")
        return Details(
            subject: name(X509_get_subject_name(certificate)),
            issuer: name(X509_get_issuer_name(certificate)),
            notBefore: time(X509_get0_notBefore(certificate)),
            notAfter: time(X509_get0_notAfter(certificate)),
            sha256Fingerprint: fingerprint,
            publicKeyPin: publicKeyPin(certificate) ?? "unknown"
        )
    }

    /// SHA-256 of bytes.
    public static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        _ = bytes.withUnsafeBytes { raw in
            EVP_Digest(raw.baseAddress, raw.count, &digest, &length, EVP_sha256(), nil)
        }
        return Array(digest.prefix(Int(length)))
    }

    // MARK: Internal helpers

    static func decode(der: [UInt8]) -> OpaquePointer? {
        der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509(nil, &pointer, buffer.count)
        }
    }

    static func der(of certificate: OpaquePointer) -> [UInt8] {
        let length = i2d_X509(certificate, nil)
        guard length > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var pointer: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            _ = i2d_X509(certificate, &pointer)
        }
        return bytes
    }

    static func serverCertificate(_ certificate: OpaquePointer) -> ServerCertificate? {
        guard let pin = publicKeyPin(certificate) else { return nil }
        return ServerCertificate(der: der(of: certificate), publicKeyPin: pin)
    }

    static func publicKeyPin(_ certificate: OpaquePointer) -> String? {
        guard let key = X509_get_X509_PUBKEY(certificate) else { return nil }
        let length = i2d_X509_PUBKEY(key, nil)
        guard length > 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        bytes.withUnsafeMutableBufferPointer { buffer in
            var pointer: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            _ = i2d_X509_PUBKEY(key, &pointer)
        }
        return "sha256//" + Base64.encode(sha256(bytes))
    }

    /// The DNS names and IP addresses a certificate (DER) is for, from its subjectAltName,
    /// in their order; empty when it has none or does not decode.
    static func subjectAltNames(der: [UInt8]) -> [String] {
        // Nothing left on this thread's OpenSSL error queue, where libcurl (and OpenSSL's own
        // PEM reading) would take it for an error of theirs.
        defer { ERR_clear_error() }
        guard let certificate = decode(der: der) else { return [] }
        defer { X509_free(certificate) }
        guard let names = X509_get_ext_d2i(certificate, NID_subject_alt_name, nil, nil) else { return [] }
        defer { afssl_general_names_free(names) }
        var result: [String] = []
        for index in 0..<afssl_general_names_num(names) {
            var type: Int32 = 0
            guard let name = afssl_general_names_value(names, index), let content = afssl_general_name_content(name, &type),
                  let data = ASN1_STRING_get0_data(content) else { continue }
            let bytes = Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(content))))
            if type == afssl_gen_dns() {
                result.append(String(decoding: bytes, as: UTF8.self))
            } else if bytes.count == 4 {
                result.append(bytes.map(String.init).joined(separator: "."))
            } else if bytes.count == 16 {
                var text = [CChar](repeating: 0, count: 64)
                let written = bytes.withUnsafeBytes { raw in inet_ntop(AF_INET6, raw.baseAddress, &text, socklen_t(text.count)) }
                if written != nil { result.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)) }
            }
        }
        return result
    }

    private static func name(_ name: OpaquePointer?) -> String {
        guard let name, let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        X509_NAME_print_ex(bio, name, 0, afssl_name_flags())
        return read(bio)
    }

    private static func time(_ time: UnsafePointer<ASN1_TIME>?) -> String {
        guard let time, let bio = BIO_new(BIO_s_mem()) else { return "" }
        defer { BIO_free(bio) }
        ASN1_TIME_print(bio, time)
        return read(bio)
    }

    private static func read(_ bio: OpaquePointer) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        while true {
            let count = BIO_read(bio, &buffer, Int32(buffer.count))
            if count <= 0 { break }
            bytes += buffer.prefix(Int(count))
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
