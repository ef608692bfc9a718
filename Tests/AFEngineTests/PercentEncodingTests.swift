import AFEngine
import AFTestSupport
import Testing

/// Query items and form fields, percent-encoded (`PercentEncoding`), from a program
/// (`RequestDescription.appendQuery`, `setFormBody`) to the server.
@Suite struct PercentEncodingTests {
    @Test func onlyUnreservedCharactersStayAsWritten() {
        #expect(PercentEncoding.component("a b&c=d+e/é~_.-?#%") == "a%20b%26c%3Dd%2Be%2F%C3%A9~_.-%3F%23%25")
        #expect(PercentEncoding.formComponent("a b+c") == "a+b%2Bc")
        #expect(PercentEncoding.query([("a b", "1"), ("", "")]) == "a%20b=1&=")
        #expect(PercentEncoding.form([("n", "x y"), ("z", "&")]) == "n=x+y&z=%26")
        #expect(PercentEncoding.appendingQuery("q=1", to: "http://h/p#f") == "http://h/p?q=1#f")
        #expect(PercentEncoding.appendingQuery("q=1", to: "http://h/p?a=b") == "http://h/p?a=b&q=1")
        #expect(PercentEncoding.appendingQuery("q=1", to: "http://h/p?") == "http://h/p?q=1")
        #expect(PercentEncoding.appendingQuery("q=1", to: "http://h/p?a&") == "http://h/p?a&q=1")
        #expect(PercentEncoding.appendingQuery("", to: "http://h/p") == "http://h/p")
    }

    @Test func aQueryAndAFormBodyReachTheServerAsGiven() async throws {
        let server = try TestServer()
        let session = Session()
        defer { session.shutdown() }
        var description = RequestDescription(method: .post, url: server.url("/echo?x=1"))
        description.appendQuery([("q", "swift lang"), ("a&b", "c=d")])
        description.setFormBody([("name", "Ada Lovelace"), ("sum", "1+1")])
        _ = try await session.request(description).serializingData()
        var request = try #require(server.requests(to: "/echo").last)
        #expect(request.target == "/echo?x=1&q=swift%20lang&a%26b=c%3Dd")
        #expect(String(decoding: request.body, as: UTF8.self) == "name=Ada+Lovelace&sum=1%2B1")
        #expect(request.header("Content-Type") == "application/x-www-form-urlencoded")
        description = RequestDescription(method: .post, url: server.url("/echo"), headers: [HTTPHeader(name: .contentType, value: "application/x-www-form-urlencoded; charset=utf-8")])
        description.setFormBody([("é", "ü")])
        _ = try await session.request(description).serializingData()
        request = try #require(server.requests(to: "/echo").last)
        #expect(String(decoding: request.body, as: UTF8.self) == "%C3%A9=%C3%BC")
        #expect(request.headers.filter { $0.name.lowercased() == "content-type" }.map(\.value) == ["application/x-www-form-urlencoded; charset=utf-8"])
    }
}
