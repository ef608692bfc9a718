@testable import AFEngine
import Testing

/// `HTTPURL(parsing:)` reads simple URLs itself and leaves the rest to libcurl; both readings
/// must agree, part by part, wherever the first one answers.
@Suite struct SimpleURLTests {
    static let hosts = [
        "example.org", "h", "a-b.c-d", "127.0.0.1", "10.20.30.40", "255.255.255.255", "0.0.0.0", "x1.2", "-a.b",
        // libcurl rewrites or refuses these: they must go to it.
        "127.1", "0x7f.0.0.1", "017.0.0.1", "2130706433", "256.1.1.1", "1.2.3.4.5", "01.2.3.4", "1.2.3.", "a..b",
        "Example.org", "h.", ".h", "", "1a.b", "[::1]", "u@h", "u:p@h", "%61b", "h_x", "b\u{FC}cher",
        String(repeating: "a", count: 64) + ".example", String(repeating: "abcdefghi.", count: 30) + "x",
    ]
    static let ports = ["", ":1", ":80", ":443", ":8282", ":65535", ":65536", ":0", ":080", ":", ":99999", ":8a"]
    static let paths = [
        "", "/", "/a", "/a/b/", "/bytes/1024", "//x", "/a%20b", "/a%2fb", "/%7E", "/a%2", "/a%zz", "/~u/x-y_z.t",
        "/!$&'()*+,;=:@", "/./a", "/a/../b", "/a/.", "/.well-known", "/a.b/c..d", "/a b", "/a\\b", "/a\"b", "/a<b>",
        "/a{b}", "/a|b", "/a^b", "/a`b", "/ü", "/a#f",
    ]
    static let queries = [
        "", "?", "?a=1", "?n=0&m=x", "?a=1?b=2/c", "?q=%20", "?q=%2", "?a b", "?a#f", "?a[1]=2", "?ü", "?#",
    ]

    /// Every host and port with a few paths, and every path and query with a few hosts.
    @Test func bothReadingsAgree() throws {
        var texts: [String] = []
        for scheme in ["http://", "https://", "HTTP://"] {
            for host in Self.hosts {
                for port in Self.ports {
                    for rest in ["", "/", "/a", "?a=1", "/a?b"] { texts.append(scheme + host + port + rest) }
                }
            }
        }
        for scheme in ["http://", "https://"] {
            for authority in ["h", "h:80", "127.0.0.1", "127.0.0.1:8282"] {
                for path in Self.paths {
                    for query in Self.queries { texts.append(scheme + authority + path + query) }
                }
            }
        }
        var answered = 0
        for text in texts {
            guard let simple = SimpleURL.parse(text) else { continue }
            answered += 1
            let full = try #require(try? HTTPURL.parsedByLibcurl(text), "\(text) read simply, refused by libcurl")
            #expect(simple == full, "\(text): \(simple) vs \(full)")
            #expect(simple.port == full.port && simple.path == full.path && simple.query == full.query, "\(text)")
            #expect(simple.string == HTTPURL.libcurlRendering(of: text), "\(text)")
        }
        // The common forms are read simply (else this test would pass by reading nothing).
        #expect(answered > texts.count / 10, "\(answered) of \(texts.count)")
    }

    @Test(arguments: [
        "http://127.0.0.1:8282/bytes/1024?n=0", "https://example.org", "http://example.org?x=1", "http://h:1/a%20b",
    ])
    func commonURLsAreReadSimply(text: String) throws {
        let simple = try #require(SimpleURL.parse(text))
        #expect(simple == (try HTTPURL.parsedByLibcurl(text)))
    }

    @Test(arguments: [
        "http://127.1/", "http://u@h/", "http://h/a/../b", "http://h/#f", "HTTP://h/", "http://[::1]/", "http://h/?",
        "http://H/", "http://h:080/", "http://h/a b", "ftp://h/", "http:/h/", "http://h:0/",
    ])
    func othersGoToLibcurl(text: String) {
        #expect(SimpleURL.parse(text) == nil)
    }

    /// libcurl encodes a followed Location's path and query, not its credentials: a space
    /// left there made a URL that did not parse again (found by the url fuzz target).
    @Test func aFollowedLocationEncodesASpaceInItsCredentials() throws {
        let target = try HTTPURL(parsing: "http://a.test/b/c?d").resolving("http://bob:pw xa:e8a@080/x")
        #expect(target.string == "http://bob:pw%20xa:e8a@080/x")
        #expect(target.password == "pw xa:e8a")
        #expect(try HTTPURL(parsing: target.string, pathAsIs: true).string == target.string)
        // The same with an IPv6 host, which libcurl renders itself: it rendered the
        // credentials as they came (found by the url fuzz target, Fuzz/corpus/url/location-ipv6-credentials).
        let literal = try HTTPURL(parsing: "http://a.test/b/c?d").resolving("http:/u\u{FFFD}:a b:c@[::2]:8443/x")
        #expect(literal.string == "http://u%ef%bf%bd:a%20b:c@[::2]:8443/x")
        #expect(literal.user == "u\u{FFFD}")
        #expect(literal.password == "a b:c")
        #expect(try HTTPURL(parsing: literal.string, pathAsIs: true).string == literal.string)
    }
}

/// Content types: the essence of a value (returned as it is when it already is one), and
/// the charset parameter.
@Suite struct MediaTypeTests {
    @Test(arguments: [
        ("application/json", "application/json"), ("Text/HTML; x=y", "text/html"), (" text/plain ", "text/plain"),
        ("application/ld+json;charset=utf-8", "application/ld+json"), ("", ""), ("TEXT/PLAIN", "text/plain"),
        ("text/plain\t;a=b", "text/plain"), ("t\u{C4}xt/x", "t\u{E4}xt/x"), ("a/b;", "a/b"),
    ])
    func essence(value: String, expected: String) {
        #expect(MIMEType.essence(of: value) == expected)
    }
}
