@testable import AFCommandLine
@testable import AFEngine
import AFTestSupport
import Foundation
import Testing

/// The formatter must never change a value: the token sequence (whitespace aside) before
/// and after formatting is identical, for adversarial input fed in every chunking.
@Suite struct JSONFormatterTests {
    static let adversarial: [String] = [
        #"{"a":1,"a":2,"a":{"a":[]}}"#,
        #"[1.0e+30,-0,0.10,1E-7,123456789012345678901234567890,-1.5e400,1e400]"#,
        #"{"esc":"\u00e9\ud83d\ude00\n\t\"\\\/","empty":"","uni":"héllo ✓"}"#,
        #"{"z":1,"b":{"y":[true,false,null,{}]},"a":[[[]]]}"#,
        String(repeating: "[", count: 500) + String(repeating: "]", count: 500),
        #"  {  "spaced"  :  [ 1 , 2 ]  }  "#,
        "LONG-STRING",
        #"{"k":"\u0000\u001f"}"#,
    ]

    /// Tokens of a document, ignoring whitespace.
    static func tokens(_ text: [UInt8], multiple: Bool = false) -> [(JSONTokenKind, [UInt8])]? {
        var scanner = JSONScanner()
        scanner.allowsMultipleValues = multiple
        var sink = CollectingSink()
        do {
            try scanner.feed(text, into: &sink)
            try scanner.finish(into: &sink)
        } catch {
            return nil
        }
        return sink.tokens.map { ($0.kind, $0.bytes) }
    }

    static func format(_ input: [UInt8], chunk: Int, style: JSONFormatter.Style = .init()) throws -> [UInt8] {
        var formatter = JSONFormatter(style: style)
        var out: [UInt8] = []
        var index = 0
        while index < input.count {
            let end = min(input.count, index + chunk)
            var piece: [UInt8] = []
            try formatter.feed(Array(input[index..<end]), into: &piece)
            out += piece
            index = end
        }
        var tail: [UInt8] = []
        try formatter.finish(into: &tail)
        return out + tail
    }

    /// For a terminal, bytes in a string that are no UTF-8 (the scanner lets them through)
    /// show as U+FFFD, as in text; they went out raw, and a lone 0x9B is CSI to an 8-bit
    /// terminal. Well-formed sequences of every length stay; into a pipe every byte stays.
    @Test func bytesThatAreNoUTF8ShowAsReplacementsOnATerminal() throws {
        let document = Array("{\"s\": \"a".utf8) + [0x9B, 0xFF, 0xC3, 0x41, 0xE2, 0x82, 0xED, 0xA0, 0x80] + Array("é€😀\"}".utf8)
        let shown = try Self.format(document, chunk: 5, style: .init(indent: 0, decodesEscapes: true))
        #expect(String(decoding: shown, as: UTF8.self) == "{\n\"s\": \"a\u{FFFD}\u{FFFD}\u{FFFD}A\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}\u{FFFD}é€😀\"\n}\n")
        #expect(String(validating: shown, as: UTF8.self) != nil)
        #expect(try Self.format(document, chunk: 5, style: .init(indent: 0)) == Array("{\n\"s\": \"a".utf8) + [0x9B, 0xFF, 0xC3, 0x41, 0xE2, 0x82, 0xED, 0xA0, 0x80] + Array("é€😀\"\n}\n".utf8))
    }

    /// Coloured output into a pipe is for reading (`| less -R`, `| cat`): a JSON string's DEL,
    /// C1 controls (U+009B is CSI to a terminal) and bytes that are no UTF-8 went out raw
    /// there, where a terminal shows them escaped and text in colours had them escaped too.
    /// Escapes stay as written; without colours every byte stays.
    @Test func colouredOutputIntoAPipeEscapesControlsInStrings() throws {
        let document = Array("{\"s\": \"a".utf8) + [0xC2, 0x9B] + Array("2J\u{7F}".utf8) + [0x9B] + Array("é\\u001b\"}".utf8)
        let painted = try Self.format(document, chunk: 3, style: .init(indent: 0, theme: Theme.monokai))
        #expect(String(decoding: FuzzTargets.withoutColours(painted), as: UTF8.self) == "{\n\"s\": \"a\\u009b2J\\u007f\u{FFFD}é\\u001b\"\n}\n")
        let coloursOnly = try Self.format(document, chunk: 3, style: .init(indent: 4, theme: Theme.monokai, colorsOnly: true))
        #expect(String(decoding: FuzzTargets.withoutColours(coloursOnly), as: UTF8.self) == "{\"s\": \"a\\u009b2J\\u007f\u{FFFD}é\\u001b\"}")
        #expect(try Self.format(document, chunk: 3, style: .init(indent: 0)) == Array("{\n\"s\": \"a".utf8) + [0xC2, 0x9B] + Array("2J\u{7F}".utf8) + [0x9B] + Array("é\\u001b\"\n}\n".utf8))
    }

    /// A string longer than the scanner holds (`fragmentThreshold`) goes out in pieces; for a
    /// terminal each piece is decoded by itself, so a piece that ended inside a character
    /// showed it as U+FFFD, and one that ended between the two escapes of a surrogate pair
    /// showed them escaped. Every cut of every kind of character: the pieces read as the
    /// whole string does.
    @Test func aLongStringCutIntoPiecesShowsWhole() throws {
        let filler = String(repeating: "a", count: JSONScanner.fragmentThreshold)
        let characters = ["é", "€", "😀", #"\ud83d\ude00"#, #"\\ud83d"#, #"\u00e9"#]
        for character in characters {
            let value = filler + String(repeating: character, count: 12)
            let document = Array("{\"s\": \"\(value)\"}".utf8)
            let style = JSONFormatter.Style(indent: 0, decodesEscapes: true)
            let whole = try Self.format(document, chunk: document.count, style: style)
            // Chunks that end the first piece at each byte of the characters after the filler.
            for offset in 0..<(character.utf8.count * 2 + 1) {
                let shown = try Self.format(document, chunk: 8 + filler.utf8.count + offset, style: style)
                #expect(shown == whole, "\(character) cut \(offset) bytes in")
            }
        }
        let decoded = try Self.format(Array("{\"s\": \"\(filler)\\ud83d\\ude00\"}".utf8), chunk: filler.utf8.count + 12, style: .init(indent: 0, decodesEscapes: true))
        #expect(String(decoding: decoded.suffix(8), as: UTF8.self) == "😀\"\n}\n")
    }

    @Test(arguments: adversarial)
    func formattingKeepsEveryToken(document: String) throws {
        // A 240 KB string is built here rather than passed in, so it stays out of the test's name.
        let text = document == "LONG-STRING" ? "\"" + String(repeating: "long string ", count: 20000) + "\"" : document
        let input = Array(text.utf8)
        let before = try #require(Self.tokens(input))
        for chunk in [1, 2, 3, 7, 64, 1 << 20] {
            let output = try Self.format(input, chunk: chunk)
            let after = try #require(Self.tokens(output), "output is not JSON for chunk size \(chunk)")
            let same = before.count == after.count && zip(before, after).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
            #expect(same, "tokens changed with chunk size \(chunk)")
        }
    }

    @Test func indentationAndEmptyContainers() throws {
        let output = try Self.format(Array(#"{"a":[1,{}],"b":[],"c":{"d":null}}"#.utf8), chunk: 5, style: .init(indent: 2))
        #expect(String(decoding: output, as: UTF8.self) == """
        {
          "a": [
            1,
            {}
          ],
          "b": [],
          "c": {
            "d": null
          }
        }

        """)
    }

    @Test func sortKeysIsStableForDuplicates() throws {
        let output = try Self.format(Array(#"{"b":1,"a":2,"b":0,"c":{"z":1,"y":2}}"#.utf8), chunk: 3, style: .init(indent: 1, sortKeys: true))
        #expect(String(decoding: output, as: UTF8.self) == "{\n \"a\": 2,\n \"b\": 1,\n \"b\": 0,\n \"c\": {\n  \"y\": 2,\n  \"z\": 1\n }\n}\n")
    }

    /// Keys order by their text's Unicode scalars, as jq and HTTPie order them: a key that
    /// is a prefix of another comes first (the closing quote takes no part), and an escape
    /// orders as the character it names. Small objects and large ones (another sort) agree.
    @Test(arguments: [0, 40])
    func sortKeysOrdersByTheKeysText(padding: Int) throws {
        let keys = [#""a!""#, #""é""#, #""a""#, #""aaaaaaaaX""#, #""z""#, #""\u00e9x""#, #""a b""#, #""\u0041""#,
                    #""B""#, #""aaaaaaaa""#, #""\n""#, #""aaaaaaaa\t""#, #""""#]
        let expected = [#""""#, #""\n""#, #""\u0041""#, #""B""#, #""a""#, #""a b""#, #""a!""#, #""aaaaaaaa""#,
                        #""aaaaaaaa\t""#, #""aaaaaaaaX""#, #""z""#, #""é""#, #""\u00e9x""#]
        let pad = (0..<padding).map { #""~\#($0)""# }
        let input = "{" + (keys + pad).enumerated().map { "\($0.element):\($0.offset)" }.joined(separator: ",") + "}"
        for chunk in [3, 1 << 16] {
            let output = try Self.format(Array(input.utf8), chunk: chunk, style: .init(indent: 0, sortKeys: true))
            let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").dropFirst().dropLast()
            let got = lines.map { line in String(line[..<(line.range(of: ": ", options: .backwards)?.lowerBound ?? line.endIndex)]) }
            #expect(got.filter { !$0.hasPrefix("\"~") } == expected, "chunk \(chunk)")
            #expect(got.count == keys.count + padding)
        }
    }

    /// Formats `input` in `chunk`-byte pieces; returns the output and whether sorting gave up.
    static func formatReporting(_ input: [UInt8], chunk: Int, style: JSONFormatter.Style) throws -> (output: [UInt8], gaveUp: Bool) {
        var formatter = JSONFormatter(style: style)
        var out: [UInt8] = []
        var index = 0
        while index < input.count {
            let end = min(input.count, index + chunk)
            try formatter.feed(Array(input[index..<end]), into: &out)
            index = end
        }
        try formatter.finish(into: &out)
        return (out, formatter.gaveUpSorting)
    }

    /// `--sort-keys` holds an object's formatted text in memory up to its limit; past it,
    /// the document is written in its own order but for the objects that had ended (those
    /// are sorted), losing and adding no byte, wherever the limit falls: on a key, a value,
    /// a separator already consumed, or inside a string arriving in pieces. A limit reached
    /// before anything ended gives exactly the unsorted output; one as large as the
    /// formatted document never gives up.
    @Test(arguments: [false, true])
    func sortingGivesUpPastItsLimitAndLosesNothing(multipleValues: Bool) throws {
        let document = #"{"b":[1,{"y":"caf\u00e9","x":null}],"a":{"d":true,"c":-1.5e3},"e" : "tail","":[[],{}]}"#
        let input = Array((multipleValues ? document + "\n" + document + "\n[3,{\"z\":1,\"a\":2}]\n" : document).utf8)
        let plain = JSONFormatter.Style(indent: 2, multipleValues: multipleValues)
        var sorting = plain
        sorting.sortKeys = true
        let unsorted = try Self.format(input, chunk: 1 << 20, style: plain)
        let sorted = try Self.format(input, chunk: 1 << 20, style: sorting)
        #expect(sorted != unsorted)
        var gaveUp = 0
        for limit in 0...input.count {
            sorting.sortLimit = limit
            for chunk in [1, 3, 16, 1 << 20] {
                let result = try Self.formatReporting(input, chunk: chunk, style: sorting)
                if result.gaveUp {
                    gaveUp += 1
                    #expect(result.output.count == unsorted.count && result.output.sorted() == unsorted.sorted(), "limit \(limit), chunk \(chunk)")
                    if limit == 0 { #expect(result.output == unsorted, "chunk \(chunk)") }
                } else {
                    #expect(result.output == sorted, "limit \(limit), chunk \(chunk)")
                }
            }
        }
        #expect(try Self.formatReporting(input, chunk: 1, style: .init(indent: 2, sortKeys: true, multipleValues: multipleValues, sortLimit: 0)).gaveUp)
        #expect(try !Self.formatReporting(input, chunk: 1, style: .init(indent: 2, sortKeys: true, multipleValues: multipleValues, sortLimit: sorted.count)).gaveUp)
        #expect(gaveUp > input.count)
    }

    /// The limit falling inside a string that arrives in pieces (coloured, so a piece taken
    /// for a whole string would show as a colour closed and opened again inside it).
    @Test func sortingGivesUpInsideALongString() throws {
        let long = String(repeating: "s", count: JSONScanner.fragmentThreshold * 2 + 5)
        let input = Array(#"{"k":"\#(long)","b":{"z":1,"a":2}}"#.utf8)
        let unsorted = try Self.format(input, chunk: 1 << 20, style: .init(indent: 1, theme: .auto))
        for limit in [10, JSONScanner.fragmentThreshold / 2, JSONScanner.fragmentThreshold + 100] {
            for chunk in [4096, 40_000] {
                let result = try Self.formatReporting(input, chunk: chunk, style: .init(indent: 1, theme: .auto, sortKeys: true, sortLimit: limit))
                #expect(result.gaveUp, "limit \(limit), chunk \(chunk)")
                #expect(result.output == unsorted, "limit \(limit), chunk \(chunk)")
            }
        }
    }

    @Test func sortKeysOrdersLargeObjectsStablyAndKeepsEveryToken() throws {
        // 60 members (past the insertion-sort size), duplicate keys in a known order, a key
        // long enough to arrive in pieces, nested objects inside arrays.
        let long = String(repeating: "k", count: JSONScanner.fragmentThreshold + 10)
        var members: [(String, String)] = (0..<57).map { (String(format: "key%02d", 56 - $0), "\($0)") }
        members += [("dup", "\"first\""), (long, "[{\"z\":1,\"a\":[{\"y\":0,\"b\":1e400}]}]"), ("dup", "\"second\"")]
        let input = Array(("{" + members.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}").utf8)
        for chunk in [5, 4096, 1 << 20] {
            let output = try Self.format(input, chunk: chunk, style: .init(indent: 0, sortKeys: true))
            let value = try JSONValue.parse(output)
            let keys = try #require(value.objectValue).map(\.0)
            #expect(keys == members.map(\.0).sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }), "chunk \(chunk)")
            let duplicates = try #require(value.objectValue).filter { $0.0 == "dup" }.map(\.1)
            #expect(duplicates == [.string("first"), .string("second")])
            let nested = try #require(value[long]?.arrayValue?.first?.objectValue)
            #expect(nested.map(\.0) == ["a", "z"])
            #expect(nested.first?.1.arrayValue?.first?.objectValue?.map(\.0) == ["b", "y"])
            #expect(nested.first?.1.arrayValue?.first?["b"] == .number("1e400"))
        }
    }

    /// Sorted keys keep one length byte per token, and the lengths of tokens of 255 bytes
    /// or more in a table of their own (a string of more than 64 KiB arrives in pieces and
    /// grows past it). Keys and values of lengths on both sides of that limit, in every
    /// chunking, must come out sorted with every byte where it was.
    @Test(arguments: [1, 7, 255, 100_000])
    func sortedTokensOfEveryLengthKeepTheirBytes(chunk: Int) throws {
        let lengths = [0, 1, 253, 254, 255, 256, 300, JSONScanner.fragmentThreshold - 1, JSONScanner.fragmentThreshold + 300]
        var members: [(key: String, value: String)] = []
        for (index, length) in lengths.enumerated().reversed() {
            let key = String(repeating: Character(UnicodeScalar(UInt8(97 + index))), count: max(1, length))
            let text = String(repeating: "v", count: length)
            members.append((key, index % 2 == 0 ? "\"\(text)\"" : "[\"\(text)\",{\"z\":\"\(text)\",\"a\":1}]"))
        }
        let input = Array(("{" + members.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}").utf8)
        let output = try Self.format(input, chunk: chunk, style: .init(indent: 0, sortKeys: true))
        let value = try JSONValue.parse(output)
        let object = try #require(value.objectValue)
        #expect(object.map(\.0) == members.map(\.key).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        for member in members {
            let expected = try JSONValue.parse(Array(member.value.utf8))
            let got = try #require(value[member.key])
            if let array = expected.arrayValue, let nested = array.last?.objectValue {
                // The nested object comes out with its keys sorted.
                #expect(got.arrayValue?.first == array.first)
                #expect(got.arrayValue?.last?.objectValue?.map(\.0) == nested.map(\.0).sorted())
                #expect(got.arrayValue?.last?["z"] == nested.first { $0.0 == "z" }?.1)
            } else {
                #expect(got == expected, "key of \(member.key.count) bytes")
            }
        }
    }

    @Test func ndjsonValuesAreFormattedOneByOne() throws {
        let output = try Self.format(Array("{\"a\":1}\n{\"b\":[2]}\n".utf8), chunk: 4, style: .init(indent: 2, multipleValues: true))
        #expect(String(decoding: output, as: UTF8.self) == "{\n  \"a\": 1\n}\n{\n  \"b\": [\n    2\n  ]\n}\n")
    }

    /// Painted output has a scanning loop of its own: with its colour sequences removed it
    /// is exactly the plain layout, for every document and chunking, and value tokens are
    /// wrapped in their colours.
    @Test(arguments: adversarial)
    func paintedOutputIsThePlainLayoutWithColours(document: String) throws {
        let text = document == "LONG-STRING" ? "\"" + String(repeating: "long string ", count: 20000) + "\"" : document
        let input = Array(text.utf8)
        let plain = try Self.format(input, chunk: 1 << 20)
        for theme in [Theme.auto, Theme.monokai] {
            for chunk in [1, 3, 64, 1 << 20] {
                let painted = try Self.format(input, chunk: chunk, style: .init(theme: theme))
                #expect(FuzzTargets.withoutColours(painted) == plain, "chunk size \(chunk)")
            }
        }
        let keyed = String(decoding: try Self.format(Array(#"{"k":[1,"s",null]}"#.utf8), chunk: 2, style: .init(theme: .auto)), as: UTF8.self)
        for painted in [Theme.auto.key + "\"k\"", Theme.auto.number + "1", Theme.auto.string + "\"s\"", Theme.auto.null + "null"] {
            #expect(keyed.contains(painted + Theme.reset))
        }
    }

    @Test func colorsOnlyKeepsLayout() throws {
        let theme = Theme.auto
        let input = #"{ "a" : [1, true] }"#
        let output = String(decoding: try Self.format(Array(input.utf8), chunk: 3, style: .init(theme: theme, colorsOnly: true)), as: UTF8.self)
        let stripped = output.replacing(Theme.reset, with: "").replacing(theme.key, with: "").replacing(theme.number, with: "")
            .replacing(theme.boolean, with: "")
        #expect(stripped == input)
        #expect(output.contains(theme.key + "\"a\"" + Theme.reset))
    }

    @Test(arguments: [
        ("{\"a\" 1}", "expected ':' after the key at line 1, column 6"),
        ("[1,]", "unexpected ']' where a value should be at line 1, column 4"),
        ("{\"a\":1,}", "unexpected '}' after a comma at line 1, column 8"),
        ("{\"a\"}", "expected ':' after the key at line 1, column 5"),
        ("[01]", "the number '0' is incomplete"),
        ("{\"a\":tru}", "'tru' is not a JSON value (true, false and null are) at line 1, column 6"),
        ("\"a\\x\"", "'\\x' is not a JSON escape"),
        ("[1] 2", "unexpected data after the JSON value at line 1, column 5"),
        ("{\"a\":\n\"unterminated", "the input ends inside a string"),
        ("", "there is no JSON value"),
        ("[\"\u{01}\"]", "a control character must be escaped inside a string"),
    ])
    func syntaxErrorsSayWhere(input: String, message: String) throws {
        let error = try #require(JSONScanner.validate(Array(input.utf8)))
        #expect(error.description.contains(message), "\(error.description)")
    }

    /// The scanner keeps the kind of each open container as bits, 64 to a word and the
    /// deeper ones spilled: a mix of objects and arrays to depths around and past the word
    /// boundary must close with exactly the right brackets, and a wrong one at any depth is
    /// found at its offset.
    @Test(arguments: [1, 63, 64, 65, 127, 128, 129, 300, JSONScanner.maxDepth])
    func containerKindsAreKeptAtEveryDepth(depth: Int) throws {
        // Level i is an object when i % 3 == 0 (a key then the next level), else an array.
        let kinds = (0..<depth).map { $0 % 3 == 0 }
        var opening: [UInt8] = []
        for isObject in kinds { opening += Array((isObject ? "{\"k\":" : "[").utf8) }
        let closing = kinds.reversed().flatMap { Array(($0 ? "}" : "]").utf8) }
        let valid = opening + Array("1".utf8) + closing
        #expect(JSONScanner.validate(valid) == nil, "depth \(depth)")
        // The same document with one closing bracket swapped, at several depths.
        for position in Set([0, closing.count / 2, closing.count - 1, max(0, closing.count - 65)]) {
            var broken = closing
            broken[position] = broken[position] == UInt8(ascii: "}") ? UInt8(ascii: "]") : UInt8(ascii: "}")
            let input = opening + Array("1".utf8) + broken
            let error = try #require(JSONScanner.validate(input), "depth \(depth), position \(position)")
            #expect(error.offset == opening.count + 1 + position, "depth \(depth), position \(position): \(error.description)")
        }
        // One level more than allowed is refused.
        if depth == JSONScanner.maxDepth {
            let error = try #require(JSONScanner.validate(Array("[".utf8) + valid + Array("]".utf8)))
            #expect(error.description.contains("nested more than 512 levels deep"))
        }
    }

    /// The string scan checks eight bytes at a time and jumps to the first byte that needs
    /// attention: a quote, backslash or control byte at every position of a word, after
    /// bytes that sit next to them in value (0x21, 0x23, 0x5B, 0x5D, 0x20) or have the high
    /// bit set (UTF-8), must be found exactly where it is.
    @Test func stringScanFindsTheFirstSpecialByteAtEveryOffset() throws {
        let fillers: [[UInt8]] = [Array("abcdefghijklmnopq".utf8), [0x21, 0x23, 0x5B, 0x5D, 0x20, 0xC3, 0xA9, 0x7F, 0x21, 0x23, 0xE2, 0x9C, 0x93, 0x20, 0x5D, 0x5B, 0x21]]
        for filler in fillers {
            for offset in 0...16 {
                let prefix = Array(filler.prefix(offset))
                // A control byte: an error at exactly its offset.
                for control: UInt8 in [0x00, 0x01, 0x1F] {
                    let input = Array("[\"".utf8) + prefix + [control] + Array("xxxxxxxxxxxx\"]".utf8)
                    let error = try #require(JSONScanner.validate(input), "offset \(offset)")
                    #expect(error.offset == 2 + offset, "control 0x\(String(control, radix: 16)) at \(offset): \(error.description)")
                }
                // A closing quote or an escape: the string token is exactly what was written.
                for middle in [Array("\"".utf8), Array("\\\"".utf8), Array("\\\\".utf8), Array("\\u00e9".utf8)] {
                    let string = Array("\"".utf8) + prefix + middle + (middle == Array("\"".utf8) ? [] : Array("tail\"".utf8))
                    let input = Array("[".utf8) + string + Array(",1]".utf8)
                    let tokens = try #require(Self.tokens(input), "offset \(offset)")
                    #expect(tokens.count == 5 && tokens[1].0 == .string && tokens[1].1 == string, "offset \(offset): \(tokens.map { String(decoding: $0.1, as: UTF8.self) })")
                }
            }
        }
    }

    @Test func truncatedInputFallsBackToTheRestAsItCame() throws {
        var formatter = JSONFormatter(style: .init())
        var out: [UInt8] = []
        try formatter.feed(Array(#"{"a": [1, 2], "b": "unfinished"#.utf8), into: &out)
        #expect(throws: JSONSyntaxError.self) { try formatter.finish(into: &out) }
        #expect(String(decoding: out + formatter.unformattedTail, as: UTF8.self) == "{\n    \"a\": [\n        1,\n        2\n    ],\n    \"b\": \"unfinished")
    }

    /// A document that turns invalid just after a comma or colon shows, in every chunking,
    /// the formatted part (separator included) and then the rest as it came.
    @Test(arguments: [
        (#"{"a": 1, }"#, "{\n    \"a\": 1,\n    }"),
        (#"{"a": 1, 2}"#, "{\n    \"a\": 1,\n    2}"),
        (#"{"a" : , }"#, "{\n    \"a\": , }"),
        (#"[1, 2,"#, "[\n    1,\n    2,\n    "),
        (#"{"a":"#, "{\n    \"a\": "),
        (#"[1, "abc\x"]"#, "[\n    1,\n    \"abc\\x\"]"),
        (#"[1,  tru ]"#, "[\n    1,\n    tru ]"),
        (#"{"a": 1,"b""#, "{\n    \"a\": 1,\n    \"b\""),
        ("[1,\n  2 ,\n ]", "[\n    1,\n    2,\n    ]"),
        (#"{"k": {"x": 1}, : 2}"#, "{\n    \"k\": {\n        \"x\": 1\n    },\n    : 2}"),
        // LONG: 70,000 bytes, so that the string is handed out in pieces before the error.
        ("[1, \"LONG\\q\"]", "[\n    1,\n    \"LONG\\q\"]"),
    ])
    func invalidRightAfterASeparatorShowsWhatCame(input: String, shown: String) throws {
        let long = String(repeating: "x", count: 70_000)
        let bytes = Array(input.replacing("LONG", with: long).utf8)
        let shown = shown.replacing("LONG", with: long)
        for chunk in [1, 2, 3, 5, 7, 64, 1 << 20] {
            var formatter = JSONFormatter(style: .init())
            var out: [UInt8] = []
            var index = 0
            var failed = false
            while index < bytes.count, !failed {
                let end = min(bytes.count, index + chunk)
                do {
                    try formatter.feed(Array(bytes[index..<end]), into: &out)
                } catch {
                    failed = true
                    out += formatter.unformattedTail + bytes[end...]
                }
                index = end
            }
            if !failed {
                #expect(throws: JSONSyntaxError.self) { try formatter.finish(into: &out) }
                out += formatter.unformattedTail
            }
            #expect(String(decoding: out, as: UTF8.self) == shown, "chunk size \(chunk)")
        }
    }

    /// Invalid JSON far past a token carried over from the previous chunk, or past a slice:
    /// what is shown (formatted part, then the rest as it came) is the same in every chunking
    /// as when the document comes at once.
    @Test(arguments: [
        "[" + String(repeating: "12345, ", count: 300) + "oops, " + String(repeating: "1, ", count: 300) + "1]",
        "{" + String(repeating: #""key": "value", "#, count: 200) + #""k" "v", "# + String(repeating: #""a": 1, "#, count: 100) + "}",
        "[" + String(repeating: "true, false, ", count: 200) + "nul, " + String(repeating: "null, ", count: 100) + "1]",
    ])
    func invalidFarIntoAChunkShowsTheSameInEveryChunking(input: String) throws {
        let bytes = Array(input.utf8)
        let whole = Self.shown(bytes, chunk: 1 << 20)
        #expect(whole.suffix(3) == Array(input.utf8.suffix(3)))
        for chunk in [1, 3, 100, 255, 256, 257, 300, 1000, 1500] {
            #expect(Self.shown(bytes, chunk: chunk) == whole, "chunk size \(chunk)")
        }
    }

    /// What the body printer shows for input that may be invalid, fed `chunk` bytes at a
    /// time (`FuzzTargets.shown`).
    static func shown(_ bytes: [UInt8], chunk: Int, style: JSONFormatter.Style = .init()) -> [UInt8] {
        let pieces = stride(from: 0, to: bytes.count, by: chunk).map { min(chunk, bytes.count - $0) }
        return FuzzTargets.shown(bytes, pieces: pieces, style: style)
    }

    /// `--sort-keys` on invalid JSON, or on a document cut short, loses nothing: what came
    /// before the problem is shown formatted, in its own order when no object in it had
    /// ended (an object cannot be sorted before it ends), so exactly as without sorting
    /// here. (It once showed only the rest.)
    @Test(arguments: [
        "[" + String(repeating: "12345, ", count: 300) + "oops, " + String(repeating: "1, ", count: 300) + "1]",
        "{" + String(repeating: #""key": "value", "#, count: 200) + #""k" "v", "# + String(repeating: #""a": 1, "#, count: 100) + "}",
        "[" + String(repeating: "1, ", count: 500),
        "{" + String(repeating: #""key": "value", "#, count: 200) + #""k": "unfinished"#,
        #"{"b": 1, "a": 2"#,
    ])
    func sortKeysShowsInvalidJSONAsFormattingWithoutSortingDoes(input: String) {
        let bytes = Array(input.utf8)
        for chunk in [1, 7, 100, 256, 1 << 20] {
            let unsorted = Self.shown(bytes, chunk: chunk, style: .init(indent: 2))
            let sorted = Self.shown(bytes, chunk: chunk, style: .init(indent: 2, sortKeys: true))
            #expect(sorted == unsorted, "chunk \(chunk): \(String(decoding: sorted, as: UTF8.self))")
            #expect(sorted.count >= bytes.count, "chunk \(chunk): nothing lost")
        }
    }

    /// Invalid JSON loses no byte, with or without sorting and colours, in every chunking:
    /// only whitespace outside strings differs from the input. (An opening bracket held back
    /// so that `{}` stays on one line was once dropped when an error followed it.)
    @Test(arguments: ["[,1]", "{]", "[[x", #"{"a":[}"#, #"[{"b":1,"a":[,"#, "[ \n ]]", #"{"k": {"#, "[1, [", "{"])
    func invalidJSONLosesNoByte(input: String) {
        let bytes = Array(input.utf8)
        let isSpace: (UInt8) -> Bool = { $0 == 32 || $0 == 10 || $0 == 13 || $0 == 9 }
        for chunk in 1...bytes.count {
            for style in [JSONFormatter.Style(), .init(sortKeys: true), .init(theme: .monokai)] {
                let shown = FuzzTargets.withoutColours(Self.shown(bytes, chunk: chunk, style: style))
                #expect(shown.filter { !isSpace($0) } == bytes.filter { !isSpace($0) }, "chunk \(chunk): \(String(decoding: shown, as: UTF8.self))")
            }
        }
    }

    /// A long number arriving in many pieces is carried without being scanned again for each
    /// piece (a 200 MB number took minutes), and a number over 1 MiB is shown as it came, in
    /// every chunking and mode, losing no byte.
    @Test(.timeLimit(.minutes(3))) func longNumbersAreLinearAndBounded() throws {
        // Under the limit: formatted the same whole and in pieces (sizes that end a piece on
        // a digit, on the `.`, on the `e` and on its sign).
        let digits = String(repeating: "7", count: 100_000)
        let number = Array("[-1\(digits).5\(digits)e+1\(digits), 0, 2]".utf8)
        let whole = try Self.format(number, chunk: number.count)
        for chunk in [1, 2, 3, 4096, 65_536] {
            #expect(try Self.format(number, chunk: chunk) == whole, "chunk \(chunk)")
        }
        // A lone zero followed by a digit is still two values, an error, in pieces too.
        for chunk in [1, 2, 3] {
            #expect(throws: JSONSyntaxError.self) { try Self.format(Array("[0\(digits)]".utf8), chunk: chunk) }
        }
        // Over the limit: in pieces shown as it came (whole, formatted: a number within one
        // chunk is not measured); every byte either way.
        let huge = Array("{\"a\": [1, 2\(String(repeating: "0", count: JSONScanner.maxNumberLength + 10))]}".utf8)
        let isSpace: (UInt8) -> Bool = { $0 == 32 || $0 == 10 || $0 == 13 || $0 == 9 }
        for chunk in [7, 65_536, huge.count] {
            for style in [JSONFormatter.Style(), .init(sortKeys: true), .init(theme: .monokai)] {
                let shown = FuzzTargets.withoutColours(Self.shown(huge, chunk: chunk, style: style))
                #expect(shown.filter { !isSpace($0) } == huge.filter { !isSpace($0) }, "chunk \(chunk)")
            }
        }
    }

    /// An array of records is sorted a record at a time: the same output in every chunking,
    /// brackets and commas of nested arrays outside objects included, and what is kept
    /// between chunks is one record, not the document.
    @Test func sortKeysSortsAnArrayOfRecordsOneAtATime() throws {
        let input = Array(#"[{"b":1,"a":2},[],[{"d":[{"z":1,"y":2}],"c":3},4,[[{"f":1,"e":2}]]],"s",{}]"#.utf8)
        // The layout of the same document sorted by hand and formatted without sorting.
        let expected = try Self.format(Array(#"[{"a":2,"b":1},[],[{"c":3,"d":[{"y":2,"z":1}]},4,[[{"e":2,"f":1}]]],"s",{}]"#.utf8), chunk: 1 << 20)
        for chunk in 1...input.count {
            let output = try Self.format(input, chunk: chunk, style: .init(sortKeys: true))
            #expect(output == expected, "chunk \(chunk): \(String(decoding: output, as: UTF8.self))")
        }
        // NDJSON: each value sorted as it ends.
        let lines = Array("{\"b\":1,\"a\":2}\n[{\"d\":1,\"c\":2}]\n".utf8)
        let sortedLines = try Self.format(Array("{\"a\":2,\"b\":1}\n[{\"c\":2,\"d\":1}]\n".utf8), chunk: 1 << 20, style: .init(multipleValues: true))
        for chunk in [1, 5, lines.count] {
            let output = try Self.format(lines, chunk: chunk, style: .init(sortKeys: true, multipleValues: true))
            #expect(output == sortedLines, "chunk \(chunk): \(String(decoding: output, as: UTF8.self))")
        }
        // 20,000 records in 64 KiB chunks: no more than a chunk and a record is kept.
        let record = #"{"id":12345,"name":"item","tags":["a","b",{"deep":[true,false,null]}],"ok":true}"#
        let large = Array(("[" + Array(repeating: record, count: 20_000).joined(separator: ",") + "]").utf8)
        var formatter = JSONFormatter(style: .init(indent: 2, sortKeys: true))
        var out: [UInt8] = []
        var mostKept = 0
        var index = 0
        while index < large.count {
            let end = min(large.count, index + 65_536)
            try formatter.feed(Array(large[index..<end]), into: &out)
            mostKept = max(mostKept, formatter.keptByteCount)
            index = end
        }
        try formatter.finish(into: &out)
        #expect(mostKept < 1_000, "\(mostKept) bytes kept")
        let value = try JSONValue.parse(out)
        let items = try #require(value.arrayValue)
        #expect(items.count == 20_000)
        #expect(try #require(items.last?.objectValue).map(\.0) == ["id", "name", "ok", "tags"])
    }

    /// Invalid JSON after an object that ended inside one that did not: the one that ended
    /// shows sorted, the others in their own order (formatted), then the rest exactly as
    /// it came, in every chunking.
    @Test func sortKeysShowsAnObjectThatEndedBeforeAnErrorSorted() {
        let input = Array(#"{"b": {"d": 1, "c": 2}, "a": [1, 2, {"z": 1, "y": oops}]}"#.utf8)
        let bySorted = Array(#"{"b": {"c": 2, "d": 1}, "a": [1, 2, {"z": 1, "y": oops}]}"#.utf8)
        for chunk in 1...input.count {
            let shown = Self.shown(input, chunk: chunk, style: .init(indent: 2, sortKeys: true))
            let expected = Self.shown(bySorted, chunk: chunk, style: .init(indent: 2))
            #expect(shown == expected, "chunk \(chunk): \(String(decoding: shown, as: UTF8.self))")
        }
    }

    /// Invalid JSON after records that ended: those show sorted, the unfinished one as it
    /// came (formatted), then the rest exactly as it came, in every chunking.
    @Test func sortKeysShowsRecordsBeforeAnErrorSorted() {
        let input = Array(#"[{"b":1,"a":2},{"d":1,"c":oops}]"#.utf8)
        // What formatting without sorting shows for the input with its first record sorted.
        let bySorted = Array(#"[{"a":2,"b":1},{"d":1,"c":oops}]"#.utf8)
        for chunk in 1...input.count {
            let shown = Self.shown(input, chunk: chunk, style: .init(sortKeys: true))
            let expected = Self.shown(bySorted, chunk: chunk)
            #expect(shown == expected, "chunk \(chunk): \(String(decoding: shown, as: UTF8.self))")
        }
    }

    /// Runs of digits are found eight bytes at a time: every end position, next to every
    /// byte value, matches a byte-by-byte count.
    @Test func numberScanStopsAtTheFirstByteThatIsNotADigit() {
        for length in 1...20 {
            // A dot or an exponent letter continues the number: those are tested elsewhere.
            for stop in 0...255 where stop != Int(UInt8(ascii: ".")) && stop | 0x20 != Int(UInt8(ascii: "e")) {
                var bytes = Array(repeating: UInt8(ascii: "7"), count: length)
                bytes.append(UInt8(stop))
                bytes += Array(repeating: UInt8(ascii: "1"), count: 10)
                let expected = UInt8(stop) &- 48 < 10 ? bytes.count : length
                let (end, valid) = bytes.withUnsafeBytes { JSONScanner.scanNumber($0, from: 0) }
                #expect(end == expected && valid, "length \(length), byte \(stop)")
            }
        }
    }

    /// Objects nested deep around a large value, each with its keys out of order, would have
    /// the value copied once per level (500 levels around 2 MB: a gigabyte of copying):
    /// sorting stops at its budget and says so, and nothing is lost; nested a few levels,
    /// the same document is sorted whole.
    @Test func deepNestingAroundALargeValueStopsSortingAtItsBudget() throws {
        func document(depth: Int) -> [UInt8] {
            Array((String(repeating: #"{"b":1,"a":"#, count: depth) + "\"" + String(repeating: "y", count: 2_000_000) + "\"" + String(repeating: "}", count: depth)).utf8)
        }
        let deep = document(depth: 500)
        let unsorted = try Self.format(deep, chunk: 65_536, style: .init(indent: 1))
        var formatter = JSONFormatter(style: .init(indent: 1, sortKeys: true))
        var out: [UInt8] = []
        var index = 0
        while index < deep.count {
            let end = min(deep.count, index + 65_536)
            try formatter.feed(Array(deep[index..<end]), into: &out)
            index = end
        }
        try formatter.finish(into: &out)
        #expect(formatter.gaveUpSorting && formatter.sortingTooCostly)
        #expect(out.count == unsorted.count && out.sorted() == unsorted.sorted())
        // Five levels: within the budget, sorted as a model would.
        let shallow = document(depth: 5)
        let sorted = try Self.format(shallow, chunk: 65_536, style: .init(indent: 1, sortKeys: true))
        let expected = try Self.format(Array((String(repeating: #"{"a":"#, count: 5) + "\"" + String(repeating: "y", count: 2_000_000) + "\"" + String(repeating: #","b":1}"#, count: 5)).utf8), chunk: 1 << 20, style: .init(indent: 1))
        #expect(sorted == expected)
    }

    /// An object held past the size at which buffers come from the kernel: its buffer is
    /// made as large as the sort limit at once (and not copied as it grows), and the object
    /// still comes out whole and sorted, in the pieces the body printer feeds.
    @Test func aHeldObjectPastTheMappedBufferSizeIsSortedWhole() throws {
        let count = 300_000
        let member = { (index: Int) in "\"k\(String(format: "%07d", index))\":\(index)" }
        let input = Array(("{" + (0..<count).reversed().map(member).joined(separator: ",") + "}").utf8)
        let expected = try Self.format(Array(("{" + (0..<count).map(member).joined(separator: ",") + "}").utf8), chunk: 1 << 20, style: .init(indent: 2))
        #expect(expected.count > LargeAllocation.threshold + (1 << 20))
        let output = try Self.format(input, chunk: 65_536, style: .init(indent: 2, sortKeys: true))
        #expect(output == expected)
    }

    /// Without a size to reserve for, the sorted document's buffer grows from 64 KiB past
    /// the 4 MiB at which buffers are mapped from the kernel (huge pages) instead of taken
    /// from malloc: what was collected before must be copied across intact.
    @Test func sortedDocumentGrowsPastTheMappedBufferSize() throws {
        let body = BuiltinRoutes.largeJSONBody(megabytes: 5)
        #expect(body.count > LargeAllocation.threshold)
        let output = try Self.format(body, chunk: 1 << 16, style: .init(indent: 0, sortKeys: true))
        let sorted = try #require(try JSONValue.parse(output).arrayValue)
        let original = try #require(try JSONValue.parse(body).arrayValue)
        #expect(sorted.count == original.count)
        for index in [0, 1, original.count / 2, original.count - 1] {
            let members = try #require(sorted[index].objectValue)
            let expected = try #require(original[index].objectValue).sorted { $0.0 < $1.0 }
            #expect(members.count == expected.count && zip(members, expected).allSatisfy { $0.0 == $1.0 && $0.1.text == $1.1.text })
        }
    }

    @Test func largeDocumentFromTheServerRoundTrips() throws {
        let body = BuiltinRoutes.largeJSONBody(megabytes: 2)
        let before = try #require(Self.tokens(body))
        let output = try Self.format(body, chunk: 65_536)
        let after = try #require(Self.tokens(output))
        let same = before.count == after.count && zip(before, after).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        #expect(same)
    }
}

@Suite struct MediaTypeCharsetTests {
    @Test func charsetParameter() {
        #expect(MediaType.charset("text/html; charset=ISO-8859-2") == "ISO-8859-2")
        #expect(MediaType.charset("text/html;CHARSET=\"big5\"") == "big5")
        #expect(MediaType.charset("text/html; q=1; charset = utf-8") == "utf-8")
        #expect(MediaType.charset("text/html") == nil)
        #expect(MediaType.charset("text/html; q=1") == nil)
        #expect(MediaType.charset(nil) == nil)
    }
}

@Suite struct TerminalTextTests {
    /// Control characters, DEL and C1 controls become visible escapes; everything else —
    /// including characters whose UTF-8 starts like a C1 control's (U+00A0) — is kept, both
    /// on the quick path for clean text and the byte-by-byte one.
    @Test(arguments: [
        ("plain text", "plain text"),
        ("tab\tand\nline", "tab\tand\nline"),
        ("\u{1B}[31mred", "\\x1B[31mred"),
        ("del\u{7F}", "del\\x7F"),
        ("nel\u{85}csi\u{9B}", "nel\\x85csi\\x9B"),
        ("nbsp\u{A0}é€", "nbsp\u{A0}é€"),
        ("cr\r\n", "cr\\x0D\n"),
        ("\u{0}\u{1}\u{1F}", "\\x00\\x01\\x1F"),
        ("Â\u{80}\u{9F}\u{C2}\u{85}end", "Â\\x80\\x9FÂ\\x85end"),
    ])
    func escapesWhatATerminalWouldObey(text: String, shown: String) {
        #expect(TerminalText.escaped(text) == shown)
    }

    /// With a highlight, each escape (and only the escape) is painted and reset.
    @Test func paintsEachEscapeInTheHighlight() {
        let red = "\u{1B}[31m"
        #expect(TerminalText.escaped("a\u{7}b\u{9B}", highlight: red) == "a\(red)\\x07\(Theme.reset)b\(red)\\x9B\(Theme.reset)")
    }
}
