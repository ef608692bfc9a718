import AFTestSupport
import Foundation

// A standalone copy of the test server, for benchmarks and for trying af by hand:
//   af-test-server [--port N] [--tls]
// It prints its base URL and serves the built-in routes until killed.

var port = 0
var tls = false
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--port": port = Int(arguments.popFirst() ?? "") ?? 0
    case "--tls": tls = true
    default:
        FileHandle.standardError.write(Data("usage: af-test-server [--port N] [--tls]\n".utf8))
        exit(64)
    }
}
do {
    let identity = tls ? try TestPKI.shared.issue(name: "server").identity : nil
    // Nothing looks at the requests afterwards; recording them would grow the server by
    // about a kilobyte a request over a benchmark's hundreds of thousands.
    let server = try TestServer(tls: identity, port: port, recordsRequests: false)
    var banner = server.baseURL + "\n"
    if tls { banner += "CA certificate: \(TestPKI.shared.caCertificatePath)\n" }
    FileHandle.standardOutput.write(Data(banner.utf8))
    while true { sleep(3600) }
} catch {
    FileHandle.standardError.write(Data("af-test-server: \(error)\n".utf8))
    exit(1)
}
