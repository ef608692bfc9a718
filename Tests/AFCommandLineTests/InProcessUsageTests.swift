import AFInProcess
import Testing

/// Usage errors need no process: these run af whole, in-process, through `Environment`.
@Suite struct InProcessUsageTests {
    @Test(arguments: [
        (["--timeout=1e30"], "--timeout: expected a number of seconds from 0 to 2000000"),
        (["--timeout=9223372036854775"], "--timeout: expected a number of seconds from 0 to 2000000"),
        (["--connect-timeout=1e30"], "--connect-timeout"),
        (["--max-filesize=8589934592G"], "--max-filesize: sizes go up to"),
        (["--retry=1", "--retry-delay=1e30", "--retry-max-delay=1e30"], "--retry-delay"),
        (["--retry=9223372036854775807", "--retry-max-time=0"], "--retry: expected a whole number from 0 to 1000000"),
        (["--retry-backoff=1e300"], "--retry-backoff: expected a factor from 1 to 100"),
        (["--timeout=nan"], "--timeout"),
    ])
    func hugeNumbersAreUsageErrors(arguments: [String], message: String) throws {
        // Port 9 (discard) on loopback: were anything sent, the exit status would not be 64.
        for extra in [[], ["--offline"], ["--curl"]] {
            let result = InProcessAF.run(arguments + extra + ["http://127.0.0.1:9/get"])
            #expect(result.status == 64, "\(result.err)")
            #expect(result.err.hasPrefix("af: error: ") && result.err.contains(message), "\(result.err)")
            #expect(result.err.split(separator: "\n").count == 1)
            #expect(result.out.isEmpty)
        }
    }

    @Test func aGoodRequestRunsInProcessToo() throws {
        let result = InProcessAF.run(["--offline", "post", "http://127.0.0.1:9/x", "name=ada"])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out.contains("POST /x HTTP/1.1"))
        #expect(result.out.contains("{\"name\": \"ada\"}"))
    }
}
