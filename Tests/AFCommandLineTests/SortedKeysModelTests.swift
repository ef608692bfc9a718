@testable import AFCommandLine
import AFEngine
import AFTestSupport
import Testing

/// `--sort-keys` against a model: the document as a tree of its tokens, each object's
/// members reordered stably by their keys' resolved text, written compactly and formatted
/// without sorting. The formatter must write exactly that, byte for byte, for random
/// documents (nested objects and arrays, duplicate keys, keys with escapes, shared prefixes
/// longer than eight bytes, whitespace) fed in random pieces, in several styles.
@Suite struct SortedKeysModelTests {
    /// A value of the model: scalars keep their token's bytes.
    indirect enum Node {
        case scalar([UInt8])
        case array([Node])
        case object([(key: [UInt8], value: Node)])
    }

    typealias Generator = SeededGenerator

    static let keys = [#""a""#, #""b""#, #""ab""#, #""""#, #""A""#, #""\u0041""#, #""a!""#, "\"\u{e9}\"", #""\u00e9""#,
                       #""abcdefghij1""#, #""abcdefghij2""#, #""abcdefgh""#, #""abcdefghi""#, #""\n""#, #""z\"q""#, #""id""#]
    static let scalars = ["1", "-0.5e3", "true", "false", "null", #""s""#, #""caf\u00e9""#, #""""#, "12345678901234567890"]

    static func document(_ random: inout Generator, depth: Int) -> String {
        let pick = depth >= 4 ? 0 : random.below(10)
        let space = [" ", "", "\n  ", ""][random.below(4)]
        switch pick {
        case 0...3:
            return scalars[random.below(scalars.count)]
        case 4...5:
            let count = random.below(5)
            return "[" + (0..<count).map { _ in space + document(&random, depth: depth + 1) }.joined(separator: ",") + space + "]"
        default:
            // Now and then more members than an insertion sort takes.
            let count = random.below(12) == 0 ? 35 + random.below(10) : random.below(7)
            let members = (0..<count).map { _ in space + keys[random.below(keys.count)] + space + ":" + document(&random, depth: depth + 1) }
            return "{" + members.joined(separator: ",") + space + "}"
        }
    }

    static func tokens(_ bytes: [UInt8]) throws -> [(kind: JSONTokenKind, bytes: [UInt8], isKey: Bool)] {
        var scanner = JSONScanner()
        var sink = CollectingSink()
        try scanner.feed(bytes, into: &sink)
        try scanner.finish(into: &sink)
        return sink.tokens.filter { $0.kind != .comma && $0.kind != .colon }
    }

    static func parse(_ tokens: [(kind: JSONTokenKind, bytes: [UInt8], isKey: Bool)], _ index: inout Int) -> Node {
        let token = tokens[index]
        index += 1
        switch token.kind {
        case .beginArray:
            var items: [Node] = []
            while tokens[index].kind != .endArray { items.append(parse(tokens, &index)) }
            index += 1
            return .array(items)
        case .beginObject:
            var members: [(key: [UInt8], value: Node)] = []
            while tokens[index].kind != .endObject {
                let key = tokens[index].bytes
                index += 1
                members.append((key, parse(tokens, &index)))
            }
            index += 1
            return .object(members)
        default:
            return .scalar(token.bytes)
        }
    }

    static func sorted(_ node: Node) -> Node {
        switch node {
        case .scalar: return node
        case .array(let items): return .array(items.map(sorted))
        case .object(let members):
            let resolved = members.enumerated().map { offset, member in
                (offset, member.key.dropFirst().dropLast().withUnsafeBytes { JSONStringText.unescaped($0) }, member)
            }
            let ordered = resolved.sorted { lhs, rhs in
                lhs.1 == rhs.1 ? lhs.0 < rhs.0 : lhs.1.lexicographicallyPrecedes(rhs.1)
            }
            return .object(ordered.map { ($0.2.key, sorted($0.2.value)) })
        }
    }

    static func compact(_ node: Node) -> [UInt8] {
        switch node {
        case .scalar(let bytes): return bytes
        case .array(let items): return Array("[".utf8) + Array(items.map(compact).joined(separator: Array(",".utf8))) + Array("]".utf8)
        case .object(let members):
            let parts = members.map { $0.key + Array(":".utf8) + compact($0.value) }
            return Array("{".utf8) + Array(parts.joined(separator: Array(",".utf8))) + Array("}".utf8)
        }
    }

    /// The model's output for `input` formatted in `style` (without sorting).
    static func expected(_ input: [UInt8], style: JSONFormatter.Style) throws -> [UInt8] {
        var index = 0
        let model = compact(sorted(parse(try tokens(input), &index)))
        return try JSONFormatterTests.format(model, chunk: model.count, style: style)
    }

    /// An object whose formatted text is many megabytes: rewritten a megabyte at a time
    /// into the output (after everything before it) instead of whole in memory, with its
    /// members' objects rewritten inside the pieces, in every style.
    static func largeObject(members: Int) -> [UInt8] {
        var random = Generator(seed: 0x0B1EC7)
        let parts = (0..<members).map { index in
            "\"k\(members - index)\":" + document(&random, depth: 2) + ",\"z\(index % 7)\":{\"b\":[1,{\"y\":2,\"x\":3}],\"a\":null}"
        }
        return Array(("{" + parts.joined(separator: ",") + "}").utf8)
    }

    @Test func aLargeObjectIsRewrittenInPiecesAsTheModelSays() throws {
        let input = Self.largeObject(members: 8_000)
        for (style, chunks) in [(JSONFormatter.Style(indent: 4), [65_536, input.count]), (.init(indent: 2, theme: .monokai), [65_536])] {
            var sorting = style
            sorting.sortKeys = true
            let expected = try Self.expected(input, style: style)
            #expect(expected.count > 2 * KeySorter.flushSize)
            for chunk in chunks {
                let output = try JSONFormatterTests.format(input, chunk: chunk, style: sorting)
                #expect(output == expected, "chunk \(chunk), indent \(style.indent)")
            }
        }
    }

    @Test func sortedOutputIsTheModelsFormattedByteForByte() throws {
        var random = Generator(seed: 0x5EED)
        let styles: [JSONFormatter.Style] = [.init(indent: 4), .init(indent: 0), .init(indent: 1, theme: .monokai), .init(indent: 2, decodesEscapes: true)]
        for round in 0..<400 {
            // An object, or records in an array (each sorted as it ends).
            let text = round % 3 == 0 ? "[" + (0..<4).map { _ in Self.document(&random, depth: 1) }.joined(separator: ",") + "]" : "{\"r\":" + Self.document(&random, depth: 1) + ",\"a\":[]}"
            let input = Array(text.utf8)
            var index = 0
            let model = Self.compact(Self.sorted(Self.parse(try Self.tokens(input), &index)))
            for style in styles {
                var sorting = style
                sorting.sortKeys = true
                let expected = try JSONFormatterTests.format(model, chunk: model.count, style: style)
                let chunk = 1 + random.below(max(1, input.count / 2))
                let output = try JSONFormatterTests.format(input, chunk: chunk, style: sorting)
                #expect(output == expected, "round \(round), chunk \(chunk), indent \(style.indent): \(text)")
            }
        }
    }
}
