/// What libcurl and OpenSSL check for a host before evaluators look at the chain.
public struct TrustSettings: Sendable, Equatable {
    /// Verify the chain against trusted roots.
    public var verifyPeer = true
    /// Check that the certificate names the host.
    public var verifyHost = true
    /// A CA bundle to use instead of the system's: a PEM file, or a directory of certificates
    /// named by their subject hashes (`openssl rehash`).
    public var caBundle: String?
    /// Whether a CA bundle is directories, as looked up when the evaluator that names it was
    /// made; a transfer whose `caBundle` is another path looks for itself.
    package var checkedBundle: CheckedBundle?

    /// A CA bundle path and whether it names directories of hashed certificates.
    package struct CheckedBundle: Sendable, Equatable {
        let path: String
        let isDirectory: Bool
    }
    /// A CRL file to check certificates against.
    public var crlFile: String?
    /// Require a good stapled OCSP response.
    public var requireStapledOCSP = false
    /// Certificates (DER) trusted as roots in addition to the bundle.
    public var anchors: [[UInt8]] = []

    /// Defaults: verify the chain and the host name, nothing else.
    public init() {}
}

/// A certificate as the server presented it.
public struct ServerCertificate: Sendable, Equatable {
    /// The DER encoding.
    public var der: [UInt8]
    /// The `sha256//BASE64` pin of its SubjectPublicKeyInfo.
    public var publicKeyPin: String

    /// A certificate with its DER bytes and key pin.
    public init(der: [UInt8], publicKeyPin: String) {
        self.der = der
        self.publicKeyPin = publicKeyPin
    }
}

/// Why an evaluator refused a server's chain.
public struct ServerTrustFailure: Error, Sendable, Equatable {
    /// A sentence fragment: what was required and what was found.
    public var message: String

    /// Creates a failure.
    public init(message: String) {
        self.message = message
    }
}

/// Judges a server's identity during the TLS handshake, like Alamofire's evaluators.
///
/// `prepare` adjusts the checks libcurl and OpenSSL make themselves (roots, host name,
/// revocation); `evaluate` runs inside the handshake once the chain is known, before any
/// request byte is sent. Throwing from `evaluate` aborts the handshake; on success it returns
/// notes on what it checked (for traces), or nothing.
public protocol ServerTrustEvaluating: Sendable {
    /// Adjusts the checks libcurl and OpenSSL make; the default changes nothing.
    func prepare(_ settings: inout TrustSettings)
    /// Judges the chain (leaf first) presented for `host`; throws to abort the handshake.
    func evaluate(_ chain: [ServerCertificate], forHost host: String) throws(ServerTrustFailure) -> [String]
    /// Whether a new connection may resume a TLS session negotiated earlier under the same
    /// settings. A resumed handshake presents no certificates, so `evaluate` does not run for
    /// it: only evaluators whose whole judgement is in `prepare` (the chain and host checks
    /// libcurl's session cache is keyed by) may allow it. The default is false.
    var allowsSessionResumption: Bool { get }
}

extension ServerTrustEvaluating {
    public func prepare(_ settings: inout TrustSettings) {}
    public func evaluate(_ chain: [ServerCertificate], forHost host: String) throws(ServerTrustFailure) -> [String] { [] }
    public var allowsSessionResumption: Bool { false }
}

/// Standard verification: a chain to a trusted root (the system's or `caBundle`) and a
/// certificate that names the host.
public struct DefaultTrustEvaluator: ServerTrustEvaluating {
    /// A CA bundle to trust instead of the system roots: a PEM file, or a directory of
    /// hashed certificates (`openssl rehash`), or a list of such directories separated by
    /// `:` (as OpenSSL's `SSL_CERT_DIR`).
    public var caBundle: String? {
        didSet { kind = caBundle.map(BundleKind.init) }
    }
    /// Whether `caBundle` is directories, looked up at the first TLS request and kept (not
    /// at every request: a batch shares one evaluator among its lines; not before one: a
    /// plain http request never needs it). Shared by copies of the evaluator.
    private var kind: BundleKind?

    /// Standard checks, against `caBundle` when given.
    public init(caBundle: String? = nil) {
        self.caBundle = caBundle
        kind = caBundle.map(BundleKind.init)
    }

    public func prepare(_ settings: inout TrustSettings) {
        settings.verifyPeer = true
        settings.verifyHost = true
        if let caBundle {
            settings.caBundle = caBundle
            settings.checkedBundle = kind?.checked
        }
    }

    /// A CA bundle path, and whether it names directories once someone has asked.
    private final class BundleKind: Sendable {
        let path: String
        private let isDirectory = Protected<Bool?>(nil)

        init(_ path: String) {
            self.path = path
        }

        var checked: TrustSettings.CheckedBundle {
            let isDirectory = isDirectory.write { known -> Bool in
                if let known { return known }
                let found = FileIO.isCertificateDirectory(path)
                known = found
                return found
            }
            return TrustSettings.CheckedBundle(path: path, isDirectory: isDirectory)
        }
    }

    /// True: the checks are libcurl's and OpenSSL's, and sessions are cached per CA bundle.
    public var allowsSessionResumption: Bool { true }
}

/// Revocation checking: a good stapled OCSP response, and/or a CRL.
public struct RevocationTrustEvaluator: ServerTrustEvaluating {
    /// Refuse a server that does not staple a good OCSP response.
    public var requireStapledOCSP: Bool
    /// A PEM CRL file to check the chain against.
    public var crlFile: String?

    /// Revocation checks by stapled OCSP, a CRL, or both.
    public init(requireStapledOCSP: Bool = true, crlFile: String? = nil) {
        self.requireStapledOCSP = requireStapledOCSP
        self.crlFile = crlFile
    }

    public func prepare(_ settings: inout TrustSettings) {
        if requireStapledOCSP { settings.requireStapledOCSP = true }
        if let crlFile { settings.crlFile = crlFile }
    }
}

/// Public-key pinning: some certificate of the chain must carry one of the pinned keys.
public struct PublicKeysTrustEvaluator: ServerTrustEvaluating {
    /// Pins in `sha256//BASE64` form.
    public var pins: [String]

    /// Accepts a chain that carries one of `pins`.
    public init(pins: [String]) {
        self.pins = pins
    }

    public func evaluate(_ chain: [ServerCertificate], forHost host: String) throws(ServerTrustFailure) -> [String] {
        let presented = chain.map(\.publicKeyPin)
        guard let match = presented.first(where: pins.contains) else {
            let shown = presented.isEmpty ? "no certificates" : presented.joined(separator: ", ")
            throw ServerTrustFailure(message: "no pinned public key in the chain of \(host); it presented \(shown)")
        }
        return ["public key pin matched \(match)"]
    }
}

/// Certificate pinning: the chain must contain one of the pinned certificates. Pinned
/// certificates are also trusted as roots, so a pinned self-signed certificate is accepted.
public struct PinnedCertificatesTrustEvaluator: ServerTrustEvaluating {
    /// DER encodings of the pinned certificates.
    public var certificates: [[UInt8]]

    /// Accepts a chain that contains one of `certificates` (DER).
    public init(certificates: [[UInt8]]) {
        self.certificates = certificates
    }

    public func prepare(_ settings: inout TrustSettings) {
        settings.anchors += certificates
    }

    public func evaluate(_ chain: [ServerCertificate], forHost host: String) throws(ServerTrustFailure) -> [String] {
        guard let match = chain.first(where: { certificates.contains($0.der) }) else {
            let shown = chain.isEmpty ? "no certificates" : chain.map(\.publicKeyPin).joined(separator: ", ")
            throw ServerTrustFailure(message: "no pinned certificate in the chain of \(host); it presented keys \(shown)")
        }
        return ["certificate pin matched the certificate with key \(match.publicKeyPin)"]
    }
}

/// No verification at all. Only for hosts the user has chosen not to verify.
public struct DisabledTrustEvaluator: ServerTrustEvaluating {
    /// Turns every check off.
    public init() {}

    public func prepare(_ settings: inout TrustSettings) {
        settings.verifyPeer = false
        settings.verifyHost = false
    }

    /// True: nothing is checked, on a new handshake or a resumed one.
    public var allowsSessionResumption: Bool { true }
}

/// Every evaluator must pass, in order.
public struct CompositeTrustEvaluator: ServerTrustEvaluating {
    /// The evaluators, run in order.
    public var evaluators: [any ServerTrustEvaluating]

    /// Requires all of `evaluators`.
    public init(_ evaluators: [any ServerTrustEvaluating]) {
        self.evaluators = evaluators
    }

    public func prepare(_ settings: inout TrustSettings) {
        for evaluator in evaluators { evaluator.prepare(&settings) }
    }

    public func evaluate(_ chain: [ServerCertificate], forHost host: String) throws(ServerTrustFailure) -> [String] {
        var notes: [String] = []
        for evaluator in evaluators { notes += try evaluator.evaluate(chain, forHost: host) }
        return notes
    }

    /// Only when every evaluator allows it.
    public var allowsSessionResumption: Bool { evaluators.allSatisfy(\.allowsSessionResumption) }
}

/// Maps host names to evaluators, like Alamofire's `ServerTrustManager`.
///
/// Patterns are exact names or `*.` wildcards that match exactly one label; an exact name
/// beats a wildcard. With `allHostsMustBeEvaluated`, a host that matches nothing is refused.
public struct ServerTrustManager: Sendable {
    /// Refuse hosts that match no pattern.
    public var allHostsMustBeEvaluated: Bool
    /// Evaluators by host pattern.
    public var evaluators: [String: any ServerTrustEvaluating]

    /// Maps host patterns to evaluators. Patterns may name hosts in Unicode or in their ASCII
    /// (`xn--`) form.
    public init(allHostsMustBeEvaluated: Bool = true, evaluators: [String: any ServerTrustEvaluating]) {
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        self.evaluators = evaluators
    }

    /// The evaluator for `host`, nil for default evaluation, or an error when the host must
    /// be evaluated but no pattern matches it.
    public func evaluator(forHost host: String) throws(AFError) -> (any ServerTrustEvaluating)? {
        // Compared in their ASCII form (IDNA): a policy written for `bücher.example` applies
        // to the request, which goes to that name's `xn--` form; `example.com.` is `example.com`.
        let name = IDNA.hostKey(host)
        if let exact = evaluators.first(where: { IDNA.hostKey($0.key) == name }) { return exact.value }
        // The first `.` byte: a dot followed by a combining mark is one Character, which a
        // character search would skip, matching a wildcard one label too far up.
        if let dot = name.utf8.firstIndex(of: UInt8(ascii: ".")) {
            let wildcard = "*" + name[dot...]
            if let match = evaluators.first(where: { IDNA.hostKey($0.key) == wildcard }) { return match.value }
        }
        if allHostsMustBeEvaluated {
            throw .transport(TransportFailure(
                kind: .tls,
                message: "the trust policy has no entry for \(host) and requires every host to be evaluated; add \(host) to its \"hosts\""
            ))
        }
        return nil
    }
}
