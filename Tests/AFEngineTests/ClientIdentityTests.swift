import AFEngine
import AFTestSupport
import Foundation
import Testing

/// The engine's checks of TLS settings made before connecting: a client certificate with its
/// key and pass phrase (`ClientIdentity`), and a cipher selection (`CipherSelection`).
@Suite struct ClientIdentityTests {
    let pki = TestPKI.shared

    private func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try #require(FileManager.default.contents(atPath: path)))
    }

    @Test func verdictsOnCertificatesKeysAndPassPhrases() throws {
        let client = try pki.issue(name: "identity-client", hosts: ["client"], client: true)
        let other = try pki.issue(name: "identity-other", hosts: ["other"], client: true)
        let certificate = try bytes(client.certificatePath)
        let key = try bytes(client.keyPath)
        let encrypted = try bytes(try pki.encryptedKey(of: client, password: "pw"))
        let pem = String(decoding: certificate, as: UTF8.self)
        let der = [UInt8](try #require(Data(base64Encoded: pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined())))

        #expect(ClientIdentity.problem(certificate: certificate, key: key, passPhrase: nil) == nil)
        #expect(ClientIdentity.problem(certificate: certificate + key, key: nil, passPhrase: nil) == nil)
        #expect(ClientIdentity.problem(certificate: certificate, key: nil, passPhrase: nil) == .noPrivateKey)
        #expect(ClientIdentity.problem(certificate: Array("hello\n".utf8), key: key, passPhrase: nil) == .noCertificate(looksBinary: false))
        #expect(ClientIdentity.problem(certificate: der, key: key, passPhrase: nil) == .noCertificate(looksBinary: true))
        #expect(ClientIdentity.problem(certificate: certificate, key: certificate, passPhrase: nil) == .noPrivateKey)
        #expect(ClientIdentity.problem(certificate: certificate, key: try bytes(other.keyPath), passPhrase: nil) == .keyDoesNotMatch)
        #expect(ClientIdentity.problem(certificate: certificate, key: encrypted, passPhrase: nil) == .passPhraseNeeded)
        #expect(ClientIdentity.problem(certificate: certificate, key: encrypted, passPhrase: "nope") == .wrongPassPhrase)
        #expect(ClientIdentity.problem(certificate: certificate, key: encrypted, passPhrase: "pw") == nil)
        // Longer than OpenSSL's pass-phrase buffer: refused, never written past it.
        #expect(ClientIdentity.problem(certificate: certificate, key: encrypted, passPhrase: String(repeating: "x", count: 5000)) == .wrongPassPhrase)
        // A pass phrase for a key that needs none is not used (libcurl does not use it either).
        #expect(ClientIdentity.problem(certificate: certificate, key: key, passPhrase: "pw") == nil)
    }

    @Test func cipherSelectionSplitsAndAsksOpenSSL() {
        let both = CipherSelection("ECDHE-RSA-AES128-GCM-SHA256, TLS_AES_128_GCM_SHA256:NO-SUCH")
        #expect(both.classic == "ECDHE-RSA-AES128-GCM-SHA256:NO-SUCH")
        #expect(both.modern == "TLS_AES_128_GCM_SHA256")
        #expect(both.refusal() == nil)
        #expect(CipherSelection("NO-SUCH").refusal() == .classic("NO-SUCH"))
        #expect(CipherSelection("DEFAULT TLS_NO_SUCH").refusal() == .modern("TLS_NO_SUCH"))
        #expect(CipherSelection(" , ").classic == nil)
        #expect(CipherSelection(" , ").modern == nil)
    }

    /// How a resumed download reads a 206 answer's Content-Range at the bytes it holds.
    @Test func resumedRanges() {
        #expect(DownloadSink.resumedRange("bytes 1000-1999/2000", offset: 1000) == .appendable(end: 2000, total: 2000))
        #expect(DownloadSink.resumedRange("  BYTES 1000-1999/*\t", offset: 1000) == .appendable(end: 2000, total: nil))
        #expect(DownloadSink.resumedRange("bytes 900-1999/2000", offset: 1000) == .otherStart(900))
        #expect(DownloadSink.resumedRange("bytes 1000-999/2000", offset: 1000) == .invalid)
        #expect(DownloadSink.resumedRange("bytes 1000-1999/1999", offset: 1000) == .invalid)
        #expect(DownloadSink.resumedRange("bytes 1000-9223372036854775807/*", offset: 1000) == .invalid)
        #expect(DownloadSink.resumedRange("bytes 1000-99999999999999999999/*", offset: 1000) == .otherStart(nil))
        #expect(DownloadSink.resumedRange("bytes +1000-1999/2000", offset: 1000) == .otherStart(nil))
        #expect(DownloadSink.resumedRange("bytes 1000 -1999/2000", offset: 1000) == .otherStart(nil))
        #expect(DownloadSink.resumedRange("items 1000-1999/2000", offset: 1000) == .otherStart(nil))
        #expect(DownloadSink.resumedRange(nil, offset: 1000) == .otherStart(nil))
    }
}
