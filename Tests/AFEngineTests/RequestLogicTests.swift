@testable import AFEngine
import AFTestSupport
import Foundation
import Testing

/// Request logic over the in-memory transport: no sockets, no server.
@Suite struct RequestLogicTests {
    private static func session(_ transport: InMemoryTransport, _ configuration: Session.Configuration = .init()) -> Session {
        Session(configuration: configuration, transport: transport)
    }

    @Test func retriesFollowThePolicyUntilASuccess() {
        let transport = InMemoryTransport { _, number in number < 3 ? .response(status: 503) : .response(status: 200, body: Array("ok".utf8)) }
        let session = Self.session(transport, .init(interceptor: Interceptor(retriers: [RetryPolicy(retryLimit: 3, delayScale: 0.001)])))
        let response = session.request(RequestDescription(url: "http://example.test/a")).run()
        #expect(response.status == 200)
        #expect(response.attempts.map { $0.response?.status } == [503, 503, 200])
        #expect(response.attempts.dropLast().allSatisfy { $0.retryDelay != nil })
        #expect(transport.attempts.count == 3)
    }

    @Test func transportFailuresAreRetriedAndTheLastOneReported() {
        let refused = AFError.transport(TransportFailure(kind: .connectionRefused, message: "connection refused by example.test:80"))
        let transport = InMemoryTransport { _, _ in .failure(refused) }
        let session = Self.session(transport, .init(interceptor: Interceptor(retriers: [RetryPolicy(retryLimit: 2, delayScale: 0.001)])))
        let response = session.request(RequestDescription(url: "http://example.test/a")).run()
        #expect(response.error == refused)
        #expect(response.attempts.count == 3)
    }

    @Test func postIsNotRetriedByDefault() {
        let transport = InMemoryTransport { _, _ in .response(status: 503) }
        let session = Self.session(transport, .init(interceptor: Interceptor(retriers: [RetryPolicy(retryLimit: 3, delayScale: 0.001)])))
        let response = session.request(RequestDescription(method: .post, url: "http://example.test/a")).run()
        #expect(response.status == 503)
        #expect(transport.attempts.count == 1)
    }

    @Test func redirectsAcrossOriginsDropCredentialsAndChangeTheMethod() {
        let transport = InMemoryTransport { description, _ in
            description.url.hasPrefix("http://one.test/")
                ? .response(status: 302, headers: [("Location", "http://two.test/next")], body: Array("moved".utf8))
                : .response(status: 200, body: Array("here".utf8))
        }
        let session = Self.session(transport, .init(redirectPolicy: RedirectPolicy(follow: true, maxRedirects: 5)))
        var description = RequestDescription(method: .post, url: "http://one.test/start", body: .bytes(Array("x=1".utf8)))
        description.headers.add(name: .authorization, value: "Bearer secret")
        let sink = MemorySink()
        let response = session.request(description, sink: sink).run()
        #expect(response.status == 200)
        #expect(sink.bytes == Array("here".utf8), "only the final body reaches the sink")
        #expect(response.redirects.count == 1)
        let second = transport.attempts[1]
        #expect(second.url == "http://two.test/next")
        #expect(second.method == .get, "302 after POST continues as GET")
        #expect(second.headers.value(for: .authorization) == nil, "credentials never cross to another origin")
    }

    @Test func aRedirectLoopStopsAtTheLimit() {
        let transport = InMemoryTransport { _, number in .response(status: 302, headers: [("Location", "/loop/\(number)")]) }
        let session = Self.session(transport, .init(redirectPolicy: RedirectPolicy(follow: true, maxRedirects: 3)))
        let response = session.request(RequestDescription(url: "http://example.test/loop/0")).run()
        #expect(response.error == .tooManyRedirects(limit: 3))
        #expect(transport.attempts.count == 4)
    }

    @Test func validationFailuresEndTheRequest() {
        let transport = InMemoryTransport { _, _ in .response(status: 404) }
        let response = Self.session(transport).request(RequestDescription(url: "http://example.test/missing"), validation: StatusValidation(acceptable: [200...299])).run()
        #expect(response.error == .responseValidationFailed(status: 404, reason: "Not Found"))
    }
}

/// Downloads and trust decisions over the in-memory transport.
@Suite struct DownloadAndTrustLogicTests {
    @Test func aBrokenDownloadResumesWithARangeAndGetsItsServerName() throws {
        let directory = try TemporaryDirectory.make(prefix: "af-logic-dl")
        let whole = Array("0123456789".utf8)
        let transport = InMemoryTransport { description, number in
            if number == 1 {
                return .truncated(status: 200, headers: [("Content-Length", "10"), ("ETag", "\"v1\""),
                                                         ("Content-Disposition", "attachment; filename=\"../report.txt\"")], body: Array(whole[0..<4]))
            }
            guard description.headers.value(for: .range) == "bytes=4-", description.headers.value(for: .ifRange) == "\"v1\"" else {
                return .response(status: 400)
            }
            return .response(status: 206, headers: [("Content-Range", "bytes 4-9/10"), ("ETag", "\"v1\"")], body: Array(whole[4...]))
        }
        let sink = try DownloadSink(configuration: .init(directory: directory, requestURL: "http://example.test/files/1"))
        let session = Session(configuration: .init(interceptor: Interceptor(
            adapters: [DownloadResumer(sink: sink)], retriers: [RetryPolicy(retryLimit: 2, delayScale: 0.001)]
        )), transport: transport)
        let response = session.request(RequestDescription(url: "http://example.test/files/1"), sink: sink,
                                       validation: StatusValidation(acceptable: [200...299])).run()
        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(transport.attempts.count == 2)
        let report = try #require(sink.report)
        #expect(report.path == directory + "/report.txt", "the server's name, reduced to a base name")
        #expect(FileManager.default.contents(atPath: report.path).map { [UInt8]($0) } == whole)
    }

    /// Two downloads of one process into one file: the second is refused before it is sent
    /// (however the path is spelt), until the first has finished; a download named by its
    /// response takes the next free name instead.
    @Test func aFileBeingDownloadedIsNotDownloadedIntoTwice() throws {
        let directory = try TemporaryDirectory.make(prefix: "af-logic-claim")
        func sink(_ name: String?, options: DownloadOptions = []) throws(AFError) -> DownloadSink {
            try DownloadSink(configuration: .init(directory: directory, fixedName: name, options: options, requestURL: "http://example.test/same.bin"))
        }
        let first = try sink("same.bin")
        for spelling in ["same.bin", "./same.bin", directory + "/same.bin"] {
            #expect(throws: AFError.output(OutputFailure(kind: .inUse, message: "another download in progress is saving '\(spelling.hasPrefix("/") ? spelling : directory + "/" + spelling)'; give each download a file of its own"))) {
                _ = try sink(spelling, options: .removePreviousFile)
            }
        }
        let named = try sink(nil, options: .removePreviousFile)
        let ok = ResponseHead(status: 200, reason: "OK", httpVersion: "HTTP/1.1", headers: [])
        try named.open(ok, attempt: 1)
        #expect(named.partPath == directory + "/same-1.bin.part")
        #expect(named.finish(error: nil) == nil)
        try first.open(ok, attempt: 1)
        #expect(first.finish(error: nil) == nil)
        #expect(try sink("same.bin", options: .removePreviousFile).partPath == directory + "/same.bin.part")
    }

    @Test func aHostTheTrustPolicyDoesNotCoverFailsBeforeAnyAttempt() {
        let transport = InMemoryTransport { _, _ in .response(status: 200) }
        let manager = ServerTrustManager(allHostsMustBeEvaluated: true, evaluators: ["api.example.test": DefaultTrustEvaluator()])
        let session = Session(configuration: .init(trustManager: manager), transport: transport)
        let response = session.request(RequestDescription(url: "https://other.example.test/")).run()
        #expect(response.error?.transportFailure?.kind == .tls)
        #expect(transport.attempts.isEmpty)
        let allowed = session.request(RequestDescription(url: "https://api.example.test/")).run()
        #expect(allowed.status == 200)
        #expect(transport.attempts.count == 1)
    }
}
