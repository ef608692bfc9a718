import AFEngine

/// The one function from `AFError` to an exit status and an error line (SPEC §5).
enum ExitMapping {
    /// The exit status for the outcome of a request.
    static func status(for error: AFError?, checkStatus: Bool) -> Int32 {
        // A retrier's own error decides (an --auth-cmd that failed while answering a 401).
        guard let error = error?.underlyingError else { return ExitStatus.success }
        switch error {
        case .invalidRequest: return ExitStatus.usage
        case .inputUnreadable: return ExitStatus.noInput
        case .adaptationFailed: return ExitStatus.network
        case .transport(let failure):
            switch failure.kind {
            case .connectTimeout, .timeout: return ExitStatus.timeout
            case .tls: return ExitStatus.tls
            case .pinning: return ExitStatus.pinning
            default: return ExitStatus.network
            }
        case .responseValidationFailed(let status, _):
            guard checkStatus else { return ExitStatus.success }
            switch status {
            case 300..<400: return ExitStatus.redirection
            case 400..<500: return ExitStatus.clientError
            case 500..<600: return ExitStatus.serverError
            // 1xx as a final answer, or a status outside HTTP's classes: a protocol failure.
            default: return ExitStatus.network
            }
        case .tooManyRedirects: return ExitStatus.tooManyRedirects
        case .redirectFailed: return ExitStatus.network
        case .output: return ExitStatus.output
        case .cancelled(.interrupted): return ExitStatus.interrupted
        case .cancelled(.terminated): return ExitStatus.terminated
        case .cancelled(.explicitly), .cancelled(.sessionShutDown): return ExitStatus.network
        case .requestRetryFailed: return ExitStatus.network
        }
    }

    /// The engine's account of a failure with what to do about it on this command line.
    private static func advice(_ message: String, for cause: TransportFailure.Cause, attempts: Int, tlsOnly: Bool, caBundle: String?) -> String {
        // `af pin` speaks only TLS: a plain-HTTP port has no certificate to show.
        let plainHTTP = tlsOnly ? "it has no certificate to pin" : "use http://"
        switch cause {
        case .untrustedCertificate(_, let problem):
            switch problem {
            case .unknownIssuer:
                // A bundle given already: another one is what it takes.
                if let caBundle { return message + "; '\(Quote.argument(caBundle))' (from --verify) holds no certificate of the CA that issued it: give --verify that CA's certificate, or --pin-cert for a self-signed certificate" }
                return message + "; use --verify=CA.pem for a private CA, or --pin-cert for a self-signed certificate"
            case .issuerNotSent:
                return message + "; if that issuer is a public CA's, the server must send its certificate too (tell the server's owner); if it is a private CA, "
                    + (caBundle.map { "'\(Quote.argument($0))' (from --verify) must hold its certificate" } ?? "use --verify=CA.pem")
            case .validityDates: return message + "; check the certificate's dates (and this machine's clock)"
            case .revoked: return message + "; the server's certificate was revoked; tell its owner"
            case .other: return message + "; see what the server presents with 'af pin --verify=no HOST'"
            }
        case .untrustedProxyCertificate(_, let problem):
            switch problem {
            case .unknownIssuer, .issuerNotSent: return message + "; use --verify=CA.pem for the proxy's private CA (--verify applies to an HTTPS proxy too)"
            case .validityDates: return message + "; check the proxy certificate's dates (and this machine's clock)"
            case .revoked, .other: return message + "; check --proxy and the proxy's certificate"
            }
        case .handshakeFailed:
            return message + "; check --ssl, --ciphers, --cert and the server's TLS setup"
        case .nameNotServed:
            return message + "; check the host name (to reach an address under a name, give the name and --resolve=NAME:PORT:ADDRESS)"
        case .noCommonTLSVersion(let requiredTLS13, let cappedAtTLS12):
            if requiredTLS13 { return message + "; --ssl=tls1.3 allows TLS 1.3 only: leave it out to allow TLS 1.2" }
            if cappedAtTLS12 { return message + "; --tls-max=tls1.2 allows TLS 1.2 only: leave it out to allow TLS 1.3" }
            return message + "; af speaks TLS 1.2 and 1.3, and a server that speaks only older versions needs upgrading"
        case .clientCertificateRefused(let given):
            return message + (given
                ? "; check that --cert is the certificate this server expects, issued by a CA it trusts, and still valid"
                : "; give yours with --cert (and --cert-key when its key is a separate file)")
        case .unusableTrustFile(.caBundle):
            return message + "; a CA bundle is a file of PEM certificates (or a directory of hashed ones): check --verify, or the variable that names it (" + TrustConfiguration.bundleVariables.joined(separator: ", ") + ")"
        case .unusableTrustFile(.crl):
            return message + "; --crl takes a PEM certificate revocation list"
        case .unusableTrustFile(.clientIdentity):
            return message + "; --cert and --cert-key take PEM files, and an encrypted key needs its pass phrase (--cert-key-pass)"
        case .connectTimedOut(_, let total):
            return message + "; check the address, or raise \(total ? "--timeout" : "--connect-timeout")"
        case .resolveTimedOut(_, let total):
            return message + "; check the name and the DNS servers in /etc/resolv.conf, or raise \(total ? "--timeout" : "--connect-timeout")"
        case .addressForAnotherPort(_, let needed):
            return message + "; --resolve=\(needed):ADDRESS gives one for this port too"
        case .tunnelTimedOut(_, let total):
            return message + "; check that what listens there is an HTTP proxy, or raise \(total ? "--timeout" : "--connect-timeout")"
        case .handshakeTimedOut(_, let total):
            return message + "; the server took the connection but did not answer in TLS: if that port serves plain HTTP, \(plainHTTP); otherwise raise \(total ? "--timeout" : "--connect-timeout")"
        case .closedDuringHandshake:
            return message + "; if it does so every time, the server may refuse what af offers: check --ssl, --ciphers, --cert and the server's TLS setup"
        case .responseTimedOut(let limit):
            return limit == nil ? message : message + "; raise --timeout if it needs longer"
        case .tooManyHeaderLines:
            return message + "; raise --max-headers if you trust the server"
        case .bodyTooLarge(let limit):
            return "response body exceeds --max-filesize\(limit.map { " (\($0) bytes)" } ?? ""); raise it if you expect a body this large"
        case .inflatedTooFar:
            return message + "; if you trust the server, --max-filesize=SIZE accepts up to SIZE decoded (or -d saves the compressed bytes)"
        case .tunnelRefused(let status):
            // What to do about a 407 depends on the credentials given (`Execution.advice`).
            return status == 407 ? message : message + "; check --proxy and the proxy's rules"
        case .unansweredOnReusedConnection:
            // A GET was already sent again on new connections; a POST is sent again only when
            // the user says so. A request that was retried had both already.
            guard attempts == 1 else { return message }
            return message + "; --retry sends it again (and --retry-all-methods a POST, which the server may have processed)"
        case .refusedRepeatedly:
            return message + "; it takes no new requests for now: try again later (--retry=N --retry-delay=SECONDS waits and tries again)"
        case .notATLSAnswer:
            return message + "; the server did not answer in TLS: if that port serves plain HTTP, \(plainHTTP)"
        case .notAnHTTP1Answer:
            return message + "; if that port serves HTTPS, use https://; a server that speaks only HTTP/2 needs --http-version=2-prior-knowledge"
        case .outOfDescriptors(let limit?):
            return message + "; af may have at most \(limit) files open here: \(POSIXFailure.descriptorRemedy)"
        case .outOfDescriptors(nil):
            return message + "; the system has as many files open as it allows: close some programs, or in af batch lower --parallel"
        case .unusableInterface:
            return message + "; --interface takes the name of one of this machine's network interfaces or one of its addresses ('ip -brief address' lists them)"
        }
    }

    /// What to do about a redirect status that `--check-status` refused (`head` is the
    /// response that ended the request): `--follow` when it was not given and the response
    /// could have been followed; when there is no `Location` to follow, that instead. Empty
    /// for a 300, a 304 and anything that is no redirect.
    static func redirectHint(for error: AFError, head: ResponseHead?, follow: Bool) -> String {
        guard case .responseValidationFailed(let status, _) = error.underlyingError, let head, head.status == status,
              RedirectPolicy.redirectStatuses.contains(status) else { return "" }
        if RedirectPolicy.isFollowable(head) { return follow ? "" : "; add --follow to follow redirects" }
        return "; the response has no Location to follow"
    }

    /// The text after `af: error: `, with what to do where there is something to do;
    /// `tlsOnly` for a command that speaks only TLS (`af pin`); `caBundle`: the CA bundle
    /// `--verify` named, which a certificate af could not verify was checked against.
    static func message(for error: AFError, attempts: Int, tlsOnly: Bool = false, caBundle: String? = nil) -> String {
        let error = error.underlyingError
        let after = attempts > 1 ? " (after \(attempts) attempts)" : ""
        switch error {
        case .responseValidationFailed(let status, let reason):
            return "server answered \(status) \(Quote.argument(reason))\(after)".replacingBytes(of: "  ", with: " ")
        case .tooManyRedirects(let limit):
            // "more than 0 redirects" would read as a count gone wrong.
            if limit == 0 { return "the server redirected, and --max-redirects=0 follows none; raise it, or leave out --follow to get the redirect itself" }
            return "\(error.description); raise --max-redirects or check for a redirect loop"
        case .transport(let failure):
            if let cause = failure.cause { return advice(failure.message, for: cause, attempts: attempts, tlsOnly: tlsOnly, caBundle: caBundle) + after }
            switch failure.kind {
            case .pinning:
                return failure.message + "; check the pin with 'af pin HOST'"
            default:
                return failure.message + after
            }
        case .output(let failure) where failure.kind == .fileExists:
            return failure.message + "; use --overwrite to replace it or -c to resume it"
        case .output(let failure) where failure.kind == .directoryMissing:
            return failure.message + "; add --create-dirs to create it"
        case .cancelled(.interrupted): return "interrupted"
        case .cancelled(.terminated): return "terminated"
        default:
            return error.description + after
        }
    }
}

extension Response {
    /// How many times the request was tried: one, and one more for each retry. Redirect hops
    /// are not tries: "(after 2 attempts)" once followed a redirect and a single failure.
    var tries: Int { 1 + attempts.reduce(0) { $0 + ($1.retryDelay == nil ? 0 : 1) } }

    /// How many of those tries were retries (`--retry`'s), not tries again with renewed
    /// credentials (an `--auth-cmd` refresh).
    var retries: Int { attempts.reduce(0) { $0 + ($1.retryDelay == nil || $1.refreshed ? 0 : 1) } }
}

extension AFError {
    /// Why an input could not be read, without naming it again, for a message that names it
    /// already; any other error's description.
    var unreadableReason: String {
        if case .inputUnreadable(_, let reason) = self { return reason }
        return description
    }
}
