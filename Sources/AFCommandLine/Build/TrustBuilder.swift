import AFEngine

/// Trust evaluation from `--verify`, `--pin`, `--pin-cert`, `--check-revocation`, `--crl`
/// and `--trust-policy` (SPEC §9).
struct TrustConfiguration: Sendable {
    var manager: ServerTrustManager?
    var defaultTrust: (any ServerTrustEvaluating)?
    /// Printed once on standard error before anything is sent.
    var warning: String?

    static func make(settings: Settings, environment: Environment) throws(CommandFailure) -> TrustConfiguration {
        var extras: [any ServerTrustEvaluating] = []
        if settings.checkRevocation || settings.crl != nil {
            if let crl = settings.crl { try FileReading.checkReadable(crl, item: "--crl") }
            extras.append(RevocationTrustEvaluator(requireStapledOCSP: settings.checkRevocation, crlFile: settings.crl))
        }
        if !settings.pins.isEmpty { extras.append(PublicKeysTrustEvaluator(pins: settings.pins)) }
        if !settings.pinCerts.isEmpty {
            var certificates: [[UInt8]] = []
            for path in settings.pinCerts {
                do {
                    certificates += try Certificates.load(path: path)
                } catch {
                    throw .unreadable("cannot use --pin-cert '\(path)': \(error.description)")
                }
            }
            extras.append(PinnedCertificatesTrustEvaluator(certificates: certificates))
        }
        // Client credentials are checked before anything is sent, TLS or not (exit 66).
        if let cert = settings.cert { try FileReading.checkReadable(cert, item: "--cert") }
        if let key = settings.certKey { try FileReading.checkReadable(key, item: "--cert-key") }
        var base: any ServerTrustEvaluating = DefaultTrustEvaluator()
        var warning: String?
        var caBundle: String?
        switch settings.verify {
        case nil, "yes"?, "true"?:
            break
        case "no"?, "false"?:
            base = DisabledTrustEvaluator()
            warning = extras.isEmpty
                ? "warning: certificate verification is off (--verify=no); anyone on the path can read and change this exchange"
                : "warning: certificate verification is off (--verify=no); only the pins are checked"
        case let path?:
            // A PEM bundle, or a directory of hashed certificates (as requests and curl's
            // --capath take one); a directory was refused as "not a file".
            try FileReading.checkReadable(path, item: "--verify", directoryAllowed: true)
            base = DefaultTrustEvaluator(caBundle: path)
            caBundle = path
        }
        let isPlainDefault = extras.isEmpty && settings.verify.map { $0 == "yes" || $0 == "true" } ?? true
        let defaultTrust: (any ServerTrustEvaluating)? = isPlainDefault ? nil : CompositeTrustEvaluator([base] + extras)
        var configuration = TrustConfiguration(manager: nil, defaultTrust: defaultTrust, warning: warning)
        if let path = settings.trustPolicy {
            configuration.manager = try TrustPolicyFile.load(path: path, caBundle: caBundle, extras: extras)
        }
        return configuration
    }
}
