@testable import AFCommandLine
@testable import AFEngine
import AFInProcess
import AFTestSupport
import Foundation
import Testing

/// A command copied from a web page or a document arrives with its `--` made an en or em
/// dash and its quotes made curly: af names the character, says what was meant, and sends
/// nothing (the dash took the URL's place; the quote became part of a host name).
@Suite struct TypographicPunctuationTests {
    @Test(arguments: [
        (["–follow"], "'–follow' has an en dash (U+2013) for '-', as text copied from a document has; did you mean '--follow'?"),
        (["—output=out.json"], "'—output' has an em dash (U+2014) for '-', as text copied from a document has; did you mean '--output'?"),
        (["-–follow"], "'-–follow' has an en dash (U+2013) for '-', as text copied from a document has; did you mean '--follow'?"),
        (["–no-follow"], "'–no-follow' has an en dash (U+2013) for '-', as text copied from a document has; did you mean '--no-follow'?"),
        (["−v"], "'−v' has a minus sign (U+2212) for '-', as text copied from a document has; did you mean '-v'?"),
        (["–vF"], "'–vF' has an en dash (U+2013) for '-', as text copied from a document has; did you mean '-vF'?"),
        // curl's option, as the hint for '--data' says.
        (["–data"], "'–data' has an en dash (U+2013) for '-', as text copied from a document has; af sends a body from data items (name=value, name:=json), @FILE or --raw=TEXT"),
        (["–nonsense"], "'–nonsense' has an en dash (U+2013) for '-', as text copied from a document has; a request item that begins with it goes after '--'"),
        // A credential is never repeated: after '=', or as the value of a cluster's -a.
        (["–auth=bob:secret"], "'–auth' has an en dash (U+2013) for '-', as text copied from a document has; did you mean '--auth'?"),
        (["–abob:secret"], "'–…' has an en dash (U+2013) for '-', as text copied from a document has; a request item that begins with it goes after '--'"),
        (["–vabob"], "'–…' has an en dash (U+2013) for '-', as text copied from a document has; a request item that begins with it goes after '--'"),
    ])
    func aDashFromADocumentIsNamed(arguments: [String], message: String) {
        for place in [arguments + ["example.org"], ["example.org"] + arguments] {
            #expect(throws: CommandFailure.usage(message)) { try ParsedArguments.parse(place) }
        }
    }

    /// Two options joined by a no-break space are one unknown option: shown up to the
    /// character and marked there, never past it (`--auth\u{A0}bob:pw`).
    @Test(arguments: [
        ("--follow\u{A0}-v", "unknown option '--follow[U+00A0]…'; it has a no-break space (U+00A0) in it, as text copied from a page has (the shell splits words only at plain spaces); type a plain space between words"),
        ("--auth\u{A0}bob:secret", "unknown option '--auth[U+00A0]…'; it has a no-break space (U+00A0) in it, as text copied from a page has (the shell splits words only at plain spaces); type a plain space between words"),
        ("-vF\u{A0}--all", "unknown option '-vF[U+00A0]…'; it has a no-break space (U+00A0) in it, as text copied from a page has (the shell splits words only at plain spaces); type a plain space between words"),
        ("-F\u{200B}", "unknown option '-F[U+200B]'; it has a zero-width space (U+200B) in it, as text copied from a page has; delete it"),
    ])
    func anInvisibleCharacterInAnOptionIsShown(word: String, message: String) {
        #expect(throws: CommandFailure.usage(message)) { try ParsedArguments.parse(["example.org", word]) }
    }

    /// After `--` a word is an item whatever it begins with; an ordinary word that has such
    /// a dash later on is an item too.
    @Test func anItemThatBeginsWithADashGoesAfterTheEndOfOptions() throws {
        let ended = try ParsedArguments.parse(["example.org", "--", "–x=1"])
        #expect(ended.positionals.map(\.text) == ["example.org", "–x=1"])
        let inside = try ParsedArguments.parse(["example.org", "a–b=1", "range==1–2"])
        #expect(inside.positionals.map(\.text) == ["example.org", "a–b=1", "range==1–2"])
        let offline = InProcessAF.run(["--offline", "-p", "B", "post", "http://127.0.0.1:9/", "--", "–x=1"])
        #expect(offline.status == 0)
        #expect(offline.stdout == Array(#"{"–x": "1"}"#.utf8))
    }

    @Test func aURLInQuotesIsNamedAndNothingIsSent() throws {
        let server = try TestServer()
        let bare = server.url("/get")
        let cases = [
            ("“\(bare)”", "the URL '“\(bare)”' begins with a curly quote (U+201C), as text copied from a document has; leave the quotes out: af \(bare)"),
            ("‘\(bare)’", "the URL '‘\(bare)’' begins with a curly quote (U+2018), as text copied from a document has; leave the quotes out: af \(bare)"),
            ("«\(bare)»", "the URL '«\(bare)»' begins with a typographic quote (U+00AB), as text copied from a document has; leave the quotes out: af \(bare)"),
            ("\"\(bare)\"", "the URL '\"\(bare)\"' begins with a quote the shell kept (quoted twice?); leave the quotes out: af \(bare)"),
            ("'\(bare)?q=a b'", "the URL ''\(bare)?q=a b'' begins with a quote the shell kept (quoted twice?); leave the quotes out: af '\(bare)?q=a b'"),
            ("<\(bare)>", "the URL '<\(bare)>' begins with '<', as a mail or a Markdown page wraps a link; leave the brackets out: af \(bare)"),
            ("`\(bare)`", "the URL '`\(bare)`' begins with '`', as Markdown marks code; leave the backticks out: af \(bare)"),
            // Only as many taken off the end as the start had.
            ("(\(bare)/X_(y))", "the URL '(\(bare)/X_(y))' begins with '('; leave the parentheses out: af '\(bare)/X_(y)'"),
        ]
        for (url, message) in cases {
            let result = InProcessAF.run(["get", url])
            #expect(result.status == 64)
            #expect(result.err == "af: error: \(message)\n")
        }
        #expect(server.requests.isEmpty)
        // A quote inside the URL is the URL's own.
        #expect(InProcessAF.run([server.url("/get?q=“a”")]).status == 0)
    }

    /// A no-break space copied between two words joins them into the URL (the host
    /// `xn--getexample-fka.org`, a path ending in `%C2%A0a==1`); an invisible character hides
    /// in it. Named, shown where it is, and nothing sent; the URL's own is percent-encoded.
    @Test func anInvisibleCharacterInTheURLIsShown() throws {
        let server = try TestServer()
        let bare = server.url("/get")
        let split = " (the shell splits words only at plain spaces); type a plain space between words, or write %C2%A0 where the URL holds one"
        let cases = [
            ("get\u{A0}\(bare)", "the URL 'get[U+00A0]\(bare)' has a no-break space (U+00A0) in it, as text copied from a page has" + split),
            ("\(bare)\u{A0}a==1", "the URL '\(bare)[U+00A0]a==1' has a no-break space (U+00A0) in it, as text copied from a page has" + split),
            ("\(bare)?q=a\u{202F}b", "the URL '\(bare)?q=a[U+202F]b' has a narrow no-break space (U+202F) in it, as text copied from a page has"
                + " (the shell splits words only at plain spaces); type a plain space between words, or write %E2%80%AF where the URL holds one"),
            ("\(bare)/\u{200B}x", "the URL '\(bare)/[U+200B]x' has a zero-width space (U+200B) in it, as text copied from a page has; delete it, or write %E2%80%8B where the URL holds one"),
        ]
        for (url, message) in cases {
            let result = InProcessAF.run([url])
            #expect(result.status == 64)
            #expect(result.err == "af: error: \(message)\n")
        }
        #expect(server.requests.isEmpty)
        #expect(InProcessAF.run([server.url("/get?q=a%C2%A0b")]).status == 0)
        // The joiners are no paste's: Persian words and emoji sequences hold them.
        #expect(InProcessAF.run([server.url("/\u{645}\u{6CC}\u{200C}\u{62E}\u{648}\u{627}\u{647}\u{645}")]).status == 0)
        #expect(server.requests.map(\.target) == ["/get?q=a%C2%A0b", "/%D9%85%DB%8C%E2%80%8C%D8%AE%D9%88%D8%A7%D9%87%D9%85"])
    }

    /// Option-Space on a Mac types a no-break space, and an input method a full-width one: two
    /// items (or an item and an option) typed with one between them reached af as one word,
    /// and the request went with both in one value (`{"name": "Ada\u{A0}age:=36"}`, exit 0).
    /// Named with the word after it, no value shown (a header's may be a secret), nothing sent.
    @Test func itemsJoinedByASpaceCharacterAreNamed() throws {
        let server = try TestServer()
        let joined = ": the shell splits words only at plain spaces, so both went into one value; type a plain space between words, or read a value that holds one from a file"
        let cases = [
            ("name=Ada\u{A0}age:=36", "'name=…' has a no-break space (U+00A0) before 'age:=…', which reads as another request item" + joined + " (name=@FILE)"),
            ("q==rock\u{3000}page==2", "'q==…' has a full-width space (U+3000) before 'page==…', which reads as another request item" + joined + " (q==@FILE)"),
            ("X-Token:s3cret\u{202F}X-Trace:1", "'X-Token:…' has a narrow no-break space (U+202F) before 'X-Trace:…', which reads as another request item" + joined + " (X-Token:@FILE)"),
            ("a=1\u{A0}@body.json", "'a=…' has a no-break space (U+00A0) before '@…', which reads as another request item" + joined + " (a=@FILE)"),
            ("a=1\u{A0}-v", "'a=…' has a no-break space (U+00A0) before '-v', which reads as an option" + joined + " (a=@FILE)"),
            ("a=1\u{A0}--auth=bob:pw", "'a=…' has a no-break space (U+00A0) before '--auth=…', which reads as an option" + joined + " (a=@FILE)"),
            ("a=1\u{A0}-abob:pw", "'a=…' has a no-break space (U+00A0) before '-a…', which reads as an option" + joined + " (a=@FILE)"),
            ("first\u{A0}name=Ada", "'first[U+00A0]name=…' has a no-break space (U+00A0) before 'name=…', which reads as another request item: the shell splits words only at plain spaces, so both went into one item; type a plain space between words"),
        ]
        for (item, message) in cases {
            let result = InProcessAF.run(["post", server.url("/post"), item])
            #expect(result.status == 64, "\(item)")
            #expect(result.err == "af: error: \(message)\n")
        }
        #expect(server.requests.isEmpty)
        // A value's own: before a word that is no item or option, or in JSON, which says what it holds.
        let kept = InProcessAF.run(["-p", "B", "post", server.url("/post"), "note=Prix\u{A0}:\u{A0}10", "size=10\u{A0}kg", "see=docs\u{A0}https://example.org/a:b",
                                    "ends=1\u{A0}", #"j:="x\#u{A0}b=2""#])
        #expect(kept.status == 0)
        #expect(kept.out == #"{"note": "Prix\#u{A0}:\#u{A0}10", "size": "10\#u{A0}kg", "see": "docs\#u{A0}https://example.org/a:b", "ends": "1\#u{A0}", "j": "x\#u{A0}b=2"}"#)
        #expect(server.requests.count == 1)
    }

    /// A batch line is parsed as a command line: the dash is named with the line, before
    /// anything is sent.
    @Test func aBatchLineWithADocumentsDashIsNamed() throws {
        let server = try TestServer()
        let directory = try TemporaryDirectory.make()
        let path = directory + "/lines.txt"
        try "\(server.url("/get"))\n\(server.url("/get")) –check-status\n".write(toFile: path, atomically: true, encoding: .utf8)
        let result = InProcessAF.run(["batch", path])
        #expect(result.status == 64)
        #expect(result.err == "af: error: \(path):2: '–check-status' has an en dash (U+2013) for '-', as text copied from a document has; did you mean '--check-status'?\n")
        #expect(server.requests.isEmpty)
    }

    /// JSON typed with curly quotes or a no-break space, as a page shows it, is named by the
    /// character found, not by its first byte ("unexpected byte 0xe2").
    @Test func invalidJSONNamesTheCharacterFound() {
        let cases: [(String, String)] = [
            ("a:={“b”: 1}", "invalid JSON in 'a:={“b”: 1}': unexpected '“' (U+201C, a typographic quote: JSON's strings take plain \" quotes) at line 1, column 2"),
            ("a:={\"b\":\u{A0}1}", "invalid JSON in 'a:={\"b\":\u{A0}1}': unexpected U+00A0, a space character JSON does not take at line 1, column 6"),
            ("a:={\"b\":é}", "invalid JSON in 'a:={\"b\":é}': unexpected 'é' (U+00E9) at line 1, column 6"),
            ("a:={\"b\":\u{200B}1}", "invalid JSON in 'a:={\"b\":\u{200B}1}': unexpected U+200B at line 1, column 6"),
        ]
        for (item, message) in cases {
            let result = InProcessAF.run(["--offline", "post", "http://127.0.0.1:9/", item])
            #expect(result.status == 64)
            #expect(result.err == "af: error: \(message)\n")
        }
        // Bytes that are no UTF-8 are still named as bytes.
        #expect([UInt8]([0xFF, 0x41]).withUnsafeBytes { JSONScanner.describeUnexpected($0) } == "byte 0xff")
        #expect([UInt8]([0xE2, 0x80]).withUnsafeBytes { JSONScanner.describeUnexpected($0) } == "byte 0xe2")
    }
}
