import AFEngine
import AFTestSupport
import Foundation
import Testing

@Suite struct TransportTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
    }

    private func perform(_ description: RequestDescription, session: Session = Session()) -> (Response, [UInt8]) {
        let sink = MemorySink()
        let response = session.request(description, sink: sink).resume().waitForCompletion()
        return (response, sink.bytes)
    }

    /// A certificate probe of a server that takes the connection and never answers TLS ends
    /// when cancelled, not at the connect timeout.
    @Test func aCertificateProbeCanBeCancelled() {
        server.route("/") { _, _ in .custom { _ in Thread.sleep(forTimeInterval: 5) } }
        let session = Session()
        defer { session.shutdown() }
        let probe = session.probeCertificateChain(url: "https://127.0.0.1:\(server.port)/", options: TransferOptions())
        Thread.sleep(forTimeInterval: 0.3)
        let started = Date()
        probe.cancel()
        let (chain, error) = probe.wait()
        #expect(Date().timeIntervalSince(started) < 2)
        #expect(chain.isEmpty)
        #expect(error == .cancelled(.explicitly))
    }

    @Test func getReturnsBodyAndMetrics() throws {
        let (response, body) = perform(RequestDescription(url: server.url("/bytes/5000")))
        #expect(response.error == nil)
        #expect(response.status == 200)
        #expect(body == TestData.bytes(count: 5000))
        let metrics = try #require(response.attempts.first?.metrics)
        #expect(metrics.httpVersion == "HTTP/1.1")
        #expect(metrics.remoteAddress == "127.0.0.1")
        #expect(metrics.total > 0)
        #expect(metrics.bytesReceived > 5000)
    }

    /// libcurl builds a request head in at most 1 MiB and fails past it as "out of memory"
    /// with nothing sent, which af had called a response header line too long.
    @Test func aRequestHeadLibcurlCannotBuildIsNamed() throws {
        var headers = HTTPHeaders()
        headers.add(name: "X-Big", value: String(repeating: "a", count: 2 << 20))
        let description = RequestDescription(url: server.url("/get"), headers: headers)
        #expect(RequestHeadLimit.isExceeded(by: description))
        let (response, _) = perform(description)
        let error = try #require(response.error)
        #expect(error.description == "the request for 127.0.0.1:\(server.port) was not sent: its URL and headers come to "
                + "\(RequestHeadLimit.estimatedSize(of: description)) bytes, more than libcurl puts in a request head (1 MiB)")
        #expect(server.requests.isEmpty)
    }

    @Test func postSendsHeadersAndBodyExactly() throws {
        var headers = HTTPHeaders()
        headers.add(name: "X-A", value: "1")
        headers.add(name: "X-A", value: "2")
        headers.add(name: "Content-Type", value: "text/plain")
        let description = RequestDescription(method: .post, url: server.url("/echo"), headers: headers, body: .bytes(Array("hello".utf8)))
        let (response, _) = perform(description)
        #expect(response.status == 200)
        let received = try #require(server.requests.last)
        #expect(received.method == "POST")
        #expect(received.headerValues("X-A") == ["1", "2"])
        #expect(received.header("Expect") == nil)
        #expect(received.bodyText == "hello")
    }

    @Test func refusedConnectionIsClassified() throws {
        let closed = try TestServer()
        let url = closed.url("/")
        closed.stop()
        let (response, _) = perform(RequestDescription(url: url))
        let failure = try #require(response.error?.transportFailure)
        #expect(failure.kind == .connectionRefused)
        #expect(failure.message.contains("connection refused by 127.0.0.1:"))
    }

    /// A Cookie header goes on the line of the cookies the engine sends: one Cookie header.
    /// A cookie that is not well formed is not imported: a line break in its value was read
    /// by libcurl as another line of its cookie list, another cookie for any domain.
    @Test func aCookieHeaderJoinsTheEnginesCookiesAndMalformedCookiesStayOut() throws {
        let session = Session()
        session.importCookies([
            Cookie(name: "a", value: "1", domain: "127.0.0.1"),
            Cookie(name: "x", value: "2\n127.0.0.1\tFALSE\t/\tFALSE\t0\tinjected\tyes", domain: "127.0.0.1"),
            Cookie(name: "t\tab", value: "3", domain: "127.0.0.1"),
        ])
        #expect(session.exportCookies().map(\.name) == ["a"])
        var headers = HTTPHeaders()
        headers.add(name: .cookie, value: "b=2")
        let (response, _) = perform(RequestDescription(url: server.url("/cookies"), headers: headers), session: session)
        #expect(response.status == 200)
        #expect(server.requests.last?.headerValues("Cookie") == ["a=1; b=2"])
        #expect(Cookie(name: "v", value: "tab\tinside", domain: "h").isWellFormed)
        #expect(!Cookie(name: "", value: "1", domain: "h").isWellFormed)
        #expect(!Cookie(name: "p", value: "1", domain: "h", path: "/\r").isWellFormed)
    }

    /// A watchdog on another thread reads how much of the body the attempt under way has
    /// received: the part before a stall, then nothing once the request has ended.
    @Test func bodyBytesReceivedAreReadableWhileTheBodyComes() {
        server.route("/stall") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nfirst")
                Thread.sleep(forTimeInterval: 0.8)
                connection.write("rest")
            }
        }
        let request = Session().request(RequestDescription(url: server.url("/stall")))
        #expect(request.bodyBytesReceived == nil)
        _ = request.resume()
        Thread.sleep(forTimeInterval: 0.4)
        #expect(request.bodyBytesReceived == 5)
        let response = request.waitForCompletion()
        #expect(response.head?.status == 200)
        #expect(request.bodyBytesReceived == nil)
    }

    @Test func customMethodIsSentAsIs() throws {
        let (response, _) = perform(RequestDescription(method: HTTPMethod(rawValue: "PURGE"), url: server.url("/echo")))
        #expect(response.status == 200)
        #expect(server.requests.last?.method == "PURGE")
    }
}

/// The Accept-Encoding check that decides whether libcurl decodes a body, against the
/// definition it replaced (split on commas, up to `;`, trimmed, lower-cased, looked up).
@Suite struct AcceptEncodingTests {
    private func reference(_ value: String) -> Bool {
        let known = Set(CurlRuntime.supportedContentEncodings + ["identity", "*"])
        return value.split(separator: ",").allSatisfy { piece in
            let coding = piece.prefix { $0 != ";" }.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
            return known.contains(coding.lowercased())
        }
    }

    @Test func agreesWithTheDefinitionOnEveryShortValue() {
        let parts = ["gzip", "GZip", "deflate", "identity", "*", "x", ",", ";", " ", "\t", "q=1", "é", "İ"]
        var checked = 0
        for a in parts {
            for b in parts {
                for c in parts {
                    for d in ["", ",", ";", " br"] {
                        let value = a + b + c + d
                        #expect(CurlRuntime.decodesEveryCoding(in: value) == reference(value), "\(value.debugDescription)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == 13 * 13 * 13 * 4)
        #expect(CurlRuntime.decodesEveryCoding(in: "gzip, deflate;q=0.5 ,*"))
        #expect(CurlRuntime.decodesEveryCoding(in: CurlRuntime.acceptEncodingValue))
        #expect(!CurlRuntime.decodesEveryCoding(in: "gzip,;"))
        #expect(!CurlRuntime.decodesEveryCoding(in: "gzip, compress"))
    }
}
