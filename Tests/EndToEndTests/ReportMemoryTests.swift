import AFTestSupport
import Foundation
import Testing

/// `--report=json` prints the body only once the request has ended. It held the body in
/// memory, with copies for its encodings (about five times its size in all: 993 MB of peak
/// memory for a 200 MB download); it now keeps a large body in a temporary file and writes
/// it from there.
@Suite struct ReportMemoryTests {
    /// 300 MB of binary body (base64 in the report) under a 400 MB address-space limit: held
    /// in memory, the run died of it (exit 134). af itself needs about 60 MB of address
    /// space here whatever the size; the rest is room for what the C library reserves per
    /// thread (64 MB for each malloc arena), which varies with load.
    @Test func aLargeBodyIsReportedInBoundedMemory() throws {
        let server = try TestServer()
        let directory = try TemporaryDirectory.make(prefix: "af-report-memory")
        let size = 300_000_000
        let encoded = (size + 2) / 3 * 4
        let script = """
            ulimit -v 400000
            n=$( { '\(AF.binary)' --report=json '\(server.url("/bytes/\(size)"))'; echo $? > '\(directory)/status'; } | wc -c )
            echo "$n" > '\(directory)/count'
            """
        let (status, errors) = try AF.shell(script)
        #expect(status == 0, "\(errors)")
        let exit = try String(contentsOfFile: directory + "/status", encoding: .utf8)
        #expect(exit == "0\n", "af exited \(exit): \(errors)")
        let count = try #require(Int(String(contentsOfFile: directory + "/count", encoding: .utf8).filter(\.isNumber)))
        // The document around the body is a few kB.
        #expect(count > encoded && count < encoded + 10_000, "\(count) bytes")
    }
}
