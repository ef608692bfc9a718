@testable import AFCommandLine
import AFInProcess
import AFTestSupport
import Foundation
import Testing

/// The foundation: a real request through the real binary, exact bytes, exit codes.
@Suite struct BasicRequestTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
    }

    @Test func getWithItemsSendsExactlyThat() throws {
        let result = InProcessAF.run(["get", server.url("/echo"), "X-A:1", "q==2", "name=v", "n:=3"])
        #expect(result.status == 0, "\(result.err)")
        let request = try #require(server.requests.last)
        #expect(request.method == "GET")
        #expect(request.target == "/echo?q=2")
        #expect(request.header("X-A") == "1")
        #expect(request.header("Content-Type") == "application/json")
        #expect(request.header("Accept") == "application/json, */*;q=0.5")
        #expect(request.header("User-Agent") == "af/0.1.0")
        #expect(request.header("Expect") == nil)
        #expect(request.bodyText == #"{"name": "v", "n": 3}"#)
        #expect(result.err.isEmpty)
    }

    @Test func dotSegmentsAreResolvedUnlessPathAsIs() throws {
        #expect(InProcessAF.run([server.url("/a/../echo/./x")]).status == 0)
        #expect(server.requests.last?.target == "/echo/x")
        #expect(InProcessAF.run(["--path-as-is", server.url("/a/../echo/./x")]).status == 0)
        #expect(server.requests.last?.target == "/a/../echo/./x")
    }

    @Test func pipedBodyIsTheExactBytes() {
        let result = InProcessAF.run([server.url("/json")])
        #expect(result.status == 0)
        #expect(result.out == BuiltinRoutes.sampleJSON)
    }

    @Test func largeBinaryBodyIsExact() {
        let result = InProcessAF.run([server.url("/bytes/300000")])
        #expect(result.status == 0, "\(result.err)")
        let exact = result.stdout == TestData.bytes(count: 300_000)
        #expect(exact)
    }

    @Test func methodDefaultsFollowTheBody() throws {
        #expect(InProcessAF.run([server.url("/echo")]).status == 0)
        #expect(server.requests.last?.method == "GET")
        #expect(InProcessAF.run([server.url("/echo"), "a=b"]).status == 0)
        #expect(server.requests.last?.method == "POST")
        #expect(InProcessAF.run(["purge", server.url("/echo")]).status == 0)
        #expect(server.requests.last?.method == "PURGE")
        #expect(InProcessAF.run(["delete", server.url("/echo"), "a=b"]).status == 0)
        #expect(server.requests.last?.method == "DELETE")
        #expect(server.requests.last?.bodyText == #"{"a": "b"}"#)
    }

    @Test func refusedConnectionIsExitOneWithOneLine() throws {
        let closed = try TestServer()
        let port = closed.port
        closed.stop()
        let result = InProcessAF.run(["http://127.0.0.1:\(port)/x"])
        #expect(result.status == 1)
        #expect(result.err == "af: error: connection refused by 127.0.0.1:\(port); is the server running?\n")
        #expect(result.stdout.isEmpty)
    }

    @Test func timeoutIsExitTwo() {
        let result = InProcessAF.run(["--timeout=0.3", server.url("/delay/3")])
        #expect(result.status == 2)
        #expect(result.err == "af: error: no complete response from 127.0.0.1:\(server.port) within 300ms; raise --timeout if it needs longer\n")
    }

    @Test func unknownOptionSuggestsAndSendsNothing() {
        let result = InProcessAF.run(["--retyr=3", server.url("/echo")])
        #expect(result.status == 64)
        #expect(result.err == "af: error: unknown option '--retyr'; did you mean '--retry'?\n")
        #expect(server.requests.isEmpty)
    }

    /// An option with a value right before the URL takes the URL when its own value is
    /// forgotten (`af -o URL`): the error says so instead of only "no URL given".
    @Test func aURLTakenAsAnOptionsValueIsNamed() {
        let url = server.url("/get")
        let result = InProcessAF.run(["-o", url])
        #expect(result.status == 64)
        #expect(result.err == "af: error: no URL given: -o took '\(url)' as its value; give -o a value of its own before the URL\n")
        #expect(InProcessAF.run(["--auth", ":\(server.port)/get"]).err
                == "af: error: no URL given: --auth took ':\(server.port)/get' as its value; give --auth a value of its own before the URL\n")
        // Written with '=', the value is what the user meant.
        #expect(InProcessAF.run(["--output=\(url)"]).err == "af: error: no URL given; usage: af [OPTIONS] [METHOD] URL [REQUEST_ITEM ...] (see 'af --help')\n")
        #expect(InProcessAF.run(["--help", "-o", url]).status == 0)
        #expect(server.requests.isEmpty)
    }

    @Test func versionNamesTheLibraries() {
        let result = InProcessAF.run(["--version"])
        #expect(result.status == 0)
        let lines = result.out.split(separator: "\n")
        #expect(lines.first == "af 0.1.0")
        #expect(lines.contains { $0.hasPrefix("libcurl 7.") || $0.hasPrefix("libcurl 8.") })
        #expect(lines.contains { $0.hasPrefix("OpenSSL 3.") })
        #expect(lines.contains { $0.hasPrefix("zlib 1.") })
        // The test build is a plain `swift build`, which records no build information.
        #expect(lines.dropFirst().first == "built without build information (./install.sh records the commit, its date and the Swift version)")
        #expect(HelpText.buildLine(commit: "0123456789ab", date: "2026-12-04", swift: "6.3.1") == "built from commit 0123456789ab on 2026-12-04 with Swift 6.3.1")
    }

    @Test func helpListsTheOptionsAndExitsZero() {
        let result = InProcessAF.run(["--help"])
        #expect(result.status == 0)
        #expect(result.out.contains("--retry=N"))
        #expect(result.out.contains("Request items:"))
    }

    @Test func offlineSendsNothing() {
        let result = InProcessAF.run(["--offline", "post", server.url("/echo"), "a=1"])
        #expect(result.status == 0)
        #expect(server.requests.isEmpty)
        #expect(result.out.hasPrefix("POST /echo HTTP/1.1\n"))
        #expect(result.out.contains("\n\n{\"a\": \"1\"}\n"))
    }

    @Test func noURLIsAUsageError() {
        let result = InProcessAF.run([])
        #expect(result.status == 64)
        #expect(result.err.hasPrefix("af: error: no URL given"))
    }

    @Test func sectionsSelectWhatIsPrinted() {
        let headers = InProcessAF.run(["-h", server.url("/json")])
        #expect(headers.out.hasPrefix("HTTP/1.1 200 OK\n"))
        #expect(!headers.out.contains("\"name\""))
        let verbose = InProcessAF.run(["-v", server.url("/json")])
        #expect(verbose.out.hasPrefix("GET /json HTTP/1.1\nHost: 127.0.0.1:\(server.port)\n"))
        #expect(verbose.out.contains("\n\nHTTP/1.1 200 OK\n"))
        #expect(verbose.out.hasSuffix(BuiltinRoutes.sampleJSON))
        let quiet = InProcessAF.run(["-q", server.url("/json")])
        #expect(quiet.status == 0)
        #expect(quiet.stdout.isEmpty)
    }
}
