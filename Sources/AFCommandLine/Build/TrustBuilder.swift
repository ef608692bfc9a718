import AFEngine

/// Trust evaluation from `--verify`, `--pin`, `--pin-cert`, `--check-revocation`, `--crl`
/// and `--trust-policy` (SPEC §9). Not changed once made: a class, so that the lines of a
/// batch that share one hand on a reference rather than copies of its evaluators.
final class TrustConfiguration: Sendable {
    let manager: ServerTrustManager?
    let defaultTrust: (any ServerTrustEvaluating)?
    /// Printed once on standard error before anything is sent.
    let warning: String?
    /// The CA bundle (a file, or directories of hashed certificates) trusted instead of the
    /// system's roots: `--verify=PATH`'s, or one an environment variable names.
    let caBundle: String?

    init(manager: ServerTrustManager?, defaultTrust: (any ServerTrustEvaluating)?, warning: String?, caBundle: String?) {
        self.manager = manager
        self.defaultTrust = defaultTrust
        self.warning = warning
        self.caBundle = caBundle
    }

    /// The variables that name a CA bundle when `--verify` names none, in the order they are
    /// looked at (the first that is set and not empty counts): requests' (HTTPie's) own, then
    /// those curl reads. `SSL_CERT_DIR` names directories of hashed certificates (separated
    /// by `:`, as OpenSSL reads it).
    static let bundleVariables = ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR"]

    /// `usesTLS`: whether the request's URL is `https`. A CA bundle named by the environment
    /// is checked only then, as curl does: a stale `SSL_CERT_FILE` left by some other tool does
    /// not stop plain HTTP requests (if one is redirected to `https`, the handshake fails on it).
    static func make(settings: Settings, environment: Environment, usesTLS: Bool) throws(CommandFailure) -> TrustConfiguration {
        var extras: [any ServerTrustEvaluating] = []
        if settings.checkRevocation || settings.crl != nil {
            var crlFile: String?
            if let crl = settings.crl {
                try FileReading.checkReadable(crl, item: "--crl")
                // Read for every connection: a pipe is read once, here (`ReadOnceFiles`).
                let file = try ReadOnceFiles.stablePath(crl, item: "--crl", environment: environment)
                crlFile = file
                if let problem = try TrustFileCheck.problem(.revocationList, path: file, item: "--crl") {
                    throw .unreadable("cannot use '\(Quote.argument(crl))' (from '--crl'): \(problem)")
                }
            }
            extras.append(RevocationTrustEvaluator(requireStapledOCSP: settings.checkRevocation, crlFile: crlFile))
        }
        if !settings.pins.isEmpty { extras.append(PublicKeysTrustEvaluator(pins: settings.pins)) }
        if !settings.pinCerts.isEmpty {
            var certificates: [[UInt8]] = []
            for path in settings.pinCerts {
                try FileReading.checkReadable(path, item: "--pin-cert")
                let file = try ReadOnceFiles.stablePath(path, item: "--pin-cert", environment: environment)
                do {
                    certificates += try Certificates.load(path: file)
                } catch {
                    throw .unreadable("cannot use '\(Quote.argument(path))' (from '--pin-cert'): \(error.unreadableReason)")
                }
            }
            extras.append(PinnedCertificatesTrustEvaluator(certificates: certificates))
        }
        var base: any ServerTrustEvaluating = DefaultTrustEvaluator()
        var warning: String?
        var caBundle: String?
        switch settings.verify {
        case .on:
            // Looked up once per environment (a batch makes a configuration per line).
            if let (variable, path) = environment.derived.caBundle {
                if usesTLS, let reason = environment.derived.caBundleProblem() {
                    throw .unreadable("cannot read the CA bundle '\(Quote.argument(path))' that \(variable) names: \(reason); correct \(variable) or unset it")
                }
                var file = path
                if usesTLS, variable != "SSL_CERT_DIR" {
                    // A pipe (`SSL_CERT_FILE=<(…)`) is read once, as --verify's is (`ReadOnceFiles`).
                    file = try ReadOnceFiles.stablePath(path, item: variable, environment: environment)
                    if let problem = try TrustFileCheck.problem(.caBundle, path: file, item: variable) {
                        throw .unreadable("cannot use the CA bundle '\(Quote.argument(path))' that \(variable) names: \(problem); correct \(variable) or unset it")
                    }
                }
                base = DefaultTrustEvaluator(caBundle: file)
                caBundle = file
            }
        case .off:
            base = DisabledTrustEvaluator()
            warning = extras.isEmpty
                ? "warning: certificate verification is off (--verify=no); anyone on the path can read and change this exchange"
                : "warning: certificate verification is off (--verify=no); only the pins are checked"
        case .bundle(let path):
            // A PEM bundle, or a directory of hashed certificates (as requests and curl's
            // --capath take one); a directory was refused as "not a file".
            try FileReading.checkReadable(path, item: "--verify", directoryAllowed: true)
            let bundle = try ReadOnceFiles.stablePath(path, item: "--verify", environment: environment)
            if let problem = try TrustFileCheck.problem(.caBundle, path: bundle, item: "--verify") {
                throw .unreadable("cannot use '\(Quote.argument(path))' (from '--verify'): \(problem)")
            }
            base = DefaultTrustEvaluator(caBundle: bundle)
            caBundle = bundle
        }
        let isPlainDefault = extras.isEmpty && caBundle == nil && settings.verify == .on
        // One evaluator alone is not wrapped: a batch makes this for every line.
        let defaultTrust: (any ServerTrustEvaluating)? = isPlainDefault ? nil : extras.isEmpty ? base : CompositeTrustEvaluator([base] + extras)
        let manager = try settings.trustPolicy.map { path throws(CommandFailure) in
            try TrustPolicyFile.load(path: path, caBundle: caBundle, extras: extras)
        }
        return TrustConfiguration(manager: manager, defaultTrust: defaultTrust, warning: warning, caBundle: caBundle)
    }
}
