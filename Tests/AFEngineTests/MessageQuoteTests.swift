@testable import AFEngine
import Testing

/// What error messages quote: capped, and URLs without their passwords.
@Suite struct MessageQuoteTests {
    @Test(arguments: [
        ("http://bob:s3cret@h/p", "http://bob:***@h/p"),
        ("http://bob:s3cret@h", "http://bob:***@h"),
        ("https://:token@h:8443/?q=a:b@c", "https://:***@h:8443/?q=a:b@c"),
        ("http://u:p@ss@h/", "http://u:***@h/"),
        // No password: the user name stays (a name is not a secret by convention).
        ("http://bob@h/", "http://bob@h/"),
        ("http://bob:@h/", "http://bob:@h/"),
        // An '@' or ':' after the authority is no credential.
        ("http://h/a:b@c", "http://h/a:b@c"),
        ("http://h?x=u:p@q", "http://h?x=u:p@q"),
        ("http://h#u:p@q", "http://h#u:p@q"),
        ("h:8080/a", "h:8080/a"),
        ("", ""),
        // The URL parser skips any slashes after the scheme, leaning either way, or none
        // after http and https: the password it reads there is hidden too.
        ("http:/bob:s3cret@h/p", "http:/bob:***@h/p"),
        ("https:\\\\bob:s3cret@h", "https:\\\\bob:***@h"),
        ("http:////bob:s3cret@h", "http:////bob:***@h"),
        ("HTTP:bob:s3cret@h", "HTTP:bob:***@h"),
        ("//bob:s3cret@h/p", "//bob:***@h/p"),
        ("bob:s3cret@h:8080", "bob:***@h:8080"),
        // With neither, the first colon is no scheme's.
        ("localhost:8080/a:b@c", "localhost:8080/a:b@c"),
    ])
    func passwordsAreLeftOut(url: String, quoted: String) {
        #expect(MessageQuote.withoutPassword(url) == quoted)
    }

    @Test(arguments: [
        ("http://u:p@proxy:3128", "http://proxy:3128"),
        ("http://u@proxy:3128/", "http://proxy:3128/"),
        ("u:p@proxy:3128", "proxy:3128"),
        ("http://proxy:3128", "http://proxy:3128"),
        ("socks5h://a:b@c@proxy", "socks5h://proxy"),
        ("http:/u:p@proxy:3128", "http:/proxy:3128"),
    ])
    func proxiesAreNamedWithoutCredentials(url: String, named: String) {
        #expect(MessageQuote.withoutCredentials(url) == named)
    }

    @Test func longTextIsCappedBetweenCharacters() {
        #expect(MessageQuote.capped(String(repeating: "a", count: 120)) == String(repeating: "a", count: 120))
        #expect(MessageQuote.capped(String(repeating: "a", count: 121)) == String(repeating: "a", count: 120) + "… (121 bytes)")
        // A two-byte character that would cross the limit is left out whole.
        #expect(MessageQuote.capped(String(repeating: "a", count: 119) + "éé") == String(repeating: "a", count: 119) + "… (123 bytes)")
        let url = "http://bob:s3cret@h/" + String(repeating: "p", count: 200)
        #expect(MessageQuote.url(url) == "http://bob:***@h/" + String(repeating: "p", count: 103) + "… (217 bytes)")
    }
}
