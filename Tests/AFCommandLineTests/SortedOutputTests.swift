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
