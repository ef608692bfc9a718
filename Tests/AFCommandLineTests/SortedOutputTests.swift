@testable import AFCommandLine
import AFEngine
import AFInProcess
import AFTestSupport
import Testing

/// `--sort-keys` on a document whose formatted output is many times the flush size: the
/// output goes out in pieces and must still be the whole document, every token kept.
@Suite struct SortedOutputTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
    }

    /// One object of several megabytes, sorted through the body printer: its rewritten text
    /// goes out a megabyte at a time, and is exactly what the model says.
    @Test func aLargeObjectIsWrittenSortedInPieces() throws {
        let body = SortedKeysModelTests.largeObject(members: 8_000)
        server.route("/large-object") { _, _ in .response(status: 200, headers: [("Content-Type", "application/json")], body: body) }
        let result = InProcessAF.run(["--pretty=format", "--sort-keys", server.url("/large-object")])
        #expect(result.status == 0, "\(result.err)")
        let expected = try SortedKeysModelTests.expected(body, style: .init(indent: 4))
        #expect(result.stdout.count > 2 * KeySorter.flushSize)
        #expect(Array(result.stdout) == expected, "\(result.stdout.count) bytes against \(expected.count)")
    }

    /// Sorting that stops at its budget (objects nested deep around a large value) says why,
    /// and shows the whole body.
    @Test func sortingThatWouldCostTooMuchSaysSo() {
        let depth = 500
        let body = Array((String(repeating: #"{"b":1,"a":"#, count: depth) + "\"" + String(repeating: "y", count: 2_000_000) + "\"" + String(repeating: "}", count: depth)).utf8)
        server.route("/deep-around-large") { _, _ in .response(status: 200, headers: [("Content-Type", "application/json")], body: body) }
        let result = InProcessAF.run(["--pretty=format", "--sort-keys", server.url("/deep-around-large")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.err.contains("warning: the JSON body nests objects too deep around large values for --sort-keys"), "\(result.err)")
        #expect(result.stdout.filter { $0 == UInt8(ascii: "y") }.count == 2_000_000)
    }

    @Test func aLargeSortedDocumentArrivesWholeAndSorted() throws {
        let result = InProcessAF.run(["--pretty=format", "--sort-keys", server.url("/large-json?mb=2")])
        #expect(result.status == 0, "\(result.err)")
        #expect(result.stdout.count > 3 << 20)
        let value = try JSONValue.parse(result.stdout)
        let items = try #require(value.arrayValue)
        let original = try #require(try JSONValue.parse(BuiltinRoutes.largeJSONBody(megabytes: 2)).arrayValue)
        #expect(items.count == original.count)
        for (sorted, unsorted) in zip(items, original) {
            let members = try #require(sorted.objectValue)
            #expect(members.map(\.0) == members.map(\.0).sorted(), "keys are sorted")
            let expected = try #require(unsorted.objectValue).sorted { $0.0 < $1.0 }
            #expect(members.count == expected.count && zip(members, expected).allSatisfy { $0.0 == $1.0 && $0.1.text == $1.1.text })
        }
    }
}
