@testable import AFEngine
import Testing

/// Host names in Unicode go out in their ASCII form (`xn--` labels), as curl with libidn2,
/// HTTPie and browsers send them.
@Suite struct IDNATests {
    /// RFC 3492's samples and common names; each expected value is what Python's `punycode`
    /// codec gives for the same text.
    @Test(arguments: [
        ("bücher", "bcher-kva"), ("münchen", "mnchen-3ya"), ("☃", "n3h"), ("日本語", "wgv71a119e"),
        ("3年B組金八先生", "3B-ww4c5e180e575a65lsy2b"), ("他们为什么不说中文", "ihqwcrb4cv8a8dqg056pqjye"),
        ("ü", "tda"), ("a-b-ü", "a-b--3ra"), ("ß", "zca"), ("faß", "fa-hia"), ("ÿ", "wda"),
    ])
    func punycodeMatchesTheRFC(text: String, expected: String) {
        #expect(Punycode.encode(Array(text.unicodeScalars)) == expected)
    }

    @Test(arguments: [
        ("example.org", "example.org"), ("Example.ORG", "Example.ORG"), ("[::1]", "[::1]"),
        ("bücher.example", "xn--bcher-kva.example"), ("Bücher.Example", "xn--bcher-kva.example"),
        // Decomposed (u and a combining diaeresis): normalised to NFC first.
        ("bu\u{308}cher.example", "xn--bcher-kva.example"),
        // The ideographic full stops and full-width letters typed with an input method.
        ("日本語。ｊｐ", "xn--wgv71a119e.jp"), ("日本語．JP", "xn--wgv71a119e.jp"), ("日本語｡jp", "xn--wgv71a119e.jp"),
        ("faß.de", "xn--fa-hia.de"), ("bücher.example.", "xn--bcher-kva.example."), ("☃.net", "xn--n3h.net"),
    ])
    func hostsBecomeASCII(host: String, expected: String) {
        #expect(IDNA.asciiHost(host) == .success(expected))
    }

    /// no_proxy lists: names in Unicode become ASCII, keeping the leading dot, the separators
    /// and every other entry (patterns, addresses, `*`) as given.
    @Test(arguments: [
        ("localhost,.example.org", "localhost,.example.org"),
        ("bücher.example", "xn--bcher-kva.example"),
        ("localhost, .Bücher.example ,10.0.0.0/8", "localhost, .xn--bcher-kva.example,10.0.0.0/8"),
        ("*", "*"), ("日本語。ｊｐ,", "xn--wgv71a119e.jp,"),
    ])
    func noProxyListsBecomeASCII(list: String, expected: String) {
        #expect(IDNA.asciiHostList(list) == expected)
    }

    @Test func aLabelLongerThanDNSAllowsIsRefused() throws {
        let label = String(repeating: "ü", count: 70)
        #expect(IDNA.asciiHost(label + ".example") == .failure(.labelTooLong(label, 76)))
        // 63 bytes exactly is allowed: "xn--", 55 ASCII letters, "-" and three for the ü.
        let fits = "a" + String(repeating: "b", count: 54) + "ü"
        #expect(try IDNA.asciiHost(fits).get().utf8.count == 63)
    }

    @Test func urlsCarryTheASCIIHost() throws {
        let url = try HTTPURL(parsing: "http://Bücher.example:8080/p?q=1")
        #expect(url.host == "xn--bcher-kva.example")
        #expect(url.string == "http://xn--bcher-kva.example:8080/p?q=1")
        // Percent-encoded UTF-8 in the host is the same name.
        #expect(try HTTPURL(parsing: "https://b%C3%BCcher.example/").string == "https://xn--bcher-kva.example/")
        // A redirect to a Unicode host.
        let resolved = try HTTPURL(parsing: "http://example.org/a").resolving("//straße.de/x")
        #expect(resolved.string == "http://xn--strae-oqa.de/x")
        #expect(throws: AFError.self) { try HTTPURL(parsing: "http://" + String(repeating: "ü", count: 70) + ".example/") }
    }
}

/// `no_proxy` lists read as libcurl reads them, for libcurl 7.86 and later (addresses as
/// addresses and ranges) and before (addresses as names). The newer reading's rows for
/// 127.0.0.1 and for names were checked against libcurl 7.88.1 through curl's `--noproxy`;
/// those for IPv6 and 10.x hosts, which this machine cannot reach, follow libcurl's source.
@Suite struct NoProxyListTests {
    @Test(arguments: [
        ("*", "127.0.0.1", true), (" * ", "127.0.0.1", false), ("a,*", "127.0.0.1", false),
        ("127.0.0.1", "127.0.0.1", true), (".0.0.1", "127.0.0.1", false), ("0.0.1", "127.0.0.1", false), ("127.1", "127.0.0.1", false),
        ("127.0.0.0/8", "127.0.0.1", true), ("127.0.0.1/32", "127.0.0.1", true), ("127.0.0.1/0", "127.0.0.1", true),
        ("127.0.0.2/31", "127.0.0.1", false), ("127.0.0.0/33", "127.0.0.1", false), ("10.0.0.0/8", "10.1.2.3", true), ("10.0.0.0/9", "10.200.2.3", false),
        ("localhost 127.0.0.1", "127.0.0.1", true), ("127.0.0.1 localhost", "127.0.0.1", true), ("localhost,  127.0.0.1", "127.0.0.1", true),
        ("127.0.0.1:8282", "127.0.0.1", false), ("localhost", "127.0.0.1", false),
        ("::1", "[::1]", true), ("::/0", "[::1]", false), ("fe80::/16", "[fe80::1]", true), ("fe80::/16", "[fe81::1]", false), ("fe80::/10", "[fe80::1]", nil),
        ("127.0.0.1", "[::1]", false),
        ("localhost.", "localhost", true), ("example.test", "example.test.", true), ("10.0.0.0/8,localhost", "localhost", true),
        ("localhost:8282", "localhost", false),
    ] as [(String, String, Bool?)])
    func addressesAreComparedAsAddresses(list: String, host: String, bypasses: Bool?) {
        #expect(NoProxyList.sendsAround(list, host: host, readsRanges: true) == bypasses)
    }

    @Test(arguments: [
        (".0.0.1", "127.0.0.1", true), ("127.0.0.0/8", "127.0.0.1", false), ("::1", "[::1]", true),
        ("localhost.", "localhost", false), ("example.test", "example.test.", nil), ("a\texample.test", "example.test", nil),
        ("a example.test", "example.test", true), ("*", "example.test", true),
    ] as [(String, String, Bool?)])
    func olderLibcurlComparesAddressesAsNames(list: String, host: String, bypasses: Bool?) {
        #expect(NoProxyList.sendsAround(list, host: host, readsRanges: false) == bypasses)
    }
}
