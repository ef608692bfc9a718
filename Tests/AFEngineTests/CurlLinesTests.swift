@testable import AFEngine
import CCurl
import Testing

/// The header lists handed to libcurl, laid out in one block by `CurlLines`.
@Suite struct CurlLinesTests {
    /// The texts of a list, walked as libcurl walks it.
    private func texts(_ block: UnsafeMutableRawPointer) -> [String] {
        var texts: [String] = []
        var node: UnsafeMutablePointer<curl_slist>? = block.assumingMemoryBound(to: curl_slist.self)
        while let current = node {
            texts.append(String(cString: current.pointee.data))
            node = current.pointee.next
        }
        return texts
    }

    @Test func linesKeepTheirOrderAndPieces() throws {
        var lines = CurlLines()
        lines.append("Expect:")
        lines.append("X-Long", ": ", String(repeating: "v", count: 2_000))
        lines.append("X-Empty", ";", "")
        let block = try #require(lines.makeList())
        defer { block.deallocate() }
        #expect(texts(block) == ["Expect:", "X-Long: " + String(repeating: "v", count: 2_000), "X-Empty;"])
    }

    /// A NUL inside a line ends the text libcurl reads there, as it did when each line was
    /// copied by `curl_slist_append`; it never starts another line (header values with NUL
    /// are refused before they get here, but lists of other options are not checked so).
    @Test func aNulInsideALineDoesNotSplitIt() throws {
        var lines = CurlLines()
        lines.append("a\u{0}b:1")
        lines.append("c")
        let block = try #require(lines.makeList())
        defer { block.deallocate() }
        #expect(texts(block) == ["a", "c"])
    }

    @Test func noLinesMakeNoList() {
        #expect(CurlLines().makeList() == nil)
    }
}
