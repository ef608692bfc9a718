internal import CCurl
internal import COpenSSL

/// Hooks into the TLS handshake that libcurl runs with OpenSSL.
///
/// libcurl hands us each new `SSL_CTX` before the handshake; we add pinned certificates as
/// trust anchors and install a certificate-verification callback that replaces OpenSSL's:
/// it verifies the chain (unless verification is disabled), then asks the host's evaluator
/// about it. A refusal there aborts the handshake, so the server never sees a request byte.
enum TLSHandshake {
    static let contextCallback: afcurl_sslctx_cb = { _, sslContext, userdata in
        guard let sslContext, let userdata else { return CURLE_OK }
        let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
        transfer.handshakeStarted = true
        let context = OpaquePointer(sslContext)
        if !transfer.trustSettings.verifyPeer, transfer.trust != nil {
            // Verification is off but an evaluator still judges the chain: its refusal
            // must abort the handshake, which OpenSSL only does in peer-verify mode.
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        }
        // The callback gets the transfer unretained. A connection outlives its transfer in
        // libcurl's pool, so the callback must never run after the handshake that this
        // transfer waits for: with renegotiation refused, a reused connection (even one whose
        // server asks to renegotiate) never verifies again, and a new connection gets a new
        // context from the transfer that opens it.
        afssl_ctx_disable_renegotiation(context)
        SSL_CTX_set_cert_verify_callback(context, verifyCallback, userdata)
        // Told when the server asks for a client certificate the transfer does not have:
        // a server that then refuses the connection is named for it.
        SSL_CTX_set_ex_data(context, 0, userdata)
        SSL_CTX_set_client_cert_cb(context, clientCertificateCallback)
        return CURLE_OK
    }

    /// OpenSSL asks for a client certificate when the server requested one and none was set:
    /// the transfer notes that it had none, and none is given.
    static let clientCertificateCallback: @convention(c) (OpaquePointer?, UnsafeMutablePointer<OpaquePointer?>?, UnsafeMutablePointer<OpaquePointer?>?) -> Int32 = { ssl, _, _ in
        guard let ssl, let context = SSL_get_SSL_CTX(ssl), let userdata = SSL_CTX_get_ex_data(context, 0) else { return 0 }
        Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue().clientCertificateRequested = true
        return 0
    }

    static let verifyCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { store, userdata in
        guard let store, let userdata else { return 0 }
        let transfer = Unmanaged<Transfer>.fromOpaque(userdata).takeUnretainedValue()
        if let proxy = transfer.httpsProxy, isProxyHandshake(store, proxy: proxy.host, server: transfer.url.host) {
            return verifyProxy(store, proxy: proxy.authority, transfer: transfer)
        }
        // Pinned certificates are trust anchors for the server alone: added here, once the
        // handshake is known to be the server's, to the store of its connection's context
        // (libcurl makes one for each new connection), not to an HTTPS proxy's.
        if !transfer.trustSettings.anchors.isEmpty, let trusted = X509_STORE_CTX_get0_store(store) {
            for der in transfer.trustSettings.anchors {
                if let certificate = Certificates.decode(der: der) {
                    X509_STORE_add_cert(trusted, certificate)
                    X509_free(certificate)
                }
            }
        }
        transfer.handshakeSeen = true
        var chain: [ServerCertificate] = []
        func collect(_ certificate: OpaquePointer?) {
            guard let certificate, let entry = Certificates.serverCertificate(certificate) else { return }
            if !chain.contains(entry) { chain.append(entry) }
        }
        collect(X509_STORE_CTX_get0_cert(store))
        let untrusted = X509_STORE_CTX_get0_untrusted(store)
        for index in 0..<afssl_stack_x509_num(untrusted) { collect(afssl_stack_x509_value(untrusted, index)) }
        transfer.serverChain = chain
        let host = transfer.url.host
        if transfer.trustSettings.verifyPeer {
            guard X509_verify_cert(store) == 1 else {
                let code = X509_STORE_CTX_get_error(store)
                var reason = verificationReason(code)
                var problem = problem(forVerificationError: code)
                // A leaf sent without the intermediate that links it to a root (a common server
                // mistake, which browsers paper over) reads like a private CA; its issuer says
                // which it is.
                if code == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY || code == X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE,
                   afssl_stack_x509_num(untrusted) <= 1, let leaf = X509_STORE_CTX_get0_cert(store), X509_check_issued(leaf, leaf) != X509_V_OK {
                    reason += " (the server sent its certificate alone, without that of its issuer '\(MessageQuote.capped(Certificates.details(of: leaf).issuer))')"
                    problem = .issuerNotSent
                }
                // Which certificate is out of date, and since or until when: the server's
                // own, or one above it, and a clock that is wrong, tell apart by the dates.
                if code == X509_V_ERR_CERT_HAS_EXPIRED || code == X509_V_ERR_CERT_NOT_YET_VALID, let current = X509_STORE_CTX_get_current_cert(store) {
                    let details = Certificates.details(of: current)
                    let when = code == X509_V_ERR_CERT_HAS_EXPIRED ? "was valid until \(details.notAfter)" : "is valid from \(details.notBefore)"
                    reason += " ('\(MessageQuote.capped(details.subject))' \(when))"
                }
                transfer.fail(.transport(TransportFailure(
                    kind: .tls,
                    message: "the certificate of \(host) is not trusted: \(reason)",
                    cause: .untrustedCertificate(code: code, problem: problem)
                )))
                return 0
            }
            transfer.chainVerified = true
            let built = X509_STORE_CTX_get0_chain(store)
            for index in 0..<afssl_stack_x509_num(built) { collect(afssl_stack_x509_value(built, index)) }
        } else {
            X509_STORE_CTX_set_error(store, X509_V_OK)
        }
        if let trust = transfer.trust {
            do throws(ServerTrustFailure) {
                let notes = try trust.evaluate(chain, forHost: host)
                if !notes.isEmpty { transfer.pinResult = notes.joined(separator: "; ") }
            } catch {
                transfer.fail(.transport(TransportFailure(kind: .pinning, message: "pinning failed: \(error.message)")))
                X509_STORE_CTX_set_error(store, X509_V_ERR_APPLICATION_VERIFICATION)
                return 0
            }
        }
        return 1
    }

    /// Whether the handshake `store` verifies is the HTTPS proxy's rather than the server's
    /// (libcurl hands both to the same hooks): the name it was sent for is the proxy's.
    /// libcurl sends no name for an address, so a handshake without one is the proxy's only
    /// when the proxy is an address and the server is not. Anything else is taken for the
    /// server's, which is judged the stricter way.
    private static func isProxyHandshake(_ store: OpaquePointer, proxy: String, server: String) -> Bool {
        guard let raw = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()) else { return false }
        func isAddress(_ host: String) -> Bool { host.contains(":") || host.allSatisfy { $0 == "." || $0.isASCII && $0.isNumber } }
        guard let name = SSL_get_servername(OpaquePointer(raw), TLSEXT_NAMETYPE_host_name) else {
            return isAddress(proxy) && !isAddress(server)
        }
        let sent = String(cString: name).lowercased()
        return sent == proxy.lowercased() && sent != server.lowercased()
    }

    /// Verifies an HTTPS proxy's chain as OpenSSL would (libcurl checks its name after): the
    /// server's pins and evaluators are not the proxy's, and its chain is not the server's.
    private static func verifyProxy(_ store: OpaquePointer, proxy: String, transfer: Transfer) -> Int32 {
        guard transfer.proxyTrustSettings.verifyPeer else {
            X509_STORE_CTX_set_error(store, X509_V_OK)
            return 1
        }
        guard X509_verify_cert(store) == 1 else {
            let code = X509_STORE_CTX_get_error(store)
            transfer.fail(.transport(TransportFailure(
                kind: .tls,
                message: "the certificate of the proxy \(proxy) is not trusted: \(verificationReason(code))",
                cause: .untrustedProxyCertificate(code: code, problem: problem(forVerificationError: code))
            )))
            return 0
        }
        return 1
    }

    /// OpenSSL's words for a chain verification's error `code`.
    static func verificationReason(_ code: Int32) -> String {
        X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
    }

    /// The class of a failed chain verification.
    static func problem(forVerificationError code: Int32) -> TransportFailure.TrustProblem {
        switch code {
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
             X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
            return .unknownIssuer
        case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CERT_NOT_YET_VALID:
            return .validityDates
        case X509_V_ERR_CERT_REVOKED:
            return .revoked
        default:
            return .other
        }
    }

    /// The negotiated protocol version and cipher of the transfer's connection, and whether
    /// its TLS session was resumed.
    static func sessionDetails(of easy: EasyHandle) -> (version: String, cipher: String, resumed: Bool) {
        var info: UnsafeMutableRawPointer?
        guard afcurl_easy_getinfo_ptr(easy.raw, CURLINFO_TLS_SSL_PTR, &info) == CURLE_OK, let info else {
            return ("unknown", "unknown", false)
        }
        let session = info.assumingMemoryBound(to: curl_tlssessioninfo.self).pointee
        guard session.backend == CURLSSLBACKEND_OPENSSL, let internals = session.internals else {
            return ("unknown", "unknown", false)
        }
        let ssl = OpaquePointer(internals)
        let version = SSL_get_version(ssl).map { String(cString: $0) } ?? "unknown"
        let cipher = SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_get_name($0) }.map { String(cString: $0) } ?? "unknown"
        return (version, cipher, SSL_session_reused(ssl) == 1)
    }
}
