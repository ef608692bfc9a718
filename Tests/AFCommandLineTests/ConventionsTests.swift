@testable import AFCommandLine
import AFEngine
import AFInProcess
import AFTestSupport
import Foundation
import Testing

/// Issue 12: what HTTPie and curl users rely on, run in-process against the test server.
@Suite struct ConventionsTests {
    let server: TestServer
    let directory: String

    init() throws {
        server = try TestServer()
        directory = try TemporaryDirectory.make(prefix: "af-conventions")
    }

    private func last(_ path: String) throws -> ServerRequest {
        try #require(server.requests(to: path).last)
    }

    // MARK: Divergences

    @Test func framingHeadersCannotContradictTheBody() throws {
        let wrong = InProcessAF.run(["post", server.url("/echo"), "Content-Length:0", "--raw", "foo"])
        #expect(wrong.status == 64)
        #expect(wrong.err == "af: error: Content-Length: 0 does not match the body, which has 3 bytes; drop the header (af sets it)\n")
        #expect(server.hits("/echo") == 0, "nothing is sent")
        let right = InProcessAF.run(["post", server.url("/echo"), "Content-Length:3", "--raw", "foo"])
        #expect(right.status == 0)
        #expect(try last("/echo").bodyText == "foo")
        let chunked = InProcessAF.run(["post", server.url("/echo"), "Transfer-Encoding:chunked", "--raw", "foo"])
        #expect(chunked.status == 0)
        #expect(try last("/echo").chunked)
        #expect(InProcessAF.run(["post", server.url("/echo"), "Transfer-Encoding:gzip", "--raw", "foo"]).status == 64)
        #expect(InProcessAF.run(["get", server.url("/echo"), "Content-Length:5"]).status == 64)
    }

    /// curl's value of such a letter that is a word (`-x squid URL`, a proxy without its port;
    /// `-b jar URL`, a cookie file) read as a method no one sends, and was sent; a registered
    /// method after the letter is one, and any method goes before it.
    @Test func aCurlValueWordIsNoMethod() throws {
        let url = server.url("/anything")
        let cases: [([String], String)] = [
            (["-x", "squid", url], "'squid' reads as the method SQUID; 'squid' came right after -x (--compress), which takes no value in af (curl's -x PROXY is --proxy=http:PROXY here); a method af should send goes before the option: af SQUID -x URL"),
            (["-vb", "jar", url], "'jar' reads as the method JAR; 'jar' came right after -b (--body), which takes no value in af (curl's -b cookies are a header item here: 'Cookie:name=value'); a method af should send goes before the option: af JAR -b URL"),
        ]
        for (arguments, message) in cases {
            let result = InProcessAF.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.err == "af: error: \(message)\n")
        }
        #expect(server.requests.isEmpty)
        for arguments in [["-F", "PROPFIND", url], ["-x", "get", url], ["SQUID", "-x", url]] {
            let result = InProcessAF.run(arguments)
            #expect(result.status == 0, "\(arguments): \(result.err)")
        }
        #expect(server.requests.map(\.method) == ["PROPFIND", "GET", "SQUID"])
    }

    /// A URL among the items was sent as a header named `http` with the value `//host/…`, with
    /// exit 0: `curl URL1 URL2` fetches both, and curl's `-m 5` (af's -m is --meta) left `5`
    /// as the URL, so af asked 0.0.0.5 with the intended URL in a header.
    @Test func aSecondURLIsRefusedNotSentAsAHeader() throws {
        let url = server.url("/get")
        let cases: [([String], String)] = [
            ([url, "http://example.test/x"], "'http://example.test/x' is a URL after the URL '\(url)': af makes one request per run; for many requests, list them in a file for af batch"),
            (["post", url, "HTTPS://example.test/"], "'HTTPS://example.test/' is a URL after the URL '\(url)': af makes one request per run; for many requests, list them in a file for af batch"),
            (["-m", "5", url], "'\(url)' is a URL after the URL '5': af makes one request per run; '5' came right after -m (--meta), which takes no value in af (curl's -m SECONDS is --timeout=SECONDS here)"),
            (["-d", "a=1", url], "'\(url)' is a URL after the URL 'a=1': af makes one request per run; 'a=1' came right after -d (--download), which takes no value in af (curl's -d data are items after the URL here: af POST URL name=value)"),
            (["-vx", "http://proxy.test:3128", url], "'\(url)' is a URL after the URL 'http://proxy.test:3128': af makes one request per run; 'http://proxy.test:3128' came right after -x (--compress), which takes no value in af (curl's -x PROXY is --proxy=http:PROXY here)"),
            // The localhost shorthand too (it was "request item ':8080/x' has no header name").
            (["-v", "12", ":8080/x"], "':8080/x' is a URL after the URL '12': af makes one request per run; if '12' was meant as an option's value, that option takes none in af (see af --help)"),
            ([url, ":8080/x"], "':8080/x' is a URL after the URL '\(url)': af makes one request per run; for many requests, list them in a file for af batch"),
            // Not right after the flag: what af can still say.
            (["-d", "-v", "a=1", url], "'\(url)' is a URL after the URL 'a=1': af makes one request per run; -d means --download in af, as in HTTPie: data items go after the URL (af POST URL name=value)"),
            (["7", url], "'\(url)' is a URL after the URL '7': af makes one request per run; if '7' was meant as an option's value, that option takes none in af (see af --help)"),
        ]
        for (arguments, message) in cases {
            let result = InProcessAF.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.err == "af: error: \(message)\n")
        }
        #expect(server.requests.isEmpty)
        // curl's -A is the User-Agent; af's (HTTPie's) takes an authentication scheme.
        let agent = InProcessAF.run(["-A", "Mozilla/5.0", url])
        #expect(agent.status == 64)
        #expect(agent.err == "af: error: invalid value 'Mozilla/5.0' for -A: choose basic, digest, bearer; -A is --auth-type in af, as in HTTPie; a User-Agent (curl's -A) is a header item: af URL 'User-Agent:VALUE'\n")
        #expect(server.requests.isEmpty)
        // A header whose value is a URL is still a header.
        #expect(InProcessAF.run([server.url("/echo"), "Referer:http://example.test/"]).status == 0)
        #expect(try last("/echo").header("Referer") == "http://example.test/")
    }

    /// curl's value for a letter or `--json` in the URL's place, with the URL after it
    /// without its scheme: `-m 5 localhost:8080/x` asked 0.0.0.5 with a header named
    /// localhost (exit 0); `-d @data.json URL` looked up the host data.json (af read
    /// `http://@data.json/`); `--json '{"a":1}' URL` failed as a URL with a bad port.
    @Test func curlValuesInTheURLsPlaceAreNamed() throws {
        let hostPort = "localhost:\(server.port)/get"
        let file = directory + "/data.json"
        try Data("{}".utf8).write(to: URL(fileURLWithPath: file))
        let timeout = "came right after -m (--meta), which takes no value in af (curl's -m SECONDS is --timeout=SECONDS here)"
        let json = "is a JSON document where the URL goes: send it as the body after the URL, with --raw, @FILE or standard input, or as items such as name=value and name:=json"
        let cases: [([String], String)] = [
            (["-m", "5", hostPort], "'\(hostPort)' is a URL after the URL '5': af makes one request per run; '5' \(timeout)"),
            (["-m", "5", "127.0.0.1:\(server.port)"], "'127.0.0.1:\(server.port)' is a URL after the URL '5': af makes one request per run; '5' \(timeout)"),
            (["-m", "5", "example.test"], "'example.test' is a URL after the URL '5': af makes one request per run; '5' \(timeout)"),
            (["-d", "@\(file)", hostPort], "'@\(file)' is where the URL goes, and no URL starts with @: a file sent as the body is an item after the URL, as in af POST URL @\(file); "
                + "'@\(file)' came right after -d (--download), which takes no value in af (curl's -d data are items after the URL here: af POST URL name=value)"),
            (["@\(file)"], "'@\(file)' is where the URL goes, and no URL starts with @: a file sent as the body is an item after the URL, as in af POST URL @\(file)"),
            (["--offline", "@\(file)"], "'@\(file)' is where the URL goes, and no URL starts with @: a file sent as the body is an item after the URL, as in af POST URL @\(file)"),
            (["--json", "{\"a\":1}", hostPort], "'{\"a\":1}' \(json); '{\"a\":1}' came right after --json, which takes no value in af (curl's --json takes the document)"),
            (["-j", "[1, 2]", server.url("/post")], "'[1, 2]' \(json); '[1, 2]' came right after -j (--json), which takes no value in af (curl's --json takes the document)"),
            (["-v", " {}", ":8080/x"], "' {}' \(json)"),
        ]
        for (arguments, message) in cases {
            let result = InProcessAF.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.err == "af: error: \(message)\n")
        }
        // A host name right after a flag no one gives a value keeps the item message, as does
        // a path, an item that forgot its @.
        #expect(InProcessAF.run(["--offline", hostPort, "example.test"]).err
            == "af: error: 'example.test' is not a request item: expected Name:Value, name==value, name=value, name:=json, name@file or @file\n")
        #expect(InProcessAF.run(["-m", "5", file]).err
            == "af: error: '\(file)' is not a request item: expected Name:Value, name==value, name=value, name:=json, name@file or @file\n")
        #expect(server.requests.isEmpty)
    }

    /// curl's `--cert FILE:PASSWORD` was "cannot read 'client.pem:s3cret' (from '--cert')",
    /// exit 66: the pass phrase printed on standard error (a CI job's log) and no word of
    /// af's spelling.
    @Test func curlsCertificateWithItsPassPhraseIsNamedWithoutIt() throws {
        let file = directory + "/client.pem"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let result = InProcessAF.run(["--cert", file + ":s3cret", server.url("/get")])
        #expect(result.status == 64)
        #expect(result.err == "af: error: --cert names '\(file)' and, after ':', what curl's --cert FILE:PASSWORD takes as its pass phrase; in af, give --cert=FILE --cert-key-pass=PASSWORD\n")
        // A path with a colon that names no file by its first part is read as it is.
        let missing = InProcessAF.run(["--cert", directory + "/none:x", server.url("/get")])
        #expect(missing.status == 66)
        #expect(missing.err.hasPrefix("af: error: cannot read '\(directory)/none:x' (from '--cert'): no such file or directory"))
        #expect(server.requests.isEmpty)
    }

    /// Items typed before the URL: the first item was taken as the URL (a header item parses
    /// as `host:port`), or a method followed by a data item was, and the messages spoke of a
    /// second URL after the URL 'a=1', of an option before it, or of a request item
    /// ':8282/get' with no header name. Now they say what af reads, and in which order.
    @Test func itemsBeforeTheURLAreNamedAsSuch() throws {
        let url = server.url("/get")
        let port = String(server.port)
        let cases: [([String], String)] = [
            (["X-A:1", "example.test/x"], "the URL 'example.test/x' came after request items: af reads [METHOD] URL [REQUEST_ITEM ...] in that order, as in af example.test/x X-A:1"),
            (["--offline", "a=1", url], "the URL '\(url)' came after request items: af reads [METHOD] URL [REQUEST_ITEM ...] in that order, as in af \(url) a=1"),
            (["post", "a=1", "n:=2", url], "the URL '\(url)' came after request items: af reads [METHOD] URL [REQUEST_ITEM ...] in that order, as in af POST \(url) a=1 n:=2"),
            (["Authorization:Bearer t0k", ":\(port)/get"], "the URL ':\(port)/get' came after request items: af reads [METHOD] URL [REQUEST_ITEM ...] in that order, as in af :\(port)/get 'Authorization:Bearer t0k'"),
            (["put", "X-A:1", "q==2", "localhost/get"], "the URL 'localhost/get' came after request items: af reads [METHOD] URL [REQUEST_ITEM ...] in that order, as in af PUT localhost/get X-A:1 q==2"),
        ]
        for (arguments, message) in cases {
            let result = InProcessAF.run(arguments)
            #expect(result.status == 64, "\(arguments)")
            #expect(result.err == "af: error: \(message)\n")
        }
        // A URL without its scheme after an item reads as a header (`localhost:8080/x`), and
        // the item failed as the URL ("invalid URL 'http://a=1'"); with the curl letter
        // before it, what that letter takes in curl.
        let hostPort = "localhost:\(port)/get"
        let early = "the URL '\(hostPort)' came after request items: af reads [METHOD] URL [REQUEST_ITEM ...] in that order, as in af \(hostPort) a=1"
        #expect(InProcessAF.run(["a=1", hostPort]).err == "af: error: \(early)\n")
        #expect(InProcessAF.run(["-F", "a=1", hostPort]).err == "af: error: \(early); 'a=1' came right after -F (--follow), which takes no value in af (curl's -F form fields are items with -f here: name=value, name@FILE)\n")
        // A word that is no URL after a URL that is no item keeps the item message; so does a
        // host name after `host:port/path`, which is a URL, not a header.
        let junk = InProcessAF.run(["--offline", "localhost:\(port)", "junk"])
        #expect(junk.err == "af: error: 'junk' is not a request item: expected Name:Value, name==value, name=value, name:=json, name@file or @file\n")
        let host = InProcessAF.run(["--offline", "localhost:\(port)/get", "example.test"])
        #expect(host.err == "af: error: 'example.test' is not a request item: expected Name:Value, name==value, name=value, name:=json, name@file or @file\n")
        #expect(server.requests.isEmpty)
    }

    @Test func requestBodyAloneIsPrintedForASentRequest() throws {
        let result = InProcessAF.run(["-p", "B", "post", server.url("/echo"), "a=b"])
        #expect(result.status == 0)
        #expect(result.out == #"{"a": "b"}"#)
        #expect(server.hits("/echo") == 1)
    }

    @Test func digestPrintsTheFinalExchange() {
        let result = InProcessAF.run(["-v", "-A", "digest", "-a", "user:pass", server.url("/digest-auth/user/pass")])
        #expect(result.status == 0)
        #expect(result.out.contains("Authorization: Digest username=\"user\""))
        #expect(result.out.contains("HTTP/1.1 200 OK"))
        // (Not just "401": the port in the Host header may contain those digits.)
        #expect(!result.out.contains("HTTP/1.1 401"))
        let all = InProcessAF.run(["-v", "--all", "-A", "digest", "-a", "user:pass", server.url("/digest-auth/user/pass")])
        let statusLines = all.out.split(separator: "\n").filter { $0.hasPrefix("HTTP/1.1 ") }
        #expect(statusLines == ["HTTP/1.1 401 Unauthorized", "HTTP/1.1 200 OK"])
        let refused = InProcessAF.run(["--check-status", "-A", "digest", "-a", "user:wrong", server.url("/digest-auth/user/pass")])
        #expect(refused.status == 4)
    }

    /// A digest server may call the nonce of an answer stale, with a new challenge that
    /// libcurl answers in turn: that 401 was taken for the response, and its head printed
    /// over the body of the 200 that came after it (exit 0, or 4 with --check-status). A
    /// server that calls every nonce stale got answers without end (2,561 requests, then an
    /// error about the size of the response head); af stops after the answer to the
    /// challenge and two renewals.
    @Test func aStaleDigestNonceIsRenewedAWhileAndNotPrinted() {
        server.route("/stale-once") { _, hit in
            switch hit {
            case 1: return .response(status: 401, headers: [("WWW-Authenticate", #"Digest realm="r", nonce="n1", qop="auth""#)], body: Array("denied".utf8))
            case 2: return .response(status: 401, headers: [("WWW-Authenticate", #"Digest realm="r", nonce="n2", qop="auth", stale=true"#)], body: Array("stale".utf8))
            default: return .text("ok\n")
            }
        }
        let renewed = InProcessAF.run(["--check-status", "-p", "hb", "-A", "digest", "-a", "user:pass", server.url("/stale-once")])
        #expect(renewed.status == 0, "\(renewed.err)")
        #expect(renewed.out.hasPrefix("HTTP/1.1 200 OK\n") && renewed.out.hasSuffix("\n\nok\n"), "\(renewed.out)")
        #expect(server.hits("/stale-once") == 3)

        server.route("/stale") { _, _ in
            .response(status: 401, headers: [("WWW-Authenticate", #"Digest realm="r", nonce="n0", qop="auth", stale=true"#)], body: Array("denied".utf8))
        }
        let result = InProcessAF.run(["-A", "digest", "-a", "user:pass", server.url("/stale")])
        #expect(result.status == 1)
        #expect(result.err == "af: error: 127.0.0.1:\(server.port) answered 3 digest responses in a row with a new challenge (a stale nonce); it takes none from these credentials\n")
        #expect(server.hits("/stale") == 4)
    }

    /// curl's `-F 'file=@photo.png'` after the URL: `-F` is --follow here, and the item sent
    /// the file's text as a JSON field. curl's `-d 'a=1'` or `-d @body.json`: `-d` is
    /// --download here, and the response went to a file named from the URL (the item as
    /// JSON). Refused, with af's spelling; `--follow` and `--download` say the flag is meant.
    @Test func curlsValueLettersBeforeItemsAreRefused() throws {
        let path = try TemporaryDirectory.write("hi\n", named: "note.txt", in: directory)
        let refused = InProcessAF.run([server.url("/post"), "-F", "file=@\(path)"])
        #expect(refused.status == 64)
        #expect(refused.err == "af: error: 'file=@\(path)' came right after -F, which is --follow in af and takes no value: curl's -F 'file=@\(path)' uploads the file, "
            + "which is the item file@\(path) here (multipart/form-data); to follow redirects and send the file's text as a JSON field, write --follow\n")
        #expect(server.requests.isEmpty)
        #expect(InProcessAF.run(["--follow", server.url("/post"), "file=@\(path)"]).status == 0)
        #expect(String(decoding: try last("/post").body, as: UTF8.self) == #"{"file": "hi\n"}"#)
        #expect(InProcessAF.run([server.url("/post"), "-F", "a=1"]).status == 0)
        let count = server.requests.count
        // (--output-dir: were they not refused, the responses would be saved there.)
        let body = InProcessAF.run(["--output-dir=\(directory)", server.url("/post"), "-d", "@\(path)"])
        #expect(body.status == 64)
        #expect(body.err == "af: error: '@\(path)' came right after -d, which is --download in af and takes no value: curl's -d '@\(path)' sends the file as the body, "
            + "as the item '@\(path)' alone does here; to save the response as a file as well, write --download\n")
        let form = InProcessAF.run(["--output-dir=\(directory)", server.url("/post"), "-d", "a=1"])
        #expect(form.status == 64)
        #expect(form.err == "af: error: 'a=1' came right after -d, which is --download in af and takes no value: curl's -d 'a=1' sends a form, "
            + "which is -f (--form) with the item 'a=1' here (without -f the item sends JSON); to save the response as a file as well, write --download\n")
        #expect(server.requests.count == count)
        #expect(InProcessAF.run([server.url("/post"), "--download", "--output-dir=\(directory)", "a=1"]).status == 0)
        #expect(InProcessAF.run(["-d", "--output-dir=\(directory)", server.url("/post"), "a=1"]).status == 0)
    }

    /// curl's `-b 'id=abc'` (send a cookie) after the URL: af read `-b` as --body and the
    /// cookie as a data item, and sent a POST of `{"id": "abc"}` without a word. Refused, as
    /// `-d` and `-F` are; and a word that is no item after a letter curl gives a value (`-m
    /// 10`, `-b jar.txt`), or items before the URL after one, say what curl meant by it.
    @Test func curlsCookieLetterAndOtherValuesAreNamed() throws {
        let cookie = InProcessAF.run([server.url("/get"), "-b", "id=abc; theme=dark"])
        #expect(cookie.status == 64)
        #expect(cookie.err == "af: error: 'id=abc; theme=dark' came right after -b, which is --body in af (print the response body only) and takes no value: "
            + "curl's -b 'id=abc; theme=dark' sends a cookie, which is the header item 'Cookie:id=abc; theme=dark' here; "
            + "to print only the body and send the item as a JSON field, write --body\n")
        let timeout = InProcessAF.run([server.url("/get"), "-m", "10"])
        #expect(timeout.status == 64)
        #expect(timeout.err == "af: error: '10' is not a request item: expected Name:Value, name==value, name=value, name:=json, name@file or @file; "
            + "'10' came right after -m (--meta), which takes no value in af (curl's -m SECONDS is --timeout=SECONDS here)\n")
        for url in [server.url("/get"), "127.0.0.1:\(server.port)/get", "localhost.:\(server.port)/get"] {
            let before = InProcessAF.run(["-b", "id=abc", url])
            #expect(before.status == 64)
            #expect(before.err.hasPrefix("af: error: the URL '\(url)' came after request items"), "\(before.err)")
            #expect(before.err.hasSuffix("; 'id=abc' came right after -b (--body), which takes no value in af (curl's -b cookies are a header item here: 'Cookie:name=value')\n"), "\(before.err)")
        }
        #expect(server.requests.isEmpty)
        // The header item sends the cookie; --body with a data item is still HTTPie's.
        #expect(InProcessAF.run([server.url("/get"), "Cookie:id=abc"]).status == 0)
        #expect(try last("/get").header("Cookie") == "id=abc")
        #expect(InProcessAF.run([server.url("/post"), "--body", "id=abc"]).status == 0)
        #expect(String(decoding: try last("/post").body, as: UTF8.self) == #"{"id": "abc"}"#)
    }

    /// A `Content-Type` item that names a form makes the data items that form, as a curl
    /// user's `-H 'Content-Type: application/x-www-form-urlencoded' -d a=1` does: they went
    /// as JSON under the form's type, which no server reads as a form. `--json` (and any other
    /// type) still sends JSON.
    @Test func aFormContentTypeMakesTheItemsThatForm() throws {
        #expect(InProcessAF.run(["post", server.url("/post"), "Content-Type:application/x-www-form-urlencoded", "a=1", "b=x y"]).status == 0)
        var request = try last("/post")
        #expect(String(decoding: request.body, as: UTF8.self) == "a=1&b=x+y")
        #expect(request.header("Content-Type") == "application/x-www-form-urlencoded")
        #expect(InProcessAF.run(["post", server.url("/post"), "content-type:Multipart/Form-Data", "a=1"]).status == 0)
        request = try last("/post")
        let type = try #require(request.header("Content-Type"))
        #expect(type.hasPrefix("Multipart/Form-Data; boundary="), "\(type)")
        #expect(String(decoding: request.body, as: UTF8.self).contains("Content-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"))
        for (options, type) in [(["--json"], "application/x-www-form-urlencoded"), ([], "text/plain")] {
            #expect(InProcessAF.run(options + ["post", server.url("/post"), "Content-Type:\(type)", "a=1"]).status == 0)
            request = try last("/post")
            #expect(String(decoding: request.body, as: UTF8.self) == #"{"a": "1"}"#, "\(options)")
            #expect(request.header("Content-Type") == type)
        }
    }

    @Test func multipartContentTypeGetsTheBoundary() {
        let result = InProcessAF.run(["--offline", "--multipart", "--boundary=XYZ", server.url("/post"), "Content-Type:multipart/mixed", "a=b"])
        #expect(result.out.contains("Content-Type: multipart/mixed; boundary=XYZ\n"))
    }

    @Test func bodyBytesIntoAPipeAreExact() throws {
        let path = directory + "/blob.bin"
        let bytes: [UInt8] = [0, 1, 2, 0xFF, 0xFE, 10, 13]
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let result = InProcessAF.run(["--offline", "-p", "B", "--pretty=none", "--boundary=B", server.url("/post"), "f@\(path)"])
        #expect(result.status == 0)
        let expected = Array("--B\r\nContent-Disposition: form-data; name=\"f\"; filename=\"blob.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
            + bytes + Array("\r\n--B--\r\n".utf8)
        #expect(result.stdout == expected)
        let text = directory + "/note.txt"
        try "hello part".write(toFile: text, atomically: false, encoding: .utf8)
        let shown = InProcessAF.run(["--offline", "-p", "B", "--pretty=all", "--boundary=B", server.url("/post"), "f@\(text)", "g@\(path)"])
        #expect(shown.out.contains("hello part"))
        // The note is af's own, in its colour; the parts around it are what the terminal may
        // see of the user's data. Escaped with them, the note read `\x1B[90m[contents of …`.
        #expect(shown.out == "--B\nContent-Disposition: form-data; name=\"f\"; filename=\"note.txt\"\nContent-Type: text/plain\n\nhello part\n"
                + "--B\nContent-Disposition: form-data; name=\"g\"; filename=\"blob.bin\"\nContent-Type: application/octet-stream\n\n"
                + "\u{1B}[90m[contents of '\(path)': 7 B of binary data]\u{1B}[0m\n--B--\n")
        // A value's escape sequence is still shown, not obeyed.
        let hostile = InProcessAF.run(["--offline", "-p", "B", "--pretty=all", "--boundary=B", "--multipart", server.url("/post"), "e=x\u{1B}[2Jy"])
        #expect(hostile.out == "--B\nContent-Disposition: form-data; name=\"e\"\n\nx\\x1B[2Jy\n--B--\n")
        let stdin = InProcessAF.run(["--offline", "-p", "B", "--pretty=none", server.url("/post")], stdin: .bytes(Array("piped body".utf8)))
        #expect(stdin.out == "piped body")
    }

    @Test func ignoreStdinNeverPrompts() {
        let result = InProcessAF.run(["-I", "-a", "user", server.url("/get")])
        #expect(result.status == 64)
        #expect(result.err.contains("-I"))
    }

    @Test func schemeShorthands() {
        let invalid = InProcessAF.run(["--offline", "://"])
        #expect(invalid.status == 64)
        let written = InProcessAF.run(["--offline", "://example.org/x"])
        #expect(written.out.hasPrefix("GET /x HTTP/1.1\nHost: example.org\n"))
        let https = InProcessAF.run(["--curl", "--default-scheme=https", "example.org/x"])
        #expect(https.out.contains("https://example.org/x"))
        #expect(InProcessAF.run(["--default-scheme=ftp", "example.org"]).status == 64)
        // An IPv6 address without its brackets reads as a host and a port; the error says so.
        for url in ["::1", "http://user@fe80::1:8080/x"] {
            let bare = InProcessAF.run(["--offline", url])
            #expect(bare.status == 64)
            #expect(bare.err.hasSuffix("; an IPv6 address goes in brackets, as in http://[::1]:8080/\n"), "\(bare.err)")
        }
        #expect(InProcessAF.run(["--offline", "[::1]:8080/x"]).out.hasPrefix("GET /x HTTP/1.1\nHost: [::1]:8080\n"))
        #expect(!InProcessAF.run(["--offline", "http://a:b:c@host:99999/"]).err.contains("IPv6"))
        // A password with an '@' in it, written as it is, names a host with an '@' in it.
        let at = InProcessAF.run(["--offline", "http://user:p@ss@example.org/"])
        #expect(at.status == 64)
        #expect(at.err.hasSuffix("; an '@' in a user name or password is written %40 (or give them with -a USER:PASSWORD)\n"), "\(at.err)")
        #expect(InProcessAF.run(["--offline", "-p", "H", "http://user:p%40ss@example.org/"]).out.contains("Authorization: Basic dXNlcjpwQHNz\n"))
    }

    /// A password with a `#`, `?` or `/` in it, written as it is, ends the host part there:
    /// the parser took `bob:pa` for a host and a port, and its message quoted the URL with the
    /// password (`invalid URL 'https://bob:pa#ss@api.example.org/': port number was not a
    /// decimal number…`), into a CI job's log. The character is named, the password hidden.
    @Test func aPasswordWithAURLDelimiterIsNamedAndHidden() {
        let cases = [
            ("https://bob:pa#ss@api.example.org/v1", "invalid URL 'https://bob:***@api.example.org/v1': its password holds a '#', which ends a URL's host part; write it %23 (or give the credentials with -a USER:PASSWORD)"),
            ("http://bob:pa?ss@example.org", "invalid URL 'http://bob:***@example.org': its password holds a '?', which ends a URL's host part; write it %3F (or give the credentials with -a USER:PASSWORD)"),
            ("http://bob:pa/ss@example.org/x", "invalid URL 'http://bob:***@example.org/x': its password holds a '/', which ends a URL's host part; write it %2F (or give the credentials with -a USER:PASSWORD)"),
        ]
        for (url, message) in cases {
            let result = InProcessAF.run(["--offline", url])
            #expect(result.status == 64)
            #expect(result.err == "af: error: \(message)\n")
        }
        // An '@' in the path after a bad port is the path's own.
        #expect(InProcessAF.run(["--offline", "http://example.org:abc/a/b@c"]).err.contains("port number was not a decimal number"))
        #expect(InProcessAF.run(["--offline", "-p", "H", "http://bob:pa%23ss@example.org/"]).out.contains("Authorization: Basic Ym9iOnBhI3Nz\n"))
    }

    /// Every message that quotes an argument holding a URL hides the URL's password, not only
    /// those about the URL argument: the password was printed for a URL with a no-break space
    /// or curly quotes in it (twice: in the command the message suggests), for a second URL,
    /// and for a header item's value.
    @Test func aQuotedArgumentHidesAURLsPassword() {
        let cases: [([String], String)] = [
            (["http://bob:s3cret@example.org/\u{A0}a==1"], "the URL 'http://bob:***@example.org/[U+00A0]a==1' has a no-break space (U+00A0) in it"),
            (["“http://bob:s3cret@example.org/”"], "the URL '“http://bob:***@example.org/”' begins with a curly quote (U+201C), as text copied from a document has; leave the quotes out: af http://bob:***@example.org/"),
            (["http://bob:s3cret@example.org/", "https://ann:t0ken@example.com/"], "'https://ann:***@example.com/' is a URL after the URL 'http://bob:***@example.org/'"),
            (["http://example.org/", "Referer:https://ann:t0ken@example.com/\r"], "header 'Referer' in 'Referer:https://ann:***@example.com/\\r' ends with a carriage return"),
        ]
        for (arguments, message) in cases {
            let result = InProcessAF.run(["--offline"] + arguments)
            #expect(result.status == 64)
            #expect(result.err.hasPrefix("af: error: \(message)"), "\(result.err)")
            #expect(!result.err.contains("s3cret") && !result.err.contains("t0ken"))
        }
    }

    @Test func anAuthTypeNeedsCredentials() {
        let result = InProcessAF.run(["--auth-type=basic", server.url("/get")])
        #expect(result.status == 64)
        #expect(result.err.contains("--auth-type=basic needs credentials"))
        #expect(server.hits("/get") == 0)
    }

    @Test func formFieldsFromJSONScalars() throws {
        let result = InProcessAF.run(["-f", server.url("/post"), "n:=1", "r:=1.5", "t:=true", "s:=\"text\""])
        #expect(result.status == 0, "\(result.err)")
        #expect(try last("/post").bodyText == "n=1&r=1.5&t=true&s=text")
        for item in ["a:=[1]", "o:={}", "z:=null"] {
            #expect(InProcessAF.run(["-f", server.url("/post"), item]).status == 64)
        }
    }

    @Test func verifyTakesYesAndNoInAnyCase() {
        for value in ["YES", "True", "no", "FALSE"] {
            #expect(InProcessAF.run(["--offline", "--verify=\(value)", server.url("/get")]).status == 0, "\(value)")
        }
    }

    @Test func offlineDownloadPrintsTheRequestOnStandardOutput() {
        let result = InProcessAF.run(["--offline", "-d", server.url("/get")])
        #expect(result.status == 0)
        #expect(result.out.hasPrefix("GET /get HTTP/1.1\n"))
        #expect(result.err.isEmpty)
    }

    @Test func aUserHostHeaderIsShownAsSpelled() {
        let result = InProcessAF.run(["-p", "H", server.url("/get"), "host:Example.COM"])
        #expect(result.out.contains("\nhost: Example.COM\n"))
    }

    @Test func clientCertificateFilesAreCheckedFirst() {
        let result = InProcessAF.run(["--cert=/nonexistent/cert.pem", server.url("/get")])
        #expect(result.status == 66)
        #expect(server.hits("/get") == 0)
        #expect(InProcessAF.run(["--cert=/nonexistent/cert.pem", "--cert-key=/nonexistent/key.pem", server.url("/get")]).status == 66)
        // A key without a certificate was ignored by libcurl (the request went out without one).
        let keyAlone = InProcessAF.run(["--cert-key=/nonexistent/key.pem", server.url("/get")])
        #expect(keyAlone.status == 64)
        #expect(keyAlone.err == "af: error: --cert-key is the private key of a client certificate, and no --cert names one; add --cert=FILE\n")
        #expect(server.hits("/get") == 0)
    }

    @Test func explicitJSON() throws {
        let result = InProcessAF.run(["-j", server.url("/get")])
        #expect(result.status == 0)
        let request = try last("/get")
        #expect(request.header("Accept") == "application/json, */*;q=0.5")
        #expect(request.header("Content-Type") == "application/json")
        #expect(InProcessAF.run(["-j", "-f", server.url("/get")]).status == 64)
    }

    @Test func sortingAndFormatOptions() {
        let sorted = InProcessAF.run(["--sorted", "-p", "hb", "--pretty=format", server.url("/json")])
        #expect(sorted.out.contains("Content-Length: 150\nContent-Type: application/json\n"))
        #expect(sorted.out.contains("{\n    \"big\":"))
        let options = InProcessAF.run(["--format-options=json.indent:2,json.sort_keys:true", "--pretty=format", server.url("/json")])
        #expect(options.out.hasPrefix("{\n  \"big\": 123456789012345678901234567890,\n  \"empty\": {},"))
        let unformatted = InProcessAF.run(["--format-options=json.format:false", "--pretty=format", server.url("/json")])
        #expect(unformatted.out == BuiltinRoutes.sampleJSON)
        #expect(InProcessAF.run(["--format-options=json.indent:99", server.url("/json")]).status == 64)
        #expect(InProcessAF.run(["--format-options=colour:yes", server.url("/json")]).status == 64)
        // The request's head is sorted too, as sent and as built by --offline.
        let expected = "GET /get HTTP/1.1\nAccept: */*\nAccept-Encoding: \(CurlRuntime.acceptEncodingValue)\nHost: 127.0.0.1:\(server.port)\nUser-Agent: af/0.1.0\nXXX: 1\nzzz: 2\nZZZ: 3\n"
        for offline in [true, false] {
            let head = InProcessAF.run((offline ? ["--offline"] : []) + ["-p", "H", "--format-options=headers.sort:true", server.url("/get"), "zzz:2", "XXX:1", "ZZZ:3"])
            #expect(head.out == expected, "\(head.out)")
        }
    }

    @Test func responseMimeFormatsAsThatType() {
        let result = InProcessAF.run(["--pretty=format", "--response-mime=application/json", server.url("/bytes/0?type=text/plain")])
        #expect(result.status == 0)
        let json = InProcessAF.run(["--pretty=format", "--response-mime=application/json", server.url("/text/utf8")])
        #expect(json.out == "héllo wörld ✓\n")
    }

    @Test func httpieStyleNames() {
        for style in ["pie", "pie-dark", "pie-light", "monokai", "solarized", "fruity", "native"] {
            #expect(InProcessAF.run(["--style=\(style)", "--pretty=all", server.url("/json")]).status == 0, "\(style)")
        }
        let list = InProcessAF.run(["--style"])
        #expect(list.status == 64)
        #expect(list.err.contains("choose auto, solarized, monokai, pie, pie-dark, pie-light"))
        let bad = InProcessAF.run(["--style=nope", server.url("/json")])
        #expect(bad.status == 64)
        #expect(bad.err.contains("pie-dark"))
    }

    @Test func debugShowsVersionsSettingsAndLibcurlsTrace() {
        let result = InProcessAF.run(["--debug", "-a", "user:secret", server.url("/get")])
        #expect(result.status == 0)
        #expect(result.err.contains("af: debug: libcurl "))
        #expect(result.err.contains("af: debug: setting auth = (hidden)"))
        #expect(!result.err.contains("secret\""))
        #expect(result.err.contains("> GET /get HTTP/1.1"))
        // The trace of the sent head does not give the password away either, base64-encoded.
        #expect(result.err.contains("> Authorization: Basic (hidden)\n"))
        #expect(!result.err.contains(Data("user:secret".utf8).base64EncodedString()))
        #expect(result.err.contains("< HTTP/1.1 200 OK"))
        // Alone, it reports and succeeds (HTTPie's `http --debug`); a missing URL is still an
        // error otherwise.
        let alone = InProcessAF.run(["--debug"])
        #expect(alone.status == 0 && alone.out.isEmpty)
        #expect(alone.err.contains("af: debug: libcurl ") && !alone.err.contains("error"))
        #expect(InProcessAF.run(["-v"]).status == 64)
    }

    /// `--debug` writes a bug report, and reports get pasted: credentials in it are named but
    /// their values hidden — header items, the heads libcurl traces (sent and received), the
    /// headers `--secret-header` names, and passwords in URLs and proxies. Before, only `-a`'s
    /// value was hidden, in the argument list, and the trace showed it base64-encoded.
    @Test func debugHidesTheValuesOfCredentials() throws {
        server.route("/login") { _, _ in .response(status: 200, headers: [("Set-Cookie", "sid=s3rv3r; Path=/; HttpOnly")], body: Array("{}".utf8)) }
        let url = server.url("/login").replacingOccurrences(of: "http://", with: "http://ada:pw0rd@")
        let result = InProcessAF.run([
            "--debug", "--secret-header=X-Api-Key", "--proxy=https:http://pu:pr0xy@127.0.0.1:9", url,
            "X-Api-Key:k3y", "Cookie:a=c00kie; b=c00kie", "Proxy-Authorization:Basic cHU6cHc=", "X-Other:shown",
        ])
        #expect(result.status == 0, "\(result.err)")
        for secret in ["pw0rd", "pr0xy", "k3y", "c00kie", "cHU6cHc=", "s3rv3r", Data("ada:pw0rd".utf8).base64EncodedString()] {
            #expect(!result.err.contains(secret), "\(secret) in \(result.err)")
        }
        let lines = result.err.split(separator: "\n").map(String.init)
        let arguments = try #require(lines.first { $0.hasPrefix("af: debug: arguments: ") })
        #expect(arguments.hasSuffix(#""--proxy=https:http://pu:(hidden)@127.0.0.1:9" "\#(server.url("/login").replacingOccurrences(of: "http://", with: "http://ada:(hidden)@"))" "X-Api-Key:(hidden)" "Cookie:a=(hidden); b=(hidden)" "Proxy-Authorization:Basic (hidden)" "X-Other:shown""#), "\(arguments)")
        #expect(lines.contains(#"af: debug: setting proxies = ["https:http://pu:(hidden)@127.0.0.1:9"]"#))
        for line in ["> Authorization: Basic (hidden)", "> X-Api-Key: (hidden)", "> Cookie: a=(hidden); b=(hidden)", "> Proxy-Authorization: Basic (hidden)",
                     "> X-Other: shown", "< Set-Cookie: sid=(hidden); Path=/; HttpOnly", "* Added cookie sid=\"(hidden)\" for domain 127.0.0.1, path /, expire 0"] {
            #expect(lines.contains(line), "\(line)")
        }
        // What was asked for by name still shows the head as sent.
        let verbose = InProcessAF.run(["-p", "H", server.url("/login"), "Cookie:a=c00kie"])
        #expect(verbose.out.contains("Cookie: a=c00kie"))
    }

    /// `-aUSER:PASS` and `-vaUSER:PASS` (a value in the same word as its letter, as the parser
    /// takes it) were printed as typed; a word after an option's value was taken for `-a`'s.
    @Test func debugHidesAnAuthValueHoweverItIsWritten() {
        // (`-o=-a`: an option's word as the next argument is no value, so a file of that name
        // is written after `=`.)
        let arguments = ["-aada:pw", "-vaada:pw", "-va", "ada:pw", "--auth=ada:pw", "--auth", "ada:pw", "-pH", "-a", "x:y", "-o=-a", "--cert-key-pass", "kp", "--", "-a"]
        #expect(DebugReport.redacted(arguments) == ["-a(hidden)", "-va(hidden)", "-va", "(hidden)", "--auth=(hidden)", "--auth", "(hidden)", "-pH", "-a", "(hidden)", "-o=-a", "--cert-key-pass", "(hidden)", "--", "-a"])
    }

    @Test func urlPasswordsAreHiddenWhereverTheyStand() {
        let redaction = CredentialRedaction(secretHeaders: [])
        #expect(redaction.withoutURLPasswords("x://") == "x://")
        #expect(redaction.withoutURLPasswords("://a:b@") == "://a:(hidden)@")
        #expect(redaction.withoutURLPasswords("http://a@h/ http://u:p@h:1/x?y=http://v:q@z") == "http://a@h/ http://u:(hidden)@h:1/x?y=http://v:(hidden)@z")
        #expect(redaction.withoutURLPasswords("http://u:p:q@h@i/") == "http://u:(hidden)@i/")
        // A password may hold a comma or a bracket (it was shown in full: the authority was cut there).
        #expect(redaction.withoutURLPasswords("all:http://u:p,w@h:1") == "all:http://u:(hidden)@h:1")
        #expect(redaction.withoutURLPasswords("[\"all:http://u:p]w@h\", \"https:http://v:q@k\"]") == "[\"all:http://u:(hidden)@h\", \"https:http://v:(hidden)@k\"]")
        #expect(redaction.withoutURLPasswords("[\"all:http://u:é@[::1]:8\"]") == "[\"all:http://u:(hidden)@[::1]:8\"]")
        // However many slashes follow the scheme, as the URL parser reads it (it was shown
        // in full with one slash, a backslash, or none after http).
        #expect(redaction.withoutURLPasswords("\"http:/u:p@h\" \"https:\\\\v:q@k\" HTTP:w:r@j") == "\"http:/u:(hidden)@h\" \"https:\\\\v:(hidden)@k\" HTTP:w:(hidden)@j")
        #expect(redaction.withoutURLPasswords("Host: h:1\nsee: u:p@h") == "Host: h:1\nsee: u:p@h")
        #expect(redaction.note("Replaced cookie a=\"\" for domain x") == "Replaced cookie a=\"(hidden)\" for domain x")
        #expect(redaction.note("Added cookie \"") == "Added cookie \"")
    }

    @Test(arguments: [")]}',\n", ")]}'\n", "while(1);", "for(;;);", "junk before "])
    func antiHijackingPrefixesAreShownAndJSONFormatted(prefix: String) {
        server.route("/prefixed") { _, _ in .json(prefix + #"{"a":[1,2]}"#) }
        let result = InProcessAF.run(["--pretty=format", server.url("/prefixed")])
        #expect(result.out.hasPrefix(prefix.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(result.out.hasSuffix("{\n    \"a\": [\n        1,\n        2\n    ]\n}\n"), "\(result.out)")
    }

    /// With --stream, a prefix that the first chunk cuts short (`)]}` then `',`) is still one:
    /// the JSON after it was shown unformatted. A first chunk that could start a prefix but
    /// does not (`f` of `false`) is formatted as ever.
    @Test(arguments: [(["a\r\n)]}',\n{\"a\"\r\n", "4\r\n:[1]\r\n", "2\r\n}\n\r\n"], ")]}',\n{\n    \"a\": [\n        1\n    ]\n}\n"),
                      (["3\r\n)]}\r\n", "b\r\n',\n{\"a\":1}\r\n"], ")]}',\n{\n    \"a\": 1\n}\n"),
                      (["6\r\nwhile(\r\n", "3\r\n1);\r\n", "2\r\n[]\r\n"], "while(1);[]\n"),
                      (["1\r\nf\r\n", "5\r\nalse\n\r\n"], "false\n"),
                      (["3\r\n)]}\r\n"], ")]}")])
    func aStreamedPrefixCutByItsFirstChunkIsStillAPrefix(chunks: [String], shown: String) {
        server.route("/cut-prefix") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
                for chunk in chunks {
                    connection.write(chunk)
                    Thread.sleep(forTimeInterval: 0.1)
                }
                connection.write("0\r\n\r\n")
                connection.close()
            }
        }
        let result = InProcessAF.run(["--stream", "--pretty=format", server.url("/cut-prefix")])
        #expect(result.status == 0)
        #expect(result.out == shown, "\(result.out.debugDescription)")
    }

    @Test(arguments: [
        ("windows-1250", [0x50, 0xF8, 0xED, 0x6C, 0x69, 0x9A] as [UInt8], "Příliš"),
        ("koi8-r", [0xF0, 0xD2, 0xC9, 0xD7, 0xC5, 0xD4], "Привет"),
        ("shift_jis", [0x82, 0xB1, 0x82, 0xF1, 0x82, 0xC9, 0x82, 0xBF, 0x82, 0xCD], "こんにちは"),
        ("big5", [0xA4, 0xA4, 0xA4, 0xE5], "中文"),
        // Latin-1 and ASCII labels read as windows-1252, as browsers read them: curly quotes
        // and €, not C1 controls (shown escaped, as \x93).
        ("iso-8859-1", [0x93, 0x61, 0x94, 0x20, 0x80, 0xE9], "\u{201C}a\u{201D} \u{20AC}\u{E9}"),
        ("us-ascii", [0x96, 0x61], "\u{2013}a"),
        // Text whose charset writes NUL bytes is text, not binary (it was shown as a
        // "binary data not shown" note).
        ("utf-16", [0xFF, 0xFE, 0x68, 0x00, 0xE9, 0x00, 0x0A, 0x00], "hé\n"),
        ("utf-16be", [0x00, 0x68, 0x00, 0xE9], "hé"),
        ("UTF-32LE", [0x68, 0x00, 0x00, 0x00, 0xE9, 0x00, 0x00, 0x00], "hé"),
        // Python's spellings, which a Python server (and HTTPie) takes: iconv spells them
        // with a hyphen or without the underscore (they were sniffed as windows-1252).
        ("euc_jp", [0xC6, 0xFC, 0xCB, 0xDC], "日本"),
        ("iso2022_jp", [0x1B, 0x24, 0x42, 0x24, 0x2B, 0x24, 0x4A, 0x1B, 0x28, 0x42], "かな"),
        ("latin_1", [0x63, 0x61, 0x66, 0xE9], "café"),
        ("cp1251", [0xCF, 0xF0, 0xE8], "При"),
    ])
    func charsetsAreDecodedForDisplay(charset: String, bytes: [UInt8], text: String) {
        server.route("/charset") { _, _ in .response(status: 200, headers: [("Content-Type", "text/plain; charset=\(charset)")], body: bytes) }
        let shown = InProcessAF.run(["--pretty=all", server.url("/charset")])
        #expect(shown.out == text, "\(charset)")
        let exact = InProcessAF.run([server.url("/charset")])
        #expect(exact.stdout == bytes, "piped output stays the server's bytes")
        server.route("/undeclared") { _, _ in .response(status: 200, headers: [("Content-Type", "text/plain")], body: bytes) }
        let overridden = InProcessAF.run(["--pretty=all", "--response-charset=\(charset.uppercased())", server.url("/undeclared")])
        #expect(overridden.out == text)
    }

    @Test func undeclaredCharsetsAreUTF8OrWindows1252() {
        server.route("/latin") { _, _ in .response(status: 200, headers: [("Content-Type", "text/plain")], body: [0x63, 0x61, 0x66, 0xE9, 0x20, 0x80]) }
        #expect(InProcessAF.run(["--pretty=all", server.url("/latin")]).out == "café €")
        server.route("/utf8") { _, _ in .response(status: 200, headers: [("Content-Type", "text/plain")], body: Array("café €".utf8)) }
        #expect(InProcessAF.run(["--pretty=all", server.url("/utf8")]).out == "café €")
        let unknown = InProcessAF.run(["--response-charset=nonsense", server.url("/utf8")])
        #expect(unknown.status == 64)
        #expect(unknown.err.contains("unknown charset 'nonsense'"))
        // A label with no letter or digit names no charset: glibc's iconv drops such
        // characters from a name and took what was left, "", as the locale's charset (and
        // Python's spellings, tried without `_`, made "" of underscores alone).
        for label in ["___", "_", "!!!", "?", "+", "*", "@@"] {
            let bare = InProcessAF.run(["--response-charset=\(label)", server.url("/utf8")])
            #expect(bare.status == 64, "\(label)")
            #expect(bare.err.contains("unknown charset '\(label)'"), "\(bare.err)")
        }
        // From a server, such a label is unknown too, and the body's bytes decide.
        server.route("/bang") { _, _ in .response(status: 200, headers: [("Content-Type", "text/plain; charset=!!!")], body: [0x63, 0x61, 0x66, 0xE9, 0x20, 0x80]) }
        #expect(InProcessAF.run(["--pretty=all", server.url("/bang")]).out == "café €")
    }

    /// The first bytes that are not ASCII decide an undeclared charset, not the first chunk:
    /// a windows-1252 body whose first chunk was ASCII showed every later é as U+FFFD, and so
    /// did one whose only accent was its last byte (taken for a cut UTF-8 sequence). A
    /// charset iconv does not know is sniffed the same way.
    @Test(arguments: ["text/plain", "text/plain; charset=x-nonsense"])
    func aLateOrLastAccentDecidesTheCharset(type: String) {
        let ascii = [UInt8](repeating: UInt8(ascii: "a"), count: 600_000) + [10]
        let bodies: [(name: String, bytes: [UInt8], shown: String)] = [
            ("last", Array("Caf".utf8) + [0xE9], "Caf\u{E9}"),
            ("late", ascii + Array("caf".utf8) + [0xE9, 0x20, 0x80, 0x0A], String(repeating: "a", count: 600_000) + "\ncaf\u{E9} \u{20AC}\n"),
            ("late-utf8", ascii + Array("caf\u{E9} \u{20AC}\n".utf8), String(repeating: "a", count: 600_000) + "\ncaf\u{E9} \u{20AC}\n"),
        ]
        for body in bodies {
            server.route("/\(body.name)") { _, _ in .response(status: 200, headers: [("Content-Type", type)], body: body.bytes) }
            let shown = InProcessAF.run(["--pretty=all", server.url("/\(body.name)")])
            #expect(shown.status == 0)
            #expect(shown.out == body.shown, "\(type) \(body.name): \(shown.out.suffix(20).debugDescription)")
            #expect(InProcessAF.run([server.url("/\(body.name)")]).stdout == body.bytes, "piped output stays the server's bytes")
        }
    }

    /// Without a charset in `Content-Type`, what the body says of itself decides, as in
    /// browsers and HTTPie: an XML declaration, an HTML `<meta>` (either form), a byte order
    /// mark, UTF-16 XML without one. All of these were windows-1252 mojibake.
    static func declared(_ type: String, _ start: String, _ rest: [UInt8], _ text: String) -> (String, [UInt8], String) {
        (type, Array(start.utf8) + rest, text)
    }

    static let selfDeclared: [(String, [UInt8], String)] = [
        declared("text/xml", #"<?xml version="1.0" encoding="KOI8-R"?><c>"#, [0xF0, 0xD2, 0xC9, 0xD7, 0xC5, 0xD4], "Привет"),
        declared("text/plain", #"<?xml version='1.0' encoding = 'windows-1250' ?>"#, [0x50, 0xF8, 0xED, 0x6C, 0x69, 0x9A], "Příliš"),
        declared("text/html", #"<html><head><META CHARSET="shift_jis"></head>"#, [0x82, 0xB1, 0x82, 0xF1], "こん"),
        declared("text/html", #"<meta name="x"><meta http-equiv="Content-Type" content="text/html; charset=big5">"#, [0xA4, 0xA4, 0xA4, 0xE5], "中文"),
        declared("text/plain", "", [0xFF, 0xFE, 0x68, 0x00, 0xE9, 0x00], "hé"),
        declared("text/plain", "", [0xFE, 0xFF, 0x00, 0x68, 0x00, 0xE9], "hé"),
        declared("text/xml", "", #"<?xml version="1.0"?><c>é"#.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }, "é"),
        // A declaration that UTF-8 contradicts is not believed: the body is UTF-8.
        declared("text/html", #"<meta charset="iso-8859-1">café"#, [], "café"),
        // A Latin-1 declaration means windows-1252 here too, as in a Content-Type.
        declared("text/html", #"<meta charset="ISO-8859-1">"#, [0x93, 0x61, 0x94], "\u{201C}a\u{201D}"),
        // An unknown declared charset falls back to windows-1252.
        declared("text/html", #"<meta charset="x-nonsense">caf"#, [0xE9, 0x21], "café!"),
    ]

    @Test(arguments: selfDeclared)
    func bodiesNameTheirOwnCharset(type: String, bytes: [UInt8], text: String) {
        server.route("/self-declared") { _, _ in .response(status: 200, headers: [("Content-Type", type)], body: bytes) }
        let shown = InProcessAF.run(["--pretty=all", "--response-mime=text/plain", server.url("/self-declared")])
        #expect(shown.out.hasSuffix(text), "\(shown.out)")
    }

    /// JSON declared in another charset is formatted from its text: a `charset=iso-8859-1`
    /// body put its 0xE9 byte out as it came (not UTF-8), and UTF-16 JSON was not formatted.
    /// Bytes that are valid UTF-8 stay UTF-8 whatever the label says.
    @Test(arguments: [
        ("iso-8859-1", Array(#"{"name":"caf"#.utf8) + [0xE9] + Array(#"","n":1}"#.utf8)),
        ("utf-16", [0xFF, 0xFE] + #"{"name":"café","n":1}"#.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }),
        ("iso-8859-1", Array(#"{"name":"café","n":1}"#.utf8)),
    ] as [(String, [UInt8])])
    func jsonInAnotherCharsetIsFormattedFromItsText(charset: String, body: [UInt8]) {
        server.route("/json-charset") { _, _ in .response(status: 200, headers: [("Content-Type", "application/json; charset=\(charset)")], body: body) }
        let result = InProcessAF.run(["--pretty=format", server.url("/json-charset")])
        #expect(result.status == 0)
        #expect(result.out == "{\n    \"name\": \"caf\u{E9}\",\n    \"n\": 1\n}\n", "\(charset): \(result.out)")
        #expect(InProcessAF.run([server.url("/json-charset")]).stdout == body, "piped without formatting: the exact bytes")
    }

    /// A body labelled JSON that is not JSON, shown in colour (escaped for a terminal), is
    /// shown whole, as text: a body under four bytes (`nul`, `[1`) came out as nothing, the
    /// text decoder holding them for a charset it never settled; and one in a declared
    /// charset, already turned into UTF-8 for the formatter, was decoded by that charset again
    /// (UTF-16 `{` came out as U+FFFD).
    @Test(arguments: [
        ("", Array("nul".utf8), "nul"),
        ("", Array("[1".utf8), "[1"),
        ("; charset=utf-16", [0xFF, 0xFE, 0x7B, 0x00], "{"),
        ("; charset=iso-8859-1", Array(#"{"a":"caf"#.utf8) + [0xE9], "{\"a\":\"caf\u{E9}"),
    ] as [(String, [UInt8], String)])
    func aJSONBodyThatIsNotJSONIsShownWhole(charset: String, body: [UInt8], shown: String) {
        server.route("/not-json") { _, _ in .response(status: 200, headers: [("Content-Type", "application/json\(charset)")], body: body) }
        let result = InProcessAF.run(["--pretty=all", "-b", server.url("/not-json")])
        #expect(result.status == 0)
        #expect(result.out == shown, "\(charset): \(result.out.debugDescription)")
    }

    /// The first chunks of a Latin-1 JSON body all ASCII: the first chunk that is not decides
    /// the charset (the first chunk did, and the é went out as its byte).
    @Test func jsonInAnotherCharsetIsDecidedByItsFirstBytesBeyondASCII() {
        let body = Array("{".utf8) + [UInt8](repeating: 32, count: 600_000) + Array(#""name":"caf"#.utf8) + [0xE9] + Array(#"","n":1}"#.utf8)
        server.route("/late-latin") { _, _ in .response(status: 200, headers: [("Content-Type", "application/json; charset=iso-8859-1")], body: body) }
        let result = InProcessAF.run(["--pretty=format", server.url("/late-latin")])
        #expect(result.status == 0)
        #expect(result.out == "{\n    \"name\": \"caf\u{E9}\",\n    \"n\": 1\n}\n", "\(result.out.suffix(40).debugDescription)")
    }

    /// A JSON body held for validation has its declared charset decided on all of it: a first
    /// chunk beyond ASCII that was UTF-8 decided for the rest, whose Latin-1 byte then showed
    /// as U+FFFD; and a chunk ending in 0xFF (never UTF-8) was taken for one ending in a cut
    /// UTF-8 sequence.
    static let latinChunks: [(chunks: [[UInt8]], shown: String)] = [
        ([Array("{\"a\":\"\u{E9}".utf8), Array("\",\"b\":\"".utf8) + [0xE9] + Array("\"}".utf8)], "{\n    \"a\": \"\u{C3}\u{A9}\",\n    \"b\": \"\u{E9}\"\n}\n"),
        ([Array("{\"a\":\"".utf8) + [0xFF], Array("\"}".utf8)], "{\n    \"a\": \"\u{FF}\"\n}\n"),
    ]

    @Test(arguments: 0..<2)
    func jsonInAnotherCharsetIsDecidedOnAllOfIt(index: Int) {
        let (chunks, shown) = Self.latinChunks[index]
        server.route("/latin-chunks") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=windows-1252\r\nTransfer-Encoding: chunked\r\n\r\n")
                for chunk in chunks {
                    connection.write(Array(String(chunk.count, radix: 16).utf8) + [13, 10] + chunk + [13, 10])
                    Thread.sleep(forTimeInterval: 0.1)
                }
                connection.write("0\r\n\r\n")
                connection.close()
            }
        }
        let result = InProcessAF.run(["--pretty=format", server.url("/latin-chunks")])
        #expect(result.status == 0)
        #expect(result.out == shown, "\(result.out.debugDescription)")
    }

    /// JSON in UTF-16 or UTF-32 that says so with a byte order mark and no charset (RFC 4627
    /// allowed them; HTTPie decodes by the mark) is formatted from its text: it was shown as
    /// unformatted text on a terminal, and into a pipe as it came even with --pretty=format.
    @Test func jsonWithAByteOrderMarkIsFormattedFromItsText() {
        let text = "{\"a\": [\"é\", 1]}"
        let bodies: [(String, [UInt8])] = [
            ("utf-16le", [0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }),
            ("utf-16be", [0xFE, 0xFF] + text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }),
            ("utf-32le", [0xFF, 0xFE, 0, 0] + text.unicodeScalars.flatMap { [UInt8($0.value & 0xFF), UInt8($0.value >> 8), 0, 0] }),
        ]
        for (name, body) in bodies {
            server.route("/bom-\(name)") { _, _ in .response(status: 200, headers: [("Content-Type", "application/json")], body: body) }
            let result = InProcessAF.run(["--pretty=format", server.url("/bom-\(name)")])
            #expect(result.status == 0)
            #expect(result.out == "{\n    \"a\": [\n        \"é\",\n        1\n    ]\n}\n", "\(name): \(result.out.debugDescription)")
            #expect(InProcessAF.run([server.url("/bom-\(name)")]).stdout == body, "\(name): piped without formatting, exact")
            // The mark cut into one-byte chunks decides as well as whole.
            server.route("/bom-chunks-\(name)") { _, _ in
                .custom { connection in
                    connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
                    for chunk in body.prefix(4).map({ [$0] }) + [Array(body.dropFirst(4))] {
                        connection.write(Array(String(chunk.count, radix: 16).utf8) + [13, 10] + chunk + [13, 10])
                        Thread.sleep(forTimeInterval: 0.05)
                    }
                    connection.write("0\r\n\r\n")
                    connection.close()
                }
            }
            let chunked = InProcessAF.run(["--pretty=format", server.url("/bom-chunks-\(name)")])
            #expect(chunked.out == result.out, "\(name) in chunks: \(chunked.out.debugDescription)")
        }
    }

    /// JSON is formatted under every type HTTPie formats it under: any type naming JSON, and
    /// text or JavaScript types whose body starts like JSON (PHP sends JSON as text/html);
    /// these were shown as they came, or coloured as HTML.
    @Test(arguments: ["application/x-json", "text/x-json", "application/json-patch", "application/javascript", "text/html", "text/csv"])
    func jsonUnderOtherTypesIsFormatted(type: String) {
        server.route("/typed-json") { _, _ in .response(status: 200, headers: [("Content-Type", type)], body: Array(#"{"a":[1]}"#.utf8)) }
        let result = InProcessAF.run(["--pretty=format", server.url("/typed-json")])
        #expect(result.out == "{\n    \"a\": [\n        1\n    ]\n}\n", "\(type): \(result.out)")
        server.route("/typed-html") { _, _ in .response(status: 200, headers: [("Content-Type", "text/html")], body: Array("<p>[not json]</p>".utf8)) }
        #expect(InProcessAF.run(["--pretty=format", server.url("/typed-html")]).out == "<p>[not json]</p>")
    }

    /// Whether a text body is JSON is decided by its first byte that is not blank, whatever
    /// chunk it comes in: a chunked body whose first chunk was a lone line break went out
    /// unformatted. A body of nothing but blanks comes out as it was.
    @Test func jsonAfterABlankFirstChunkIsFormatted() {
        server.route("/late-json") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n\n \r\n")
                Thread.sleep(forTimeInterval: 0.2)
                connection.write("9\r\n{\"a\":[1]}\r\n0\r\n\r\n")
                connection.close()
            }
        }
        let result = InProcessAF.run(["--pretty=format", server.url("/late-json")])
        #expect(result.status == 0)
        #expect(result.out == "{\n    \"a\": [\n        1\n    ]\n}\n", "\(result.out.debugDescription)")
        server.route("/blank") { _, _ in .response(status: 200, headers: [("Content-Type", "text/plain")], body: Array(" \n\n".utf8)) }
        #expect(InProcessAF.run(["--pretty=format", server.url("/blank")]).out == " \n\n")
        #expect(InProcessAF.run(["--pretty=all", server.url("/blank")]).out == " \n\n")
    }

    /// `--offline` prints a Host item where libcurl sends it, first; it came after the
    /// default headers, so the printed head was not the one sent.
    @Test func offlinePrintsAHostItemWhereItIsSent() throws {
        let offline = InProcessAF.run(["--offline", server.url("/get"), "X-A:1", "Host:example.com"])
        #expect(offline.out.hasPrefix("GET /get HTTP/1.1\nHost: example.com\nUser-Agent: "), "\(offline.out)")
        #expect(InProcessAF.run([server.url("/get"), "X-A:1", "Host:example.com"]).status == 0)
        let sent = try last("/get")
        #expect(sent.headers.first?.name == "Host" && sent.headers.first?.value == "example.com", "\(sent.rawHead)")
    }

    @Test func requestBodiesShowInTheirCharset() throws {
        let path = directory + "/latin2.txt"
        _ = FileManager.default.createFile(atPath: path, contents: Data([0x50, 0xF8, 0xED, 0x6C, 0x69, 0x9A]))
        let result = InProcessAF.run(["--offline", "-p", "B", "--pretty=all", "put", server.url("/put"), "Content-Type:text/plain; charset=windows-1250", "@\(path)"])
        #expect(result.out == "Příliš\n")
    }

    /// A cookie set in bytes that are not UTF-8 goes back to the server as those bytes, from
    /// the session file too: it went back as U+FFFD's bytes, which is another cookie.
    @Test func sessionCookiesKeepBytesThatAreNotUTF8() throws {
        server.route("/latin-cookie") { _, _ in
            .raw(Array("HTTP/1.1 200 OK\r\nSet-Cookie: k=caf".utf8) + [0xE9] + Array("; Path=/\r\nContent-Length: 0\r\n\r\n".utf8), close: true)
        }
        let session = directory + "/latin-session.json"
        #expect(InProcessAF.run(["--session=\(session)", server.url("/latin-cookie")]).status == 0)
        let stored = try String(contentsOfFile: session, encoding: .utf8)
        #expect(stored.contains(#""value": "caf\#u{E9}""#) && stored.contains(#""latin1": true"#), "\(stored)")
        #expect(InProcessAF.run(["--session=\(session)", server.url("/get")]).status == 0)
        let sent = try #require(server.requests(to: "/get").last).rawHeadBytes
        let cookie = Array("Cookie: k=caf".utf8) + [0xE9, 13, 10]
        #expect(sent.indices.contains { sent[$0...].starts(with: cookie) }, "\(String(decoding: sent, as: UTF8.self))")
    }

    /// A `~` the shell left alone because it stands inside a word (an option's `=VALUE`, an
    /// item's file, a value in the config file or on a line of a batch) is the home directory,
    /// as HTTPie has it for its items: `--session=~/s.json` made a directory called `~` in the
    /// working directory, and `a=@~/note.txt` was "no such file".
    @Test func aTildeInsideAWordIsTheHomeDirectory() throws {
        let home = try TemporaryDirectory.make(prefix: "af-home")
        _ = try TemporaryDirectory.write("hello", named: "note.txt", in: home)
        _ = try TemporaryDirectory.write(#"{"b": 1}"#, named: "body.json", in: home)
        let sent = InProcessAF.run(["--session=~/s.json", "post", server.url("/echo"), "a=@~/note.txt", "b:=@~/body.json"], environment: ["HOME": home])
        #expect(sent.status == 0, "\(sent.err)")
        #expect(String(decoding: try last("/echo").body, as: UTF8.self) == #"{"a": "hello", "b": {"b": 1}}"#)
        #expect(FileManager.default.fileExists(atPath: home + "/s.json"))
        let config = try TemporaryDirectory.make(prefix: "af-home-config")
        try TemporaryDirectory.writeConfig(defaultOptions: ["--output-dir=~/downloads", "--create-dirs"], in: config)
        let lines = try TemporaryDirectory.write("-d \(server.url("/json")) --session=~/t.json\n", named: "lines.txt", in: home)
        let batch = InProcessAF.run(["batch", lines], environment: ["HOME": home, "AF_CONFIG_DIR": config])
        #expect(batch.status == 0, "\(batch.err)")
        #expect(FileManager.default.fileExists(atPath: home + "/downloads/json"))
        #expect(FileManager.default.fileExists(atPath: home + "/t.json"))
        let missing = InProcessAF.run(["--offline", server.url("/post"), "@~/none.json"], environment: ["HOME": home])
        #expect(missing.err == "af: error: cannot read '\(home)/none.json' (from '@~/none.json'): no such file or directory; check the path and its permissions\n")
    }

    /// A batch line with `$TOKEN` sent the five characters without a word: a shell would
    /// have put the variable's value there. The first such line is warned of (once a batch,
    /// in a file or on standard input); what is sent is unchanged.
    @Test func aVariableOnABatchLineIsWarnedOfOnce() throws {
        let text = "\(server.url("/echo")) \"Authorization:Bearer $TOKEN\"\n\(server.url("/echo")) a==$HOME\n\(server.url("/echo")) 'b==$HOME'\n"
        let path = try TemporaryDirectory.write(text, named: "variables.txt", in: directory)
        let warning = "af: line 1: warning: '$TOKEN' is sent as written: af batch runs each line without a shell, which would have expanded it; "
            + "write the value into the file (envsubst makes such a file from a template), or put it in single quotes to mean it as written\n"
        for run in [InProcessAF.run(["batch", "-b", path], environment: ["TOKEN": "x"]), InProcessAF.run(["batch", "-b", "-"], stdin: .bytes(Array(text.utf8)))] {
            #expect(run.status == 0)
            #expect(run.err == warning)
        }
        #expect(server.requests(to: "/echo").compactMap { $0.header("Authorization") } == ["Bearer $TOKEN", "Bearer $TOKEN"])
        #expect(server.requests(to: "/echo").map(\.target).sorted() == ["/echo", "/echo", "/echo?a=%24HOME", "/echo?a=%24HOME", "/echo?b=%24HOME", "/echo?b=%24HOME"])
        let quiet = try TemporaryDirectory.write("\(server.url("/echo")) 'a==$HOME'\n", named: "quoted.txt", in: directory)
        #expect(InProcessAF.run(["batch", "-b", quiet]).err == "")
    }

    @Test func sessionsKeepCookieHeadersRepeatsAndReadOnlyNames() throws {
        let session = directory + "/session.json"
        let first = InProcessAF.run(["--session=\(session)", server.url("/get"), "Foo:bar", "Foo:baz", "Cookie:a=1; b=2"])
        #expect(first.status == 0)
        let stored = try String(contentsOfFile: session, encoding: .utf8)
        #expect(stored.contains(#"[["Foo", "bar"], ["Foo", "baz"]]"#))
        #expect(stored.contains(#""name": "a", "value": "1""#))
        let replay = InProcessAF.run(["--session-read-only=\(session)", server.url("/get")])
        #expect(replay.status == 0)
        let request = try last("/get")
        #expect(request.headers.filter { $0.name == "Foo" }.map(\.value) == ["bar", "baz"])
        #expect(request.header("Cookie").map { Set($0.components(separatedBy: "; ")) } == ["a=1", "b=2"])
        let after = InProcessAF.run(["--session-read-only=\(session)", server.url("/get"), "Foo:changed"])
        #expect(after.status == 0)
        #expect(try String(contentsOfFile: session, encoding: .utf8) == stored, "read-only sessions are never written")
        // Two names: which session was used (and whether it was written) depended on the
        // options' order.
        let count = server.requests.count
        for arguments in [["--session=other", "--session-read-only=\(session)"], ["--session-read-only=\(session)", "--session=other"]] {
            let both = InProcessAF.run(arguments + [server.url("/get")])
            #expect(both.status == 64)
            #expect(both.err.contains("name two sessions; give one"), "\(both.err)")
        }
        // No name at all: the run used no session, which the user thought it read.
        for arguments in [["--session-read-only"], ["--session=\(session)", "--session-read-only", "--no-session"]] {
            let none = InProcessAF.run(arguments + [server.url("/get")])
            #expect(none.status == 64)
            #expect(none.err == "af: error: --session-read-only names no session: give --session-read-only=NAME (or PATH), or add --session=NAME\n")
        }
        #expect(server.requests.count == count)
        #expect(InProcessAF.run(["--session=\(session)", "--session-read-only=\(session)", server.url("/get")]).status == 0)
        #expect(InProcessAF.run(["--session-read-only", "--session=\(session)", server.url("/get")]).status == 0)
    }

    @Test(arguments: [
        (["foo[baz]:=[1,2,3]", "foo[baz][]:=4"], #"{"foo": {"baz": [1, 2, 3, 4]}}"#),
        (["=empty"], #"{"": "empty"}"#),
        ([":=[1,2,3]"], #"{"": [1,2,3]}"#),
        (["a[\\1]:=1"], #"{"a": {"1": 1}}"#),
        // A backslash before a number makes the whole segment a key; anywhere else it stays.
        ([#"a[\-2]:=1"#, #"\7=x"#, #"a[\\\3]=y"#, #"b[n \4]=z"#, #"c\5[q]=w"#],
         #"{"a": {"-2": 1, "\\\\3": "y"}, "7": "x", "b": {"n \\4": "z"}, "c\\5": {"q": "w"}}"#),
        (["a:={\"x\": 1.50}", "a[y]=2"], #"{"a": {"x": 1.50, "y": "2"}}"#),
        (["a[0]:=[1]", "a[0][]:=2"], #"{"a": [[1, 2]]}"#),
    ])
    func nestedJSONFollowsHTTPie(items: [String], body: String) {
        let result = InProcessAF.run(["--offline", "-p", "B", server.url("/post")] + items)
        #expect(result.status == 0, "\(result.err)")
        #expect(result.out == body)
    }

    @Test func negativeIndexesAreRefusedWithTheirPosition() {
        let result = InProcessAF.run(["--offline", server.url("/post"), "foo[-10]=x"])
        #expect(result.status == 64)
        #expect(result.err.contains("negative index [-10] at position"))
    }

    /// An index too large for an array is refused however many digits it has (one past
    /// Int's range was sent as an object key), and escaping it makes it a key.
    @Test(arguments: ["100000", "99999999999999999999999"])
    func indexesPastTheLimitAreRefusedAtAnyLength(index: String) {
        let result = InProcessAF.run(["--offline", server.url("/post"), "a[\(index)]=x"])
        #expect(result.status == 64)
        #expect(result.err == "af: error: request item 'a[\(index)]=x': array index \(index) is too large (at most 99999); write [\\\(index)] for a key\n")
        let key = InProcessAF.run(["--offline", "-p", "B", server.url("/post"), "a[\\\(index)]=x"])
        #expect(key.out == #"{"a": {"\#(index)": "x"}}"#, "\(key.err)")
    }

    // MARK: XML and HTML

    @Test func xmlIsIndentedWithEveryTokenKeptAndNoEntityExpanded() {
        let result = InProcessAF.run(["--pretty=format", server.url("/xml")])
        #expect(result.status == 0)
        #expect(result.out == """
        <?xml version="1.0"?>
        <!DOCTYPE r [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>
        <root a="1">
          <!-- note -->
          <item id='x'>text &b; here</item>
          <empty/>
          <nested>
            <deep>1</deep>
          </nested>
          <![CDATA[<raw>]]>
        </root>

        """)
        let four = InProcessAF.run(["--pretty=format", "--format-options=xml.indent:4", server.url("/xml?type=text/xml")])
        #expect(four.out.contains("\n    <!-- note -->\n"))
        let off = InProcessAF.run(["--pretty=format", "--format-options=xml.format:false", server.url("/xml")])
        #expect(off.out == BuiltinRoutes.sampleXML)
        #expect(InProcessAF.run([server.url("/xml")]).out == BuiltinRoutes.sampleXML, "piped output without --pretty stays exact")
    }

    @Test func malformedXMLIsShownAsItCame() {
        server.route("/bad-xml") { _, _ in .text("<a><b>unclosed</a>", type: "text/xml") }
        #expect(InProcessAF.run(["--pretty=format", server.url("/bad-xml")]).out == "<a><b>unclosed</a>")
    }

    /// Formatted markup reaches the output in blocks as it is written (it was gathered whole,
    /// twice over): a document of many blocks comes out whole and in order, and one that
    /// turns out malformed only at its very end is shown as it came, nothing of it indented.
    @Test func largeMarkupIsWrittenWholeOrNotAtAll() {
        let records = (0..<4000).map { "<r id=\"\($0)\"><n>item \($0)</n><e/></r>" }
        server.route("/large.xml") { _, _ in .text("<all>" + records.joined() + "</all>", type: "application/xml") }
        let indented = records.indices.map { "  <r id=\"\($0)\">\n    <n>item \($0)</n>\n    <e/>\n  </r>\n" }.joined()
        let result = InProcessAF.run(["--pretty=format", server.url("/large.xml")])
        #expect(result.out.utf8.count > 200_000)
        #expect(result.out == "<all>\n" + indented + "</all>\n")
        let unclosed = "<all>" + records.joined() + "</al"
        server.route("/unclosed.xml") { _, _ in .text(unclosed, type: "application/xml") }
        #expect(InProcessAF.run(["--pretty=format", server.url("/unclosed.xml")]).out == unclosed)
        let coloured = InProcessAF.run(["--pretty=all", server.url("/large.xml")])
        #expect(String(decoding: FuzzTargets.withoutColours(coloured.stdout), as: UTF8.self) == result.out)
    }

    @Test func htmlIsColouredNotReformatted() {
        let result = InProcessAF.run(["--pretty=all", server.url("/html")])
        #expect(result.out.contains("\u{1b}[34m<title>\u{1b}[0maf"))
        let plain = result.out.replacingOccurrences(of: "\u{1b}\\[[0-9;]*m", with: "", options: .regularExpression)
        #expect(plain == "<!doctype html><title>af</title><p>hello</p>\n")
    }
}
