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
