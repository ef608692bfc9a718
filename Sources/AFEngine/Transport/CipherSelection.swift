internal import COpenSSL

/// A cipher selection as `TLSOptions.ciphers` holds it: OpenSSL cipher names for TLS 1.2 and
/// earlier, and TLS 1.3 suites (`TLS_…`), separated by colons, commas or spaces. OpenSSL
/// configures the two apart, so they are split here once for the transfer and its check.
public struct CipherSelection: Sendable, Equatable {
    /// The OpenSSL cipher list for TLS 1.2 and earlier, colon-separated; nil when none named.
    public let classic: String?
    /// The TLS 1.3 suites, colon-separated; nil when none named.
    public let modern: String?

    /// Splits `text` into its two lists.
    public init(_ text: String) {
        let names = text.split(whereSeparator: { $0 == ":" || $0 == "," || $0 == " " }).map(String.init)
        let modern = names.filter { $0.hasPrefix("TLS_") }
        let classic = names.filter { !$0.hasPrefix("TLS_") }
        self.classic = classic.isEmpty ? nil : classic.joined(separator: ":")
        self.modern = modern.isEmpty ? nil : modern.joined(separator: ":")
    }

    /// A list OpenSSL takes nothing of.
    public enum Refusal: Sendable, Equatable {
        /// The cipher list for TLS 1.2 and earlier.
        case classic(String)
        /// The TLS 1.3 suites.
        case modern(String)
    }

    /// Which list OpenSSL would refuse when the transfer sets it up (the handshake would fail
    /// before a byte is sent), or nil when it takes both. OpenSSL refuses a list in which it
    /// knows no name at all; names it does not know beside ones it knows are passed over.
    public func refusal() -> Refusal? {
        CurlRuntime.ensureInitialized()
        guard let method = TLS_client_method(), let context = SSL_CTX_new(method) else { return nil }
        defer {
            SSL_CTX_free(context)
            ERR_clear_error()
        }
        if let classic, SSL_CTX_set_cipher_list(context, classic) != 1 { return .classic(classic) }
        if let modern, SSL_CTX_set_ciphersuites(context, modern) != 1 { return .modern(modern) }
        return nil
    }
}
