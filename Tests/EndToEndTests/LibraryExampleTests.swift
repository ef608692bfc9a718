import AFTestSupport
import Foundation
import Testing

/// `Examples/PinnedGet`, a program that uses only the AFEngine library, built with the tests
/// and run here against a TLS test server.
@Suite struct LibraryExampleTests {
    static let binary: String? = {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        while directory.path != "/" {
            let candidate = directory.appendingPathComponent("af-example-pinned-get").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        return nil
    }()

    private func run(_ arguments: [String]) throws -> (output: String, status: Int32) {
        try Command.run(try #require(Self.binary, "af-example-pinned-get was not built next to the tests"), arguments)
    }

    @Test func getsWithARetryPolicyAndAPinnedKeyAndPrintsMetrics() throws {
        let pki = TestPKI.shared
        let issued = try pki.issue(name: "example")
        let server = try TestServer(tls: issued.identity)
        server.route("/flaky") { _, hit in
            hit == 1 ? .response(status: 503) : .response(status: 200, body: Array("pinned and well\n".utf8))
        }
        let pin = try TestPKI.publicKeyPin(ofCertificate: issued.certificatePath)
        let good = try run([server.url("/flaky"), pin, pki.caCertificatePath])
        #expect(good.status == 0, "\(good.output)")
        let lines = good.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "status: 200")
        #expect(lines.dropFirst().first == "body: 16 bytes")
        #expect(lines.count == 4, "\(lines)")
        #expect(lines.last?.hasPrefix("attempt 2: 200 over HTTP/1.1, ") == true, "\(lines)")
        #expect(lines.dropFirst(2).first?.hasPrefix("attempt 1: 503 over HTTP/1.1, ") == true, "\(lines)")
        #expect(server.hits("/flaky") == 2)

        let wrong = try run([server.url("/flaky"), "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", pki.caCertificatePath])
        #expect(wrong.status == 1)
        #expect(wrong.output.hasPrefix("failed: pinning failed"), "\(wrong.output)")
        #expect(server.hits("/flaky") == 2, "a pin mismatch stops the handshake before any request")
    }
}
