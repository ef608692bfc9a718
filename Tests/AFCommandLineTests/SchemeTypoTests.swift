@testable import AFCommandLine
import Testing

/// `SchemeTypo`: what a URL with a mistyped scheme was meant to be, and no guess for one
/// that is not a typo of `http://` or `https://`.
@Suite struct SchemeTypoTests {
    @Test(arguments: [
        ("http//example.com/a", "http://example.com/a"),
        ("https//example.com", "https://example.com"),
        ("HTTP//example.com/?q=1", "http://example.com/?q=1"),
        ("http:://example.com", "http://example.com"),
        ("https:::///example.com/x", "https://example.com/x"),
        ("htps://example.com", "https://example.com"),
        ("htp://example.com", "http://example.com"),
        ("ttp://example.com", "http://example.com"),
        ("hhttp://example.com", "http://example.com"),
        ("htpt://example.com", "http://example.com"),
        ("httsp://example.com", "https://example.com"),
        ("httpss://example.com", "https://example.com"),
        ("http:127.0.0.1:8282/get", "http://127.0.0.1:8282/get"),
        ("https:example.com/a", "https://example.com/a"),
        ("http:\\\\example.com\\a", "http://example.com\\a"),
        ("https:\\/example.com", "https://example.com"),
    ])
    func mistypedSchemesAreCorrected(text: String, meant: String) {
        #expect(SchemeTypo.correction(of: text) == meant)
    }

    @Test(arguments: [
        "http://example.com", "https://example.com/", "http:/example.com", "example.com",
        "ftp://example.com", "ws://example.com", "hptt://example.com", "file:///etc/passwd",
        "http//", "http:", "localhost:8080/x", ":8080/x", "h://example.com", "httpsss://x",
        "http:8080", "https:443/x", "ftp:example.com", "http:\\",
    ])
    func othersGetNoGuess(text: String) {
        #expect(SchemeTypo.correction(of: text) == nil)
    }

    /// A scheme whose colon was left out (`https//host/x`) parses as a URL to a host named
    /// "https", and was sent there (a DNS failure, or a search domain's host); it is refused
    /// with what was meant. A host named http with a port (`http:8080/x`) is no typo.
    @Test func aURLToAHostNamedLikeASchemeIsATypo() throws {
        for (argument, meant) in [("https//example.org/x", "https://example.org/x"), ("HTTP//example.org", "http://example.org")] {
            #expect { _ = try URLBuilder.build(argument, https: false, query: [], pathAsIs: false) } throws: { error in
                (error as? CommandFailure)?.message == "invalid URL '\(argument)': it names the host '\(argument.prefix { $0 != "/" })'; did you mean '\(meant)'?"
            }
        }
        #expect(try URLBuilder.build("http:8080/x", https: false, query: [], pathAsIs: false).string == "http://http:8080/x")
        #expect(try URLBuilder.build("https/x", https: false, query: [], pathAsIs: false).string == "http://https/x")
    }

    @Test func distanceCountsOneEditOrSwap() {
        #expect(SchemeTypo.distance("http", "http") == 0)
        #expect(SchemeTypo.distance("htp", "http") == 1)
        #expect(SchemeTypo.distance("htpt", "http") == 1)
        #expect(SchemeTypo.distance("hxtp", "http") == 1)
        #expect(SchemeTypo.distance("httpx", "http") == 1)
        #expect(SchemeTypo.distance("hptt", "http") == 2)
        #expect(SchemeTypo.distance("ftp", "http") == 2)
        #expect(SchemeTypo.distance("h", "http") == 2)
    }
}
