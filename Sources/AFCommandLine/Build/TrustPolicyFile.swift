import AFEngine

/// Reads a `--trust-policy` file into a `ServerTrustManager` (SPEC §9).
///
/// Every evaluator listed for a host must pass. Standard verification is implied unless the
/// host's list is `["disabled"]`, so pins and pinned certificates add to it rather than
/// replace it. Certificate paths are relative to the policy file.
enum TrustPolicyFile {
    /// - Parameter caBundle: the bundle `--verify=PATH` gave, used by `"default"` evaluation.
    static func load(path: String, caBundle: String?, extras: [any ServerTrustEvaluating]) throws(CommandFailure) -> ServerTrustManager {
        let bytes = try FileReading.document(atPath: path, what: "--trust-policy")
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes)
        } catch {
            throw .usage("the trust policy '\(path)' is not valid JSON: \(error.description)")
        }
        guard let members = document.objectValue else {
            throw .usage("the trust policy '\(path)' must be a JSON object with \"hosts\"")
        }
        var mustEvaluate = true
        var evaluators: [String: any ServerTrustEvaluating] = [:]
        var sawHosts = false
        let directory = FileIO.directory(of: path)
        for (key, value) in members {
            switch key {
            case "all_hosts_must_be_evaluated":
                guard let flag = value.boolValue else {
                    throw .usage("\"all_hosts_must_be_evaluated\" in '\(path)' must be true or false")
                }
                mustEvaluate = flag
            case "hosts":
                guard let hosts = value.objectValue else {
                    throw .usage("\"hosts\" in '\(path)' must be an object mapping host names to evaluator lists")
                }
                sawHosts = true
                // Patterns are matched lower-cased and in their ASCII form: two that name one host
                // would leave the choice between their evaluators to the order of a dictionary.
                var named: [String: String] = [:]
                for (host, list) in hosts {
                    try checkPattern(host, path: path)
                    let key = IDNA.hostKey(host)
                    if let earlier = named[key] {
                        let pair = [earlier, host].sorted()
                        throw .usage("host patterns \"\(pair[0])\" and \"\(pair[1])\" in '\(path)' name the same host; keep one")
                    }
                    named[key] = host
                    evaluators[host] = try evaluator(for: host, list: list, path: path, directory: directory, caBundle: caBundle, extras: extras)
                }
            default:
                throw .usage("unknown key \"\(key)\" in the trust policy '\(path)'; use \"all_hosts_must_be_evaluated\" and \"hosts\"")
            }
        }
        guard sawHosts else { throw .usage("the trust policy '\(path)' has no \"hosts\"") }
        return ServerTrustManager(allHostsMustBeEvaluated: mustEvaluate, evaluators: evaluators)
    }

    private static func checkPattern(_ host: String, path: String) throws(CommandFailure) {
        let body = host.hasPrefix("*.") ? String(host.dropFirst(2)) : host
        guard !body.isEmpty, !body.contains("*"), !body.contains("/"), !body.contains(" ") else {
            throw .usage("host pattern \"\(host)\" in '\(path)' is not a host name or a *.wildcard")
        }
    }

    private static func evaluator(
        for host: String, list: JSONValue, path: String, directory: String, caBundle: String?, extras: [any ServerTrustEvaluating]
    ) throws(CommandFailure) -> any ServerTrustEvaluating {
        guard let items = list.arrayValue, !items.isEmpty else {
            throw .usage("\"hosts\".\"\(host)\" in '\(path)' must be a non-empty list of evaluators")
        }
        var base: any ServerTrustEvaluating = DefaultTrustEvaluator(caBundle: caBundle)
        var others: [any ServerTrustEvaluating] = []
        var disabled = false
        for item in items {
            if let name = item.stringValue {
                switch name {
                case "default": break
                case "revocation": others.append(RevocationTrustEvaluator(requireStapledOCSP: true))
                case "disabled":
                    disabled = true
                    base = DisabledTrustEvaluator()
                default:
                    throw .usage("unknown evaluator \"\(name)\" for \"\(host)\" in '\(path)'; use \"default\", \"revocation\", \"disabled\", {\"pins\": [...]} or {\"certificates\": [...]}")
                }
            } else if let object = item.objectValue, object.count == 1 {
                let (key, value) = object[0]
                guard let entries = value.arrayValue?.compactMap(\.stringValue), entries.count == value.arrayValue?.count, !entries.isEmpty else {
                    throw .usage("\"\(key)\" for \"\(host)\" in '\(path)' must be a non-empty list of strings")
                }
                switch key {
                case "pins":
                    for pin in entries {
                        guard pin.hasPrefix("sha256//"), Base64.decode(String(pin.dropFirst(8)))?.count == 32 else {
                            throw .usage("invalid pin \"\(pin)\" for \"\(host)\" in '\(path)': expected sha256//BASE64 (see 'af pin HOST')")
                        }
                    }
                    others.append(PublicKeysTrustEvaluator(pins: entries))
                case "certificates":
                    var certificates: [[UInt8]] = []
                    for entry in entries {
                        let file = entry.hasPrefix("/") ? entry : directory + "/" + entry
                        do {
                            certificates += try Certificates.load(path: file)
                        } catch {
                            throw .unreadable("cannot use certificate \"\(entry)\" for \"\(host)\" in '\(path)': '\(file)': \(error.unreadableReason)")
                        }
                    }
                    others.append(PinnedCertificatesTrustEvaluator(certificates: certificates))
                default:
                    throw .usage("unknown evaluator {\"\(key)\": ...} for \"\(host)\" in '\(path)'; use {\"pins\": [...]} or {\"certificates\": [...]}")
                }
            } else {
                throw .usage("evaluator \(item.text) for \"\(host)\" in '\(path)' is not a name or a {\"pins\"|\"certificates\": [...]} object")
            }
        }
        if disabled, items.count > 1 {
            throw .usage("\"disabled\" must stand alone for \"\(host)\" in '\(path)'; it cannot be combined with other evaluators")
        }
        return CompositeTrustEvaluator([base] + others + extras)
    }
}
