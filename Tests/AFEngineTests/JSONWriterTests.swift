@testable import AFEngine
import AFTestSupport
import Testing

/// The one JSON emitter: reports, traces, session files, request bodies and `JSONValue.text`.
@Suite struct JSONWriterTests {
    @Test func inlineObjectsAndArraysTakeSeparatorsBetweenSiblingsOnly() {
        var json = JSONWriter()
        json.object { json in
            json.member("status") { $0.number(200) }
            json.member("empty") { $0.array([Int]()) { $0.number($1) } }
            json.member("items") { json in
                json.array { json in
                    json.bool(true)
                    json.null()
                    json.number(0.5, places: 3)
                    json.string(nil)
                    json.object { _ in }
                }
            }
            json.member("raw") { $0.fragment(Array("1.10e400".utf8)) }
        }
        #expect(json.text == #"{"status": 200, "empty": [], "items": [true, null, 0.500, null, {}], "raw": 1.10e400}"#)
    }

    @Test func indentedLayoutWithOneLineParts() {
        var json = JSONWriter(layout: .indented(2))
        json.object { json in
            json.member("a") { $0.number(1) }
            json.member("pairs") { json in
                json.onOneLine { json in
                    json.array { json in
                        json.array { json in
                            json.string("x")
                            json.string("y")
                        }
                    }
                }
            }
            json.member("list") { json in
                json.array { json in
                    json.number(1)
                    json.onOneLine { $0.object { $0.member("k") { $0.bool(false) } } }
                }
            }
            json.member("none") { $0.array { _ in } }
        }
        #expect(json.text == """
        {
          "a": 1,
          "pairs": [["x", "y"]],
          "list": [
            1,
            {"k": false}
          ],
          "none": []
        }
        """)
    }

    @Test func stringsEscapeQuotesBackslashesAndEveryControlCharacter() {
        #expect(JSONWriter.quoted("a\"b\\c") == #""a\"b\\c""#)
        #expect(JSONWriter.quoted("\n\r\t\u{08}\u{0C}") == #""\n\r\t\b\f""#)
        #expect(JSONWriter.quoted("\u{00}\u{1F}\u{7F}") == "\"\\u0000\\u001f\u{7F}\"")
        #expect(JSONWriter.quoted("é😀/") == "\"é😀/\"")
        // Escapes first, last and next to each other, between runs copied whole.
        #expect(JSONWriter.quoted("\"\"x\n\ny\\") == #""\"\"x\n\ny\\""#)
        for value in (0..<0x80).map({ String(UnicodeScalar(UInt8($0))) }) + ["", "mixed \u{01} é \" end"] {
            let quoted = JSONWriter.quoted(value)
            #expect(JSONScanner.validate(Array(quoted.utf8)) == nil, "\(quoted)")
            #expect(JSONValue.decodeString(Array(quoted.utf8)) == value)
        }
    }

    /// Strings of every length up to 40 made of bytes that need escapes and bytes that do
    /// not, multi-byte characters among them: the writer, which skips eight bytes at a time
    /// while none needs an escape, writes what escaping character by character writes
    /// (`JSONText.string`, the test servers' own).
    @Test func escapesFoundEightBytesAtATimeMatchOneByOne() {
        let pieces = ["a", "é", "😀", "\"", "\\", "\n", "\u{01}", "\u{08}", "\u{0C}", "\u{1F}", " ", "~", "\u{7F}", "!", "\t"]
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        for length in 0...40 {
            for _ in 0..<8 {
                var text = ""
                for _ in 0..<length {
                    seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    text += pieces[Int(seed >> 33) % pieces.count]
                }
                #expect(JSONWriter.quoted(text) == JSONText.string(text), "\(Array(text.utf8))")
            }
        }
    }

    /// Escapes read back as what they name: pairs as one character, a lone surrogate (which
    /// no Swift string can hold) as U+FFFD, every other byte as it came.
    @Test func decodedStringsResolveEveryEscape() {
        #expect(JSONValue.decodeString(Array(#""caf\u00e9 \ud83d\ude00 \/\"\\\b\f\n\r\t x""#.utf8)) == "café 😀 /\"\\\u{08}\u{0C}\n\r\t x")
        #expect(JSONValue.decodeString(Array(#""a\ud800b""#.utf8)) == "a\u{FFFD}\u{FFFD}\u{FFFD}b")
        #expect(JSONValue.decodeString(Array(#""\u0041\u00DF""#.utf8)) == "Aß")
        #expect(JSONValue.decodeString(Array(#""""#.utf8)) == "")
    }

    @Test func parsedValuesComeBackWithNumbersAsWritten() throws {
        let text = #"{"n": -0.0e+10, "s": "\u00e9\n", "a": [1, {"b": null}], "t": true}"#
        let value = try JSONValue.parse(Array(text.utf8))
        #expect(value.text == #"{"n": -0.0e+10, "s": "é\n", "a": [1, {"b": null}], "t": true}"#)
        #expect(try JSONValue.parse(Array(value.text.utf8)) == value)
    }
}
