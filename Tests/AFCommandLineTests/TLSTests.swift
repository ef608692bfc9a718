@_spi(Locking) import AFEngine
@testable import AFCommandLine
import AFInProcess
import AFTestSupport
import Foundation
import Testing

/// SPEC §9: verification, pinning in the handshake, revocation, trust policies, `af pin`.
@Suite struct TLSTests {
    let pki = TestPKI.shared
    let directory: String

    init() throws {
        directory = try TemporaryDirectory.make(prefix: "af-tls")
    }

    private func server(_ issued: TestPKI.Issued, ocsp: String? = nil, clientCA: String? = nil, maximum: String? = nil, minimum: String? = nil) throws -> TestServer {
        var identity = issued.identity
        identity.ocspResponsePath = ocsp
        identity.clientCAPath = clientCA
        identity.maximumVersion = maximum
        identity.minimumVersion = minimum
        return try TestServer(tls: identity)
    }

    private var ca: String { "--verify=\(pki.caCertificatePath)" }

    /// A certificate sent without its issuer's (a server that leaves out its intermediate,
    /// which browsers paper over) read as one from a private CA; the issuer is named, with
    /// both readings of it.
    @Test func aCertificateSentWithoutItsIssuersIsNamedSo() throws {
        let issued = try pki.issue(name: "alone")
        let server = try TestServer(tls: TLSServerIdentity(certificateChainPath: issued.certificatePath, privateKeyPath: issued.keyPath))
        let refused = InProcessAF.run([server.url("/get")])
        #expect(refused.status == 7)
        #expect(refused.err.hasPrefix("af: error: the certificate of 127.0.0.1 is not trusted: unable to get local issuer certificate (the server sent its certificate alone, without that of its issuer '"), "\(refused.err)")
        #expect(refused.err.hasSuffix("'); if that issuer is a public CA's, the server must send its certificate too (tell the server's owner); if it is a private CA, use --verify=CA.pem\n"), "\(refused.err)")
        #expect(InProcessAF.run([ca, server.url("/get")]).status == 0)
        #expect(server.requests.count == 1)
    }

    /// A certificate for other hosts says which: the URL or the server is wrong, and the
    /// names tell which (af said only "other hosts").
    @Test func aCertificateForOtherHostsNamesThem() throws {
        let server = try server(try pki.issue(name: "other-hosts", hosts: ["other.test", "*.other.test", "10.1.2.3", "::1"]))
        let refused = InProcessAF.run([ca, server.url("/get")])
        #expect(refused.status == 7)
        #expect(refused.err == "af: error: TLS with 127.0.0.1:\(server.port) failed: SSL: no alternative certificate subject name matches target host name '127.0.0.1'; "
                + "the certificate names other hosts: other.test, *.other.test, 10.1.2.3, ::1 (see 'af pin 127.0.0.1:\(server.port)')\n")
        #expect(server.requests.isEmpty)
    }

    @Test func unknownCAIsRefusedAndAPrivateCAIsAccepted() throws {
        let server = try server(try pki.issue(name: "default"))
        let refused = InProcessAF.run([server.url("/get")])
        #expect(refused.status == 7)
        #expect(refused.err == "af: error: the certificate of 127.0.0.1 is not trusted: self-signed certificate in certificate chain; use --verify=CA.pem for a private CA, or --pin-cert for a self-signed certificate\n")
        #expect(server.requests.isEmpty)
        let accepted = InProcessAF.run([ca, server.url("/get")])
        #expect(accepted.status == 0, "\(accepted.err)")
        #expect(accepted.out.contains("\"target\": \"/get\""))
        #expect(InProcessAF.run([ca, "https://localhost:\(server.port)/get"]).status == 0)
    }

    @Test(arguments: [
        ("expired", "certificate has expired"),
        ("wrong-host", "no alternative certificate subject name matches target host name '127.0.0.1'"),
        ("self-signed", "self-signed certificate"),
    ])
    func badCertificatesAreExitSeven(kind: String, reason: String) throws {
        let issued: TestPKI.Issued
        switch kind {
        case "expired": issued = try pki.issue(name: "expired", expired: true)
        case "wrong-host": issued = try pki.issue(name: "wrong", hosts: ["wrong.example"])
        default: issued = try pki.selfSigned(name: "self")
        }
        let server = try server(issued)
        let result = InProcessAF.run([ca, "--retry=3", "--retry-delay=0.1", server.url("/get")])
        #expect(result.status == 7)
        #expect(result.err.contains(reason), "\(result.err)")
        #expect(result.err.hasPrefix("af: error: "))
        #expect(result.err.split(separator: "\n").count == 1)
        #expect(server.requests.isEmpty)
        #expect(server.connections == 1, "TLS failures must not be retried")
        if kind == "expired" {
            // Which certificate, and until when: the server's, or a clock that is wrong.
            #expect(result.err == "af: error: the certificate of 127.0.0.1 is not trusted: certificate has expired ('CN=localhost' was valid until Jan  1 00:00:00 2021 GMT); "
                    + "check the certificate's dates (and this machine's clock)\n")
        }
    }

    @Test func verificationCanBeTurnedOffWithAWarning() throws {
        let server = try server(try pki.selfSigned(name: "off"))
        for flag in ["--verify=no", "-k"] {
            let result = InProcessAF.run([flag, server.url("/get")])
            #expect(result.status == 0)
            #expect(result.err == "af: warning: certificate verification is off (--verify=no); anyone on the path can read and change this exchange\n")
        }
    }

    /// `-q` keeps warnings, as HTTPie's does; `-qq` leaves them out too (only errors), and
    /// `--no-quiet` undoes both.
    @Test func twiceQuietLeavesOutWarnings() throws {
        let server = try server(try pki.selfSigned(name: "quiet"))
        let warning = "af: warning: certificate verification is off (--verify=no); anyone on the path can read and change this exchange\n"
        #expect(InProcessAF.run(["-q", "-k", server.url("/get")]).err == warning)
        for quiet in [["-qq"], ["-q", "--quiet"]] {
            let result = InProcessAF.run(quiet + ["-k", server.url("/get")])
            #expect(result.status == 0)
            #expect(result.out.isEmpty && result.err.isEmpty, "\(result.err)")
        }
        #expect(InProcessAF.run(["-qq", "--no-quiet", "-b", "-k", server.url("/get")]).err == warning)
        // Errors still go to standard error.
        server.route("/missing") { _, _ in .response(status: 404) }
        let failed = InProcessAF.run(["-qq", "-k", "--check-status", server.url("/missing")])
        #expect(failed.status == 4)
        #expect(failed.err == "af: error: server answered 404 Not Found\n")
    }

    @Test func publicKeyPinsAreCheckedInTheHandshake() throws {
        let issued = try pki.issue(name: "pinned")
        let server = try server(issued)
        let leafPin = try TestPKI.publicKeyPin(ofCertificate: issued.certificatePath)
        let caPin = try TestPKI.publicKeyPin(ofCertificate: pki.caCertificatePath)
        #expect(InProcessAF.run([ca, "--pin=\(leafPin)", server.url("/get")]).status == 0)
        #expect(InProcessAF.run([ca, "--pin=sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "--pin=\(caPin)", server.url("/get")]).status == 0)
        let before = server.requests.count
        let connections = server.connections
        let wrong = "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
        let refused = InProcessAF.run([ca, "--pin=\(wrong)", "--retry=2", "--retry-delay=0.1", server.url("/get")])
        #expect(refused.status == 8)
        #expect(refused.err == "af: error: pinning failed: no pinned public key in the chain of 127.0.0.1; it presented \(leafPin), \(caPin); check the pin with 'af pin HOST'\n")
        #expect(server.requests.count == before, "a refused server must never see the request")
        #expect(server.connections == connections + 1, "pinning failures must not be retried")
    }

    /// Judges nothing, but does not say that resumption is safe for it.
    private struct CountingEvaluator: ServerTrustEvaluating {
        let count = Protected(0)
        func evaluate(_ chain: [ServerCertificate], forHost host: String) throws(ServerTrustFailure) -> [String] {
            count.write { $0 += 1 }
            return []
        }
    }

    @Test func sessionsResumeTLSOnlyWhereTheEvaluatorsAllowIt() throws {
        let server = try server(try pki.issue(name: "resume"))
        // The server closes every connection after its answer: each request opens a new one.
        let description = RequestDescription(url: server.url("/get"), headers: [HTTPHeader("Connection", "close")])
        func handshakes(_ trust: any ServerTrustEvaluating) -> [TLSReport?] {
            let session = Session(configuration: .init(defaultTrust: trust))
            defer { session.shutdown() }
            return (1...3).map { _ in
                let response = session.request(description).run()
                #expect(response.error == nil, "\(String(describing: response.error))")
                return response.attempts.last?.metrics?.tls
            }
        }
        let verified = handshakes(DefaultTrustEvaluator(caBundle: pki.caCertificatePath))
        #expect(verified.map { $0?.resumed } == [false, true, true])
        #expect(verified.map { $0?.verified } == [true, true, true])

        // An evaluator that does not allow resumption sees every chain: three full handshakes.
        let counting = CountingEvaluator()
        let judged = handshakes(CompositeTrustEvaluator([DefaultTrustEvaluator(caBundle: pki.caCertificatePath), counting]))
        #expect(judged.map { $0?.resumed } == [false, false, false])
        #expect(counting.count.value == 3)
        #expect(server.connections == 6)
    }

    @Test func pinsApplyEvenWithVerificationOff() throws {
        let server = try server(try pki.selfSigned(name: "self-pinned"))
        let refused = InProcessAF.run(["--verify=no", "--pin=sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", server.url("/get")])
        #expect(refused.status == 8)
        #expect(refused.err.hasPrefix("af: warning: certificate verification is off (--verify=no); only the pins are checked\naf: error: pinning failed"))
        #expect(server.requests.isEmpty)
    }

    @Test func pinnedSelfSignedCertificateIsTrusted() throws {
        let issued = try pki.selfSigned(name: "anchor")
        let server = try server(issued)
        let result = InProcessAF.run(["--pin-cert=\(issued.certificatePath)", server.url("/get")])
        #expect(result.status == 0, "\(result.err)")
        let other = try pki.selfSigned(name: "other")
        let refused = InProcessAF.run(["--pin-cert=\(other.certificatePath)", server.url("/get")])
        #expect(refused.status == 7 || refused.status == 8)
        let viaCA = try self.server(try pki.issue(name: "via-ca"))
        let pinnedCA = InProcessAF.run([ca, "--pin-cert=\(pki.caCertificatePath)", viaCA.url("/get")])
        #expect(pinnedCA.status == 0, "\(pinnedCA.err)")
        let unreadable = InProcessAF.run(["--pin-cert=/nonexistent.pem", server.url("/get")])
        #expect(unreadable.status == 66)
        #expect(unreadable.err == "af: error: cannot read '/nonexistent.pem' (from '--pin-cert'): no such file or directory; check the path and its permissions\n")
        // A directory read as an empty file ("it holds no PEM or DER certificate").
        let directory = InProcessAF.run(["--pin-cert=/tmp", server.url("/get")])
        #expect(directory.status == 66)
        #expect(directory.err == "af: error: cannot read '/tmp' (from '--pin-cert'): it is a directory; name a file\n")
        // A file that holds no certificate is named as --cert's and --verify's are.
        let notCertificate = self.directory + "/not-a-certificate.txt"
        try "hello\n".write(toFile: notCertificate, atomically: false, encoding: .utf8)
        let garbage = InProcessAF.run(["--pin-cert=\(notCertificate)", server.url("/get")])
        #expect(garbage.status == 66)
        #expect(garbage.err == "af: error: cannot use '\(notCertificate)' (from '--pin-cert'): it holds no PEM or DER certificate\n")
    }

    @Test func stapledOCSPIsRequiredWithCheckRevocation() throws {
        let issued = try pki.issue(name: "ocsp")
        let stapled = try server(issued, ocsp: try pki.ocspResponse(for: issued))
        #expect(InProcessAF.run([ca, "--check-revocation", stapled.url("/get")]).status == 0)
        let bare = try server(issued)
        let refused = InProcessAF.run([ca, "--check-revocation", bare.url("/get")])
        #expect(refused.status == 7)
        #expect(refused.err.hasPrefix("af: error: revocation check failed for 127.0.0.1:"))
        #expect(bare.requests.isEmpty)
    }

    @Test func crlRevocation() throws {
        let revoked = try pki.issue(name: "revoked")
        try pki.revoke(revoked)
        let crl = try pki.crl()
        let server = try server(revoked)
        let result = InProcessAF.run([ca, "--crl=\(crl)", server.url("/get")])
        #expect(result.status == 7)
        #expect(result.err.contains("certificate revoked"))
        let good = try self.server(try pki.issue(name: "still-good"))
        #expect(InProcessAF.run([ca, "--crl=\(try pki.crl())", good.url("/get")]).status == 0)
    }

    @Test func clientCertificates() throws {
        let server = try server(try pki.issue(name: "mtls"), clientCA: pki.caCertificatePath)
        let client = try pki.issue(name: "client", hosts: ["client"], client: true)
        let accepted = InProcessAF.run([ca, "--cert=\(client.certificatePath)", "--cert-key=\(client.keyPath)", server.url("/get")])
        #expect(accepted.status == 0, "\(accepted.err)")
        // TLS 1.3 finishes the handshake before the server checks the client: its demand for
        // a certificate, or its refusal of one, came as an alert on the first read, which af
        // called a reset connection (exit 1).
        let refused = InProcessAF.run([ca, server.url("/get")])
        #expect(refused.status == 7, "\(refused.err)")
        // Whether the alert is read before the server's close resets the connection is a race:
        // either way, the demand is named.
        #expect(refused.err.hasPrefix("af: error: TLS with 127.0.0.1:\(server.port) failed: the server "), "\(refused.err)")
        #expect(refused.err.contains("client certificate"), "\(refused.err)")
        #expect(refused.err.hasSuffix("; give yours with --cert (and --cert-key when its key is a separate file)\n"), "\(refused.err)")
        let stranger = try pki.selfSigned(name: "stranger", hosts: ["client"])
        let unknown = InProcessAF.run([ca, "--cert=\(stranger.certificatePath)", "--cert-key=\(stranger.keyPath)", server.url("/get")])
        // With a certificate given, OpenSSL does not say the server asked for one: when the
        // server's close wins the race with its alert, the reset is all there is to report.
        if unknown.status == 7 {
            #expect(unknown.err.contains(" failed: the server refused the client certificate (alert "), "\(unknown.err)")
            #expect(unknown.err.hasSuffix("; check that --cert is the certificate this server expects, issued by a CA it trusts, and still valid\n"), "\(unknown.err)")
        } else {
            #expect(unknown.status == 1 && unknown.err.contains(" was reset: "), "\(unknown.err)")
        }
        #expect(server.requests.count == 1)
    }

    @Test func encryptedClientKeyNeedsItsPassPhrase() throws {
        let server = try server(try pki.issue(name: "mtls-pass"), clientCA: pki.caCertificatePath)
        let client = try pki.issue(name: "client-pass", hosts: ["client"], client: true)
        let key = try pki.encryptedKey(of: client, password: "open sesame")
        let accepted = InProcessAF.run([ca, "--cert=\(client.certificatePath)", "--cert-key=\(key)", "--cert-key-pass=open sesame", server.url("/get")])
        #expect(accepted.status == 0, "\(accepted.err)")
        // A wrong pass phrase, or none (where af may not ask), is found before connecting.
        let refused = InProcessAF.run([ca, "--cert=\(client.certificatePath)", "--cert-key=\(key)", "--cert-key-pass=wrong", server.url("/get")])
        #expect(refused.status == 66)
        #expect(refused.err == "af: error: cannot use '\(key)' (from '--cert-key'): --cert-key-pass does not decrypt its private key; check the pass phrase\n")
        let unasked = InProcessAF.run([ca, "--cert=\(client.certificatePath)", "--cert-key=\(key)", server.url("/get")])
        #expect(unasked.status == 64)
        #expect(unasked.err == "af: error: the private key in '\(key)' is encrypted and standard input is not a terminal to ask for its pass phrase on; give --cert-key-pass=PASS\n")
        let ignored = InProcessAF.run(["-I", ca, "--cert=\(client.certificatePath)", "--cert-key=\(key)", server.url("/get")])
        #expect(ignored.status == 64)
        #expect(ignored.err.contains("af may not ask for its pass phrase with standard input ignored"), "\(ignored.err)")
        // A batch never asks: its file is refused before any line is sent.
        let lines = directory + "/lines.txt"
        try "\(server.url("/get"))\n".write(toFile: lines, atomically: false, encoding: .utf8)
        let batch = InProcessAF.run(["batch", ca, "--cert=\(client.certificatePath)", "--cert-key=\(key)", lines])
        #expect(batch.status == 64)
        #expect(batch.err == "af: error: \(lines):1: the private key in '\(key)' is encrypted, and af may not ask for its pass phrase with standard input ignored (-I, and on every line of af batch); give --cert-key-pass=PASS\n")
        #expect(server.requests.count == 1)
        #expect(server.connections == 1)
    }

    /// A client certificate or key that the handshake could not load failed there (exit 7, in
    /// OpenSSL's words, after connecting); now each is named before anything is sent.
    @Test func clientCertificateFilesAreCheckedBeforeConnecting() throws {
        let server = try server(try pki.issue(name: "mtls-files"), clientCA: pki.caCertificatePath)
        let client = try pki.issue(name: "client-files", hosts: ["client"], client: true)
        let other = try pki.issue(name: "client-other", hosts: ["other"], client: true)
        let notPEM = directory + "/notes.txt"
        try "hello\n".write(toFile: notPEM, atomically: false, encoding: .utf8)
        let der = directory + "/client.der"
        let pem = try String(contentsOfFile: client.certificatePath, encoding: .utf8)
        let base64 = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        try #require(Data(base64Encoded: base64)).write(to: URL(fileURLWithPath: der))
        let cases: [(arguments: [String], status: Int32, error: String)] = [
            (["--cert=\(notPEM)"], 66, "cannot use '\(notPEM)' (from '--cert'): it holds no PEM certificate; name a file with a -----BEGIN CERTIFICATE----- block"),
            (["--cert=\(der)", "--cert-key=\(client.keyPath)"], 66,
             "cannot use '\(der)' (from '--cert'): it holds no PEM certificate; it looks like DER or PKCS#12, which af does not read: convert it (openssl x509 -inform DER -in FILE -out FILE.pem)"),
            (["--cert=\(client.certificatePath)"], 66,
             "cannot use '\(client.certificatePath)' (from '--cert'): it holds a certificate but no private key; give the key's file with --cert-key"),
            (["--cert=\(client.certificatePath)", "--cert-key=\(notPEM)"], 66,
             "cannot use '\(notPEM)' (from '--cert-key'): it holds no PEM private key; name a file with a -----BEGIN PRIVATE KEY----- block"),
            (["--cert=\(client.certificatePath)", "--cert-key=\(other.keyPath)"], 66,
             "cannot use '\(other.keyPath)' (from '--cert-key'): its private key is not the one of the certificate in '\(client.certificatePath)'; give the matching key"),
            (["--cert-key=\(client.keyPath)"], 64, "--cert-key is the private key of a client certificate, and no --cert names one; add --cert=FILE"),
            (["--cert-key-pass=x"], 64, "--cert-key-pass opens the private key of a client certificate, and no --cert names one; add --cert=FILE"),
        ]
        for (arguments, status, error) in cases {
            let result = InProcessAF.run([ca] + arguments + [server.url("/get")])
            #expect(result.status == status, "\(arguments)")
            #expect(result.err == "af: error: \(error)\n")
        }
        // The key in the certificate's own file is found there.
        let combined = directory + "/combined.pem"
        try (pem + String(contentsOfFile: client.keyPath, encoding: .utf8)).write(toFile: combined, atomically: false, encoding: .utf8)
        let accepted = InProcessAF.run([ca, "--cert=\(combined)", server.url("/get")])
        #expect(accepted.status == 0, "\(accepted.err)")
        #expect(server.connections == 1)
    }

    /// A server that serves no site by the name af sent (its alert `unrecognized_name`, as a
    /// CDN's address answers for a site it does not host) is named for that, with the way to
    /// reach an address under a name, not sent to --ssl and --ciphers; the right name works.
    @Test func aNameTheServerDoesNotServeIsNamed() throws {
        let issued = try pki.issue(name: "served", hosts: ["served.test", "other.test"])
        var identity = issued.identity
        identity.servedName = "served.test"
        let server = try TestServer(tls: identity)
        let refused = InProcessAF.run([ca, "--resolve=other.test:\(server.port):127.0.0.1", "https://other.test:\(server.port)/get"])
        #expect(refused.status == 7)
        #expect(refused.err == "af: error: TLS with other.test:\(server.port) failed: the server serves no site by the name 'other.test' (its alert: unrecognized name); "
                + "check the host name (to reach an address under a name, give the name and --resolve=NAME:PORT:ADDRESS)\n")
        let served = InProcessAF.run([ca, "--resolve=served.test:\(server.port):127.0.0.1", "https://served.test:\(server.port)/get"])
        #expect(served.status == 0, "\(served.err)")
        #expect(server.requests.count == 1)
    }

    @Test func pinCommandHonoursResolve() throws {
        let issued = try pki.issue(name: "named", hosts: ["pinned.test"])
        let server = try server(issued)
        let result = InProcessAF.run(["pin", ca, "--resolve=pinned.test:\(server.port):127.0.0.1", "pinned.test:\(server.port)"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains(try TestPKI.publicKeyPin(ofCertificate: issued.certificatePath)))
    }

    /// TLS 1.0 and 1.1 are never used (RFC 8996 retired them): af took libcurl's floor, TLS
    /// 1.0, so a server that spoke only TLS 1.1 was reached over it although `--ssl` names
    /// no version below 1.2. Refused as having no version in common, saying why.
    @Test func aServerThatSpeaksOnlyTLS11IsRefused() throws {
        let server = try server(try pki.issue(name: "tls11", rsa: true), maximum: "1.1")
        let result = InProcessAF.run([ca, "-m", server.url("/get")])
        #expect(result.status == 7, "\(result.out)")
        #expect(result.err.hasPrefix("af: error: TLS with 127.0.0.1:\(server.port) failed: the server and af have no TLS version in common ("), "\(result.err)")
        #expect(result.err.hasSuffix("); af speaks TLS 1.2 and 1.3, and a server that speaks only older versions needs upgrading\n"), "\(result.err)")
    }

    /// An HTTPS proxy's certificate is verified with --verify's CA bundle (or not at all
    /// with --verify=no), and named as the proxy's: libcurl verified it against its built-in
    /// bundle whatever --verify said, so a proxy with a private CA could not be used, and the
    /// handshake hooks judged its chain as the server's ("the certificate of example.test is
    /// not trusted"), with the server's pins.
    @Test func anHTTPSProxysCertificateIsTheProxys() throws {
        let proxy = try server(try pki.issue(name: "proxy"))
        let proxyOption = "--proxy=all:https://127.0.0.1:\(proxy.port)"
        let trusted = InProcessAF.run([ca, proxyOption, "-b", "http://example.test/echo"])
        #expect(trusted.status == 0, "\(trusted.err)")
        #expect(trusted.out.hasPrefix(#"{"method": "GET", "target": "http://example.test/echo""#), "\(trusted.out.prefix(100))")
        let unverified = InProcessAF.run(["--verify=no", proxyOption, "-b", "http://example.test/echo"])
        #expect(unverified.status == 0, "\(unverified.err)")
        // curl verifies a proxy with options of its own.
        #expect(InProcessAF.run(["--curl", ca, proxyOption, "http://example.test/echo"]).out.contains(" --proxy-cacert \(pki.caCertificatePath)"))
        #expect(InProcessAF.run(["--curl", "--verify=no", proxyOption, "http://example.test/echo"]).out.contains(" --proxy-insecure"))
        let advice = "use --verify=CA.pem for the proxy's private CA (--verify applies to an HTTPS proxy too)"
        for url in ["http://example.test/echo", "https://example.test/echo"] {
            let untrusted = InProcessAF.run([proxyOption, url])
            #expect(untrusted.status == 7)
            #expect(untrusted.err == "af: error: the certificate of the proxy 127.0.0.1:\(proxy.port) is not trusted: self-signed certificate in certificate chain; \(advice)\n", "\(url)")
        }
        // The server's pin is the server's: the proxy (which is no tunnel) is reached and
        // answers the CONNECT itself.
        let pinned = InProcessAF.run([ca, proxyOption, "--pin=sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", "https://example.test/echo"])
        #expect(pinned.status == 1, "\(pinned.err)")
        #expect(pinned.err.hasPrefix("af: error: the proxy 127.0.0.1:\(proxy.port) did not open a tunnel to example.test:443: it answered 404"), "\(pinned.err)")
        #expect(proxy.requests.contains { $0.method == "CONNECT" })
        // A pinned certificate is a trust anchor for the server alone: the proxy's own
        // self-signed certificate, given as the server's --pin-cert, does not make it trusted.
        let selfSigned = try pki.selfSigned(name: "proxy-self", hosts: ["127.0.0.1"])
        let anchored = try server(selfSigned)
        let refused = InProcessAF.run(["--pin-cert=\(selfSigned.certificatePath)", "--proxy=all:https://127.0.0.1:\(anchored.port)", "https://example.test/echo"])
        #expect(refused.status == 7, "\(refused.err)")
        #expect(refused.err.hasPrefix("af: error: the certificate of the proxy 127.0.0.1:\(anchored.port) is not trusted: self-signed certificate; "), "\(refused.err)")
        #expect(anchored.requests.isEmpty)
    }

    /// `--tls-max=tls1.2` (curl's --tls-max, HTTPie's --ssl=tls1.2) reaches a server that
    /// speaks TLS 1.3 over TLS 1.2; without it, af speaks 1.3. A server of TLS 1.3 only is
    /// named as such, and a range with nothing in it is a usage error before connecting.
    @Test func maximumVersion() throws {
        let server = try server(try pki.issue(name: "tls13"))
        let capped = InProcessAF.run([ca, "--tls-max=tls1.2", "-m", "-b", server.url("/get")])
        #expect(capped.status == 0, "\(capped.err)")
        #expect(capped.out.contains("\n  TLSv1.2 "), "\(capped.out)")
        let uncapped = InProcessAF.run([ca, "-m", "-b", server.url("/get")])
        #expect(uncapped.out.contains("\n  TLSv1.3 "), "\(uncapped.out)")
        #expect(InProcessAF.run([ca, "--tls-max=tls1.3", "-m", "-b", server.url("/get")]).out.contains("\n  TLSv1.3 "))
        // curl's spelling in --curl, which curl itself runs.
        let command = InProcessAF.run(["--curl", ca, "--tls-max=tls1.2", server.url("/get")]).out
        #expect(command.hasSuffix(" --tls-max 1.2\n"), "\(command)")
        let curl = Process()
        curl.executableURL = URL(fileURLWithPath: "/bin/sh")
        curl.arguments = ["-c", command.trimmingCharacters(in: .newlines) + " -s -o /dev/null"]
        try curl.run()
        curl.waitUntilExit()
        #expect(curl.terminationStatus == 0)
        let count = server.requests.count
        let empty = InProcessAF.run([ca, "--ssl=tls1.3", "--tls-max=tls1.2", server.url("/get")])
        #expect(empty.status == 64)
        #expect(empty.err == "af: error: --ssl=tls1.3 and --tls-max=tls1.2 leave no TLS version to speak; drop one\n")
        #expect(server.requests.count == count)
        // One line of a batch capped, the other not: each connection is made as its line asks.
        let lines = try TemporaryDirectory.write("\(server.url("/get"))\n--tls-max=tls1.2 \(server.url("/get"))\n", named: "lines.txt", in: directory)
        let batch = InProcessAF.run(["batch", ca, "--report=json", "--parallel=1", lines])
        #expect(batch.status == 0, "\(batch.err)")
        let versions = batch.out.split(separator: "\n").compactMap { line in line.range(of: #""tls_protocol": ""#).map { line[$0.upperBound...].prefix(7) } }
        #expect(versions == ["TLSv1.3", "TLSv1.2"], "\(batch.out)")

        let modern = try self.server(try pki.issue(name: "tls13only"), minimum: "1.3")
        let refused = InProcessAF.run([ca, "--tls-max=tls1.2", modern.url("/get")])
        #expect(refused.status == 7)
        #expect(refused.err.hasPrefix("af: error: TLS with 127.0.0.1:\(modern.port) failed: the server and af have no TLS version in common ("), "\(refused.err)")
        #expect(refused.err.hasSuffix("); --tls-max=tls1.2 allows TLS 1.2 only: leave it out to allow TLS 1.3\n"), "\(refused.err)")
        #expect(InProcessAF.run([ca, modern.url("/get")]).status == 0)
    }

    @Test func minimumVersionAndCiphers() throws {
        let server = try server(try pki.issue(name: "tls12"), maximum: "1.2")
        let modern = InProcessAF.run([ca, "--ssl=tls1.3", server.url("/get")])
        #expect(modern.status == 7)
        // No version in common is named so, with the option that caused it (it got the advice
        // for any handshake failure: check --ssl, --ciphers, --cert and the server).
        #expect(modern.err.hasPrefix("af: error: TLS with 127.0.0.1:\(server.port) failed: the server and af have no TLS version in common ("), "\(modern.err)")
        #expect(modern.err.hasSuffix("); --ssl=tls1.3 allows TLS 1.3 only: leave it out to allow TLS 1.2\n"), "\(modern.err)")
        let allowed = InProcessAF.run([ca, "--ssl=tls1.2", "-m", "-b", server.url("/get")])
        #expect(allowed.status == 0)
        #expect(allowed.out.contains("TLSv1.2"))
        let chosen = InProcessAF.run([ca, "--ciphers=ECDHE-ECDSA-AES128-GCM-SHA256", "-m", "-b", server.url("/get")])
        #expect(chosen.status == 0, "\(chosen.err)")
        #expect(chosen.out.contains("ECDHE-ECDSA-AES128-GCM-SHA256"))
        #expect(InProcessAF.run([ca, "--ciphers=ECDHE-RSA-AES128-GCM-SHA256", server.url("/get")]).status == 7)
        // A list OpenSSL takes nothing of failed the handshake after connecting (exit 7); now it
        // is a usage error before anything is sent. A list with one name OpenSSL knows passes,
        // as it does in libcurl (the others are passed over).
        let connections = server.connections
        let unknown = InProcessAF.run([ca, "--ciphers=NO-SUCH-CIPHER", server.url("/get")])
        #expect(unknown.status == 64)
        #expect(unknown.err == "af: error: invalid value 'NO-SUCH-CIPHER' for --ciphers: OpenSSL takes none of the ciphers 'NO-SUCH-CIPHER'; 'openssl ciphers' lists those it knows\n")
        let suites = InProcessAF.run([ca, "--ciphers=ECDHE-ECDSA-AES128-GCM-SHA256,TLS_NO_SUCH_SUITE", server.url("/get")])
        #expect(suites.status == 64)
        #expect(suites.err == "af: error: invalid value 'ECDHE-ECDSA-AES128-GCM-SHA256,TLS_NO_SUCH_SUITE' for --ciphers: OpenSSL takes none of the TLS 1.3 suites 'TLS_NO_SUCH_SUITE'; 'openssl ciphers -s -tls1_3' lists those it knows\n")
        #expect(server.connections == connections)
        #expect(InProcessAF.run([ca, "--ciphers=NO-SUCH-CIPHER:ECDHE-ECDSA-AES128-GCM-SHA256", server.url("/get")]).status == 0)
    }

    @Test func pinCommandPrintsTheSamePinAsOpenSSL() throws {
        let issued = try pki.issue(name: "print")
        let server = try server(issued)
        let expected = try TestPKI.publicKeyPin(ofCertificate: issued.certificatePath)
        let result = InProcessAF.run(["pin", ca, "127.0.0.1:\(server.port)"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.hasPrefix("Certificate 1 (leaf)\n  Subject:     CN=localhost\n  Issuer:      CN=af test CA\n"))
        #expect(result.out.contains("  Pin:         \(expected)\n"))
        #expect(result.out.contains("SHA-256:     "))
        #expect(server.requests.isEmpty)
        let untrusted = InProcessAF.run(["pin", "127.0.0.1:\(server.port)"])
        #expect(untrusted.status == 7)
        #expect(untrusted.out.contains(expected))
        #expect(untrusted.err.contains("(the chain above is what the server presented)"))
        let file = InProcessAF.run(["pin", "--file", issued.certificatePath])
        #expect(file.status == 0)
        #expect(file.out.contains("  Pin:         \(expected)\n"))
        let missing = InProcessAF.run(["pin", "--file", "/nonexistent"])
        #expect(missing.status == 66)
        // As every other file option says it (it named the path twice, without the reason).
        #expect(missing.err == "af: error: cannot read '/nonexistent' (from '--file'): no such file or directory; check the path and its permissions\n")
        let notCertificate = directory + "/pin-not-a-certificate.txt"
        try "hello\n".write(toFile: notCertificate, atomically: false, encoding: .utf8)
        let garbage = InProcessAF.run(["pin", "--file", notCertificate])
        #expect(garbage.status == 66)
        #expect(garbage.err == "af: error: cannot read certificates from '\(notCertificate)': it holds no PEM or DER certificate\n")
        #expect(InProcessAF.run(["pin"]).status == 64)
    }

    @Test func trustPolicyAppliesPerHostAcrossARedirect() throws {
        let issuedA = try pki.issue(name: "a", hosts: ["a.test"])
        let issuedB = try pki.issue(name: "b", hosts: ["b.test"])
        let serverA = try server(issuedA)
        let serverB = try server(issuedB)
        serverA.route("/hop") { _, _ in .response(status: 302, headers: [("Location", "https://b.test:\(serverB.port)/get")]) }
        let resolve = ["--resolve=a.test:\(serverA.port):127.0.0.1", "--resolve=b.test:\(serverB.port):127.0.0.1"]
        let caPath = pki.caCertificatePath
        let policy = directory + "/policy.json"
        try """
        {"all_hosts_must_be_evaluated": true,
         "hosts": {"a.test": ["default"],
                   "*.test": ["default", {"pins": ["sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="]}]}}
        """.write(toFile: policy, atomically: false, encoding: .utf8)
        let result = InProcessAF.run(["--verify=\(caPath)", "--trust-policy=\(policy)", "-F", "https://a.test:\(serverA.port)/hop"] + resolve)
        #expect(result.status == 8, "\(result.err)")
        #expect(result.err.contains("no pinned public key in the chain of b.test"))
        #expect(serverA.hits("/hop") == 1)
        #expect(serverB.requests.isEmpty)

        let pinB = try TestPKI.publicKeyPin(ofCertificate: issuedB.certificatePath)
        try """
        {"hosts": {"a.test": ["default"], "*.test": [{"pins": ["\(pinB)"]}, "default"]}}
        """.write(toFile: policy, atomically: false, encoding: .utf8)
        #expect(InProcessAF.run(["--verify=\(caPath)", "--trust-policy=\(policy)", "-F", "https://a.test:\(serverA.port)/hop"] + resolve).status == 0)
        #expect(serverB.hits("/get") == 1)

        try #"{"hosts": {"a.test": ["default"]}}"#.write(toFile: policy, atomically: false, encoding: .utf8)
        let unlisted = InProcessAF.run(["--verify=\(caPath)", "--trust-policy=\(policy)", "-F", "https://a.test:\(serverA.port)/hop"] + resolve)
        #expect(unlisted.status == 7)
        #expect(unlisted.err.contains("the trust policy has no entry for b.test"))
    }

    /// `--verify=DIR` trusts a directory of hashed CA certificates (as requests and curl's
    /// --capath do), and only those: it was refused as "a directory; name a file".
    @Test func verifyTakesAHashedCADirectory() throws {
        let server = try server(try pki.issue(name: "capath"))
        let hashed = try pki.hashedCADirectory()
        let trusted = InProcessAF.run(["--verify=\(hashed)", "https://localhost:\(server.port)/get"])
        #expect(trusted.status == 0, "\(trusted.err)")
        let empty = try TemporaryDirectory.make(prefix: "af-capath")
        let untrusted = InProcessAF.run(["--verify=\(empty)", "https://localhost:\(server.port)/get"])
        #expect(untrusted.status == 7, "\(untrusted.err)")
        #expect(InProcessAF.run(["--verify=/nonexistent/dir", "https://localhost:\(server.port)/get"]).status == 66)
    }

    /// A CA bundle the environment names in place of the system's (a corporate CA left in
    /// REQUESTS_CA_BUNDLE) is named when a certificate does not verify against it; a variable
    /// that names the system's own bundle (as Nix and container images set them) is not.
    @Test func aCABundleFromTheEnvironmentIsNamedWhenACertificateFailsAgainstIt() throws {
        let server = try server(try pki.issue(name: "env-other-ca"))
        let url = "https://localhost:\(server.port)/get"
        let other = try pki.selfSigned(name: "env-other-root").certificatePath
        let result = InProcessAF.run([url], environment: ["REQUESTS_CA_BUNDLE": other])
        #expect(result.status == 7)
        #expect(result.err.hasSuffix("; use --verify=CA.pem for a private CA, or --pin-cert for a self-signed certificate "
                                     + "(af trusts only the CA certificates of REQUESTS_CA_BUNDLE='\(other)', set in the environment, instead of the system's: unset it to trust the system's)\n"),
                "\(result.err)")
        // The system's own bundle, by whichever variable: nothing to add.
        let defaults = CurlRuntime.defaultCALocations
        if let file = defaults.file {
            let system = InProcessAF.run([url], environment: ["SSL_CERT_FILE": file])
            #expect(system.status == 7)
            #expect(system.err.hasSuffix("; use --verify=CA.pem for a private CA, or --pin-cert for a self-signed certificate\n"), "\(system.err)")
        }
        // A bundle --verify names is the user's own choice: nothing about the environment, and
        // not the advice to give one; that it holds no certificate of the issuing CA.
        let named = InProcessAF.run(["--verify=\(other)", url])
        #expect(named.err.hasSuffix("; '\(other)' (from --verify) holds no certificate of the CA that issued it: give --verify that CA's certificate, or --pin-cert for a self-signed certificate\n"), "\(named.err)")
    }

    /// Without `--verify=PATH` the CA bundle comes from `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE`,
    /// `SSL_CERT_FILE` or `SSL_CERT_DIR`, the first set and not empty, as HTTPie and curl take
    /// it. af read none of them: a private CA set up for every other tool failed with exit 7.
    @Test func theEnvironmentNamesTheCABundle() throws {
        let server = try server(try pki.issue(name: "env-bundle"))
        let url = "https://localhost:\(server.port)/get"
        let missing = "/nonexistent/ca.pem"
        for variable in TrustConfiguration.bundleVariables.dropLast() {
            let result = InProcessAF.run([url], environment: [variable: pki.caCertificatePath])
            #expect(result.status == 0, "\(variable): \(result.err)")
        }
        let hashed = try pki.hashedCADirectory()
        #expect(InProcessAF.run([url], environment: ["SSL_CERT_DIR": hashed]).status == 0)
        // SSL_CERT_DIR is a list, as OpenSSL reads it: directories that do not exist are
        // passed over, and none at all is an error.
        #expect(InProcessAF.run([url], environment: ["SSL_CERT_DIR": "/nonexistent:\(hashed)"]).status == 0)
        let noDirectory = InProcessAF.run([url], environment: ["SSL_CERT_DIR": "/nonexistent:/nonexistent2"])
        #expect(noDirectory.status == 66)
        #expect(noDirectory.err.hasPrefix("af: error: cannot read the CA bundle '/nonexistent:/nonexistent2' that SSL_CERT_DIR names"))
        // The first that is set and not empty counts; the others are not looked at.
        let first = InProcessAF.run([url], environment: ["REQUESTS_CA_BUNDLE": "", "CURL_CA_BUNDLE": pki.caCertificatePath, "SSL_CERT_FILE": missing])
        #expect(first.status == 0, "\(first.err)")
        #expect(InProcessAF.run([url], environment: ["SSL_CERT_FILE": ""]).status == 7)
        // The command line comes first.
        #expect(InProcessAF.run(["--verify=\(pki.caCertificatePath)", url], environment: ["REQUESTS_CA_BUNDLE": missing]).status == 0)
        #expect(InProcessAF.run(["--verify=no", url], environment: ["REQUESTS_CA_BUNDLE": missing]).status == 0)
        // A bundle that cannot be read stops an https request before it is sent, naming the
        // variable; plain http does not use it.
        let connections = server.connections
        let unreadable = InProcessAF.run([url], environment: ["SSL_CERT_FILE": missing])
        #expect(unreadable.status == 66)
        #expect(unreadable.err == "af: error: cannot read the CA bundle '\(missing)' that SSL_CERT_FILE names: no such file or directory; correct SSL_CERT_FILE or unset it\n")
        #expect(server.connections == connections)
        let plain = try TestServer()
        #expect(InProcessAF.run([plain.url("/get")], environment: ["SSL_CERT_FILE": missing]).status == 0)
        // --curl names the bundle af trusts, as --cacert or (a directory) --capath.
        let curl = InProcessAF.run(["--curl", url], environment: ["SSL_CERT_FILE": pki.caCertificatePath])
        #expect(curl.out.hasSuffix(" --cacert \(pki.caCertificatePath)\n"), "\(curl.out)")
        let curlDirectory = InProcessAF.run(["--curl", url], environment: ["SSL_CERT_DIR": hashed])
        #expect(curlDirectory.out.hasSuffix(" --capath \(hashed)\n"), "\(curlDirectory.out)")
        // --verify=true and --verify=false were printed as --cacert true and --cacert false.
        #expect(!InProcessAF.run(["--curl", "--verify=true", url]).out.contains("--cacert"))
        #expect(InProcessAF.run(["--curl", "--verify=false", url]).out.hasSuffix(" --insecure\n"))
    }

    /// A CA bundle or CRL that holds no PEM certificate (or revocation list) is refused
    /// before anything is sent, as a wrong --cert is, naming the file and what it should
    /// hold: it was found by the handshake after connecting (exit 7, "error setting
    /// certificate file", with advice about environment variables the user had not set).
    @Test func aFileThatIsNoBundleOrCRLIsRefusedBeforeConnecting() throws {
        let server = try server(try pki.issue(name: "bad-bundle"))
        let url = "https://localhost:\(server.port)/get"
        let notPEM = directory + "/not-a-bundle.txt"
        try "hello\n".write(toFile: notPEM, atomically: false, encoding: .utf8)
        let der = directory + "/bundle.der"
        try Data([0x30, 0x82, 0x01, 0x0A, 0x02]).write(to: URL(fileURLWithPath: der))
        let connections = server.connections
        let bundle = InProcessAF.run(["--verify=\(notPEM)", url])
        #expect(bundle.status == 66)
        #expect(bundle.err == "af: error: cannot use '\(notPEM)' (from '--verify'): it holds no PEM certificate; a CA bundle is a file of -----BEGIN CERTIFICATE----- blocks (or a directory of hashed ones)\n")
        let binary = InProcessAF.run(["--verify=\(der)", url])
        #expect(binary.status == 66)
        #expect(binary.err == "af: error: cannot use '\(der)' (from '--verify'): it looks like a DER certificate, and a CA bundle is PEM: convert it (openssl x509 -inform DER -in FILE -out FILE.pem)\n")
        let variable = InProcessAF.run([url], environment: ["CURL_CA_BUNDLE": notPEM])
        #expect(variable.status == 66)
        #expect(variable.err == "af: error: cannot use the CA bundle '\(notPEM)' that CURL_CA_BUNDLE names: it holds no PEM certificate; a CA bundle is a file of -----BEGIN CERTIFICATE----- blocks (or a directory of hashed ones); correct CURL_CA_BUNDLE or unset it\n")
        let crl = InProcessAF.run([ca, "--crl=\(notPEM)", url])
        #expect(crl.status == 66)
        #expect(crl.err == "af: error: cannot use '\(notPEM)' (from '--crl'): it holds no PEM certificate revocation list; name a file with a -----BEGIN X509 CRL----- block\n")
        #expect(server.connections == connections, "nothing was sent")
        // A bundle with text around its certificates, as the system's has, is used.
        let annotated = directory + "/annotated.pem"
        try ("# Our private CA\n" + String(contentsOfFile: pki.caCertificatePath, encoding: .utf8) + "\n# end\n").write(toFile: annotated, atomically: false, encoding: .utf8)
        let used = InProcessAF.run(["--verify=\(annotated)", url])
        #expect(used.status == 0, "\(used.err)")
        // A CERTIFICATE block with bytes after the certificate's structure, which OpenSSL's
        // loader (and curl --cacert) ignore: the check read it with the trust settings a
        // TRUSTED CERTIFICATE carries there, failed, and refused a bundle the handshake takes.
        let pem = try String(contentsOfFile: pki.caCertificatePath, encoding: .utf8)
        let base64 = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let padded = (Data(base64Encoded: base64) ?? Data()) + Data([0, 1, 2, 3])
        let trailing = directory + "/trailing.pem"
        try ("-----BEGIN CERTIFICATE-----\n" + padded.base64EncodedString(options: .lineLength64Characters) + "\n-----END CERTIFICATE-----\n")
            .write(toFile: trailing, atomically: false, encoding: .utf8)
        let padding = InProcessAF.run(["--verify=\(trailing)", url])
        #expect(padding.status == 0, "\(padding.err)")
    }

    @Test func trustPolicyCertificatesAreRelativeToTheFile() throws {
        let issued = try pki.selfSigned(name: "policy-anchor", hosts: ["localhost"])
        let server = try server(issued)
        let certificate = directory + "/certs/api.pem"
        try FileManager.default.createDirectory(atPath: directory + "/certs", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: issued.certificatePath, toPath: certificate)
        let policy = directory + "/policy.json"
        try #"{"hosts": {"localhost": ["default", {"certificates": ["certs/api.pem"]}]}}"#.write(toFile: policy, atomically: false, encoding: .utf8)
        #expect(InProcessAF.run(["--trust-policy=\(policy)", "https://localhost:\(server.port)/get"]).status == 0)
        try #"{"hosts": {"localhost": ["disabled"]}, "all_hosts_must_be_evaluated": false}"#.write(toFile: policy, atomically: false, encoding: .utf8)
        #expect(InProcessAF.run(["--trust-policy=\(policy)", "https://localhost:\(server.port)/get"]).status == 0)
        #expect(InProcessAF.run(["--trust-policy=\(policy)", "https://127.0.0.1:\(server.port)/get"]).status == 7)
    }

    /// `localhost.` (DNS's fully qualified form, which libcurl connects to and checks the
    /// certificate for as `localhost`) is the host the policy names: its pins were skipped,
    /// the name matching no pattern, and with every host required a typed trailing dot was
    /// refused as unlisted.
    @Test func trustPolicyHoldsForTheFullyQualifiedName() throws {
        let server = try server(try pki.issue(name: "policy-dot"))
        let policy = directory + "/dot-policy.json"
        let wrongPin = "sha256//" + String(repeating: "A", count: 43) + "="
        try #"{"all_hosts_must_be_evaluated": false, "hosts": {"localhost": ["default", {"pins": ["\#(wrongPin)"]}]}}"#
            .write(toFile: policy, atomically: false, encoding: .utf8)
        for host in ["localhost", "localhost.", "LocalHost."] {
            let result = InProcessAF.run(["--verify=\(pki.caCertificatePath)", "--trust-policy=\(policy)", "--resolve=\(host):\(server.port):127.0.0.1", "https://\(host):\(server.port)/get"])
            #expect(result.status == 8, "\(host): \(result.err)")
            #expect(result.err.hasPrefix("af: error: pinning failed: no pinned public key in the chain of \(host);"), "\(result.err)")
        }
        try #"{"hosts": {"localhost.": ["default"]}}"#.write(toFile: policy, atomically: false, encoding: .utf8)
        let listed = InProcessAF.run(["--verify=\(pki.caCertificatePath)", "--trust-policy=\(policy)", "https://localhost:\(server.port)/get"])
        #expect(listed.status == 0, "\(listed.err)")
        #expect(server.requests.count == 1)
    }

    @Test(arguments: [
        ("{\"hosts\": {\"a\": [\"disabled\", \"default\"]}}", Int32(64), "\"disabled\" must stand alone for \"a\""),
        ("{\"hosts\": {\"a\": [\"sometimes\"]}}", 64, "unknown evaluator \"sometimes\" for \"a\""),
        ("{\"hosts\": {\"a\": [{\"pins\": [\"md5//x\"]}]}}", 64, "invalid pin \"md5//x\" for \"a\""),
        ("{\"hosts\": {\"a\": [{\"certificates\": [\"missing.pem\"]}]}}", 66, "cannot use certificate \"missing.pem\" for \"a\""),
        ("{\"hosts\": {}, \"extra\": 1}", 64, "unknown key \"extra\" in the trust policy"),
        ("{\"hosts\": {\"a\": [\"default\"]},\n \"oops\"}", 64, "is not valid JSON: expected ':' after the key at line 2, column 8"),
        ("{\"hosts\": {\"a*b\": [\"default\"]}}", 64, "host pattern \"a*b\""),
        // One host twice (case, or Unicode and its xn-- form): which evaluator applied was the
        // order of a dictionary.
        ("{\"hosts\": {\"A.test\": [\"default\"], \"a.test\": [\"disabled\"]}}", 64, "host patterns \"A.test\" and \"a.test\" in"),
        ("{\"hosts\": {\"b\u{FC}cher.test\": [\"default\"], \"xn--bcher-kva.test\": [\"disabled\"]}}", 64, "name the same host; keep one"),
        ("{\"hosts\": {\"a.test.\": [\"default\"], \"a.test\": [\"disabled\"]}}", 64, "host patterns \"a.test\" and \"a.test.\" in"),
    ])
    func trustPolicyErrors(text: String, status: Int32, message: String) throws {
        let policy = directory + "/bad-\(UUID().uuidString).json"
        try text.write(toFile: policy, atomically: false, encoding: .utf8)
        let result = InProcessAF.run(["--trust-policy=\(policy)", "https://127.0.0.1:9/"])
        #expect(result.status == status)
        #expect(result.err.contains(message), "\(result.err)")
        #expect(result.err.split(separator: "\n").count == 1)
    }

    @Test func unreadableTrustPolicy() {
        let result = InProcessAF.run(["--trust-policy=/nonexistent/policy.json", "https://127.0.0.1:9/"])
        #expect(result.status == 66)
        #expect(result.err == "af: error: cannot read '/nonexistent/policy.json' (from '--trust-policy'): no such file or directory; check the path and its permissions\n")
    }

    @Test(.enabled(if: ExternalServer.available("nghttpd"), "nghttpd (Debian's nghttp2-server) is not installed; ./install.sh --dev installs it"))
    func http2IsNegotiatedOverTLS() throws {
        let issued = try pki.issue(name: "h2")
        try "hello over h2\n".write(toFile: directory + "/hello.txt", atomically: false, encoding: .utf8)
        let server = try ExternalServer(nghttpdServing: directory, key: issued.keyPath, certificate: issued.certificatePath)
        let result = InProcessAF.run([ca, "-m", "-h", "https://127.0.0.1:\(server.port)/hello.txt"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.hasPrefix("HTTP/2 200 OK\n"))
        #expect(result.out.contains("Attempt 1: 200 OK  HTTP/2  127.0.0.1:\(server.port)"))
        let body = InProcessAF.run([ca, "https://127.0.0.1:\(server.port)/hello.txt"])
        #expect(body.out == "hello over h2\n")
    }
}
