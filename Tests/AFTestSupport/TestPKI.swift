import Foundation

/// A throw-away certificate authority, made with the `openssl` command at test time.
///
/// It issues server and client certificates (valid, expired, for the wrong host, revoked),
/// self-signed certificates, CRLs and OCSP responses, all under one temporary directory.
public final class TestPKI: @unchecked Sendable {
    public let directory: String
    public var caCertificatePath: String { directory + "/ca.pem" }
    public var caKeyPath: String { directory + "/ca.key" }
    private let lock = NSLock()
    private var serial = 0

    /// A CA shared by every test in the process (creating one costs a few openssl runs).
    public static let shared: TestPKI = {
        do { return try TestPKI() } catch { fatalError("cannot create the test CA: \(error)") }
    }()

    public init() throws {
        directory = try TemporaryDirectory.make(prefix: "af-pki")
        let config = """
        [ ca ]
        default_ca = testca
        [ testca ]
        dir = \(directory)
        database = \(directory)/index.txt
        new_certs_dir = \(directory)/issued
        certificate = \(directory)/ca.pem
        private_key = \(directory)/ca.key
        serial = \(directory)/serial
        crlnumber = \(directory)/crlnumber
        default_md = sha256
        policy = policy_any
        copy_extensions = copy
        default_crl_days = 30
        unique_subject = no
        [ policy_any ]
        commonName = supplied
        """
        try config.write(toFile: directory + "/ca.cnf", atomically: false, encoding: .utf8)
        try "".write(toFile: directory + "/index.txt", atomically: false, encoding: .utf8)
        try "1000\n".write(toFile: directory + "/serial", atomically: false, encoding: .utf8)
        try "1000\n".write(toFile: directory + "/crlnumber", atomically: false, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: directory + "/issued", withIntermediateDirectories: true)
        try Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", caKeyPath, "-out", caCertificatePath, "-days", "3650", "-subj", "/CN=af test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
    }

    /// A certificate the CA issues.
    public struct Issued: Sendable {
        public var certificatePath: String
        public var keyPath: String
        /// Leaf then CA, for servers that send the chain.
        public var chainPath: String

        public var identity: TLSServerIdentity {
            TLSServerIdentity(certificateChainPath: chainPath, privateKeyPath: keyPath)
        }
    }

    /// Issues a certificate for `hosts` (DNS names or IP addresses), with an EC key (an RSA
    /// key with `rsa`, for a server whose cipher exchanges keys by RSA).
    public func issue(name: String, hosts: [String] = ["localhost", "127.0.0.1"], expired: Bool = false, client: Bool = false, rsa: Bool = false) throws -> Issued {
        let base = lock.withLock { () -> String in
            serial += 1
            return "\(directory)/\(name)-\(serial)"
        }
        let keyPath = base + ".key"
        let csrPath = base + ".csr"
        let certificatePath = base + ".pem"
        let extensionsPath = base + ".ext"
        let key = rsa ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
        try Self.openssl(["req", "-new"] + key + ["-nodes", "-keyout", keyPath, "-out", csrPath, "-subj", "/CN=\(hosts.first ?? name)"])
        let names = hosts.map { $0.first?.isNumber == true ? "IP:\($0)" : "DNS:\($0)" }.joined(separator: ",")
        var extensions = "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
        extensions += client ? "extendedKeyUsage=clientAuth\n" : "extendedKeyUsage=serverAuth\nsubjectAltName=\(names)\n"
        try extensions.write(toFile: extensionsPath, atomically: false, encoding: .utf8)
        var arguments = ["ca", "-batch", "-notext", "-config", directory + "/ca.cnf", "-in", csrPath, "-out", certificatePath, "-extfile", extensionsPath]
        arguments += expired ? ["-startdate", "20200101000000Z", "-enddate", "20210101000000Z"] : ["-days", "30"]
        _ = try lock.withLock { try Self.openssl(arguments) }
        let chainPath = base + "-chain.pem"
        let chain = try String(contentsOfFile: certificatePath, encoding: .utf8) + String(contentsOfFile: caCertificatePath, encoding: .utf8)
        try chain.write(toFile: chainPath, atomically: false, encoding: .utf8)
        return Issued(certificatePath: certificatePath, keyPath: keyPath, chainPath: chainPath)
    }

    /// A self-signed certificate for `hosts`, not issued by the CA.
    public func selfSigned(name: String, hosts: [String] = ["localhost", "127.0.0.1"]) throws -> Issued {
        let base = lock.withLock { () -> String in
            serial += 1
            return "\(directory)/\(name)-\(serial)"
        }
        let names = hosts.map { $0.first?.isNumber == true ? "IP:\($0)" : "DNS:\($0)" }.joined(separator: ",")
        try Self.openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                          "-keyout", base + ".key", "-out", base + ".pem", "-days", "30", "-subj", "/CN=\(hosts.first ?? name)",
                          "-addext", "subjectAltName=\(names)"])
        return Issued(certificatePath: base + ".pem", keyPath: base + ".key", chainPath: base + ".pem")
    }

    /// The issued key encrypted with `password` (AES-256, PEM), for pass-phrase tests.
    public func encryptedKey(of issued: Issued, password: String) throws -> String {
        let path = issued.keyPath.replacingOccurrences(of: ".key", with: "-encrypted.key")
        try Self.openssl(["pkey", "-in", issued.keyPath, "-aes256", "-passout", "pass:\(password)", "-out", path])
        return path
    }

    /// A new directory holding the CA certificate under its subject-hash name, as
    /// `openssl rehash` names it, for `--verify=DIR`.
    public func hashedCADirectory() throws -> String {
        let path = directory + "/hashed-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let hash = try Self.openssl(["x509", "-in", caCertificatePath, "-noout", "-subject_hash"]).trimmingCharacters(in: .whitespacesAndNewlines)
        try FileManager.default.copyItem(atPath: caCertificatePath, toPath: "\(path)/\(hash).0")
        return path
    }

    /// Revokes a certificate the CA issued.
    public func revoke(_ issued: Issued) throws {
        _ = try lock.withLock { try Self.openssl(["ca", "-config", directory + "/ca.cnf", "-revoke", issued.certificatePath]) }
    }

    /// Writes a CRL of everything revoked so far and returns its path.
    public func crl() throws -> String {
        let path = directory + "/crl-\(UUID().uuidString).pem"
        _ = try lock.withLock { try Self.openssl(["ca", "-config", directory + "/ca.cnf", "-gencrl", "-out", path]) }
        return path
    }

    /// An OCSP response (DER) about `issued`, signed by the CA, and returns its path.
    public func ocspResponse(for issued: Issued) throws -> String {
        let request = directory + "/ocsp-\(UUID().uuidString).req"
        let response = request.replacingOccurrences(of: ".req", with: ".der")
        try Self.openssl(["ocsp", "-issuer", caCertificatePath, "-cert", issued.certificatePath, "-reqout", request, "-no_nonce"])
        _ = try lock.withLock {
            try Self.openssl(["ocsp", "-index", directory + "/index.txt", "-rsigner", caCertificatePath, "-rkey", caKeyPath,
                              "-CA", caCertificatePath, "-reqin", request, "-respout", response, "-ndays", "7"])
        }
        return response
    }

    /// The `sha256//` pin of a certificate's public key, as the openssl command computes it.
    public static func publicKeyPin(ofCertificate path: String) throws -> String {
        let key = try run("/bin/sh", ["-c", "openssl x509 -in '\(path)' -pubkey -noout | openssl pkey -pubin -outform DER | openssl dgst -sha256 -binary | openssl base64 -A"])
        return "sha256//" + key.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @discardableResult
    static func openssl(_ arguments: [String]) throws -> String {
        try run("/usr/bin/env", ["openssl"] + arguments)
    }

    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw ServerError.tls("\(arguments.prefix(2).joined(separator: " ")) failed: \(String(decoding: errorData, as: UTF8.self))")
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// Temporary directories for tests, all inside one directory per test process that is
/// removed when the process exits, so repeated runs leave nothing behind.
public enum TemporaryDirectory {
    /// `af-tests-PID-XXXXXXXX` under the system temporary directory.
    private static let root: String = {
        let base = ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp"
        let path = "\(base)/af-tests-\(getpid())-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { TemporaryDirectory.removeRoot() }
        return path
    }()

    private static func removeRoot() {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Creates a fresh directory for one test.
    public static func make(prefix: String = "af-test") throws -> String {
        let path = "\(root)/\(prefix)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Writes an af config file (`config.json`, as `AF_CONFIG_DIR=directory` reads it) whose
    /// `default_options` are `options`, and returns its path.
    @discardableResult
    public static func writeConfig(defaultOptions options: [String], in directory: String) throws -> String {
        let text = String(decoding: try JSONSerialization.data(withJSONObject: ["default_options": options]), as: UTF8.self)
        return try write(text, named: "config.json", in: directory)
    }

    /// Writes `contents` to the file `name` in `directory` and returns its path.
    public static func write(_ contents: String, named name: String, in directory: String) throws -> String {
        let path = directory + "/" + name
        try contents.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }
}
