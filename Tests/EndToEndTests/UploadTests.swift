import AFTestSupport
import Foundation
import Testing

/// Large request bodies go out whole and unchanged, however af reads and sends them: a body
/// past a megabyte is read and sent in blocks sized to the CPU's cache (up to 512 KiB), not
/// libcurl's 64 KiB.
@Suite struct UploadTests {
    let server: TestServer
    let directory: String
    /// Not a multiple of any block size, so the last block is a short one.
    static let size = 3 << 20 + 12_345

    init() throws {
        server = try TestServer()
        directory = try TemporaryDirectory.make(prefix: "af-upload")
        server.route("/upload") { _, _ in .response(status: 204) }
    }

    private func writeBody() throws -> (path: String, bytes: [UInt8]) {
        let bytes = TestData.bytes(count: Self.size)
        let path = directory + "/body.bin"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return (path, bytes)
    }

    @Test func aLargeFileBodyArrivesWhole() throws {
        let (path, bytes) = try writeBody()
        let result = AF.run(["-q", "post", server.url("/upload"), "@\(path)"])
        #expect(result.status == 0, "\(result.err)")
        let received = try #require(server.requests(to: "/upload").last)
        #expect(received.header("Content-Length") == "\(Self.size)")
        #expect(received.body.count == Self.size)
        #expect(received.body == bytes)
    }

    @Test func aLargeMultipartFileArrivesWhole() throws {
        let (path, bytes) = try writeBody()
        let result = AF.run(["-q", "post", server.url("/upload"), "note=hi", "file@\(path)"])
        #expect(result.status == 0, "\(result.err)")
        let received = try #require(server.requests(to: "/upload").last)
        #expect(received.header("Content-Length") == "\(received.body.count)")
        // The file's part: its head, then the file's bytes exactly, then the closing boundary.
        let head = Array("filename=\"body.bin\"".utf8)
        let named = try #require(received.body.firstRange(of: head))
        let separator = Array("\r\n\r\n".utf8)
        let start = try #require(received.body[named.upperBound...].firstRange(of: separator)).upperBound
        #expect(Array(received.body[start..<(start + Self.size)]) == bytes)
        #expect(received.body[(start + Self.size)...].starts(with: Array("\r\n--".utf8)))
    }

    @Test func aLargeChunkedBodyArrivesWhole() throws {
        let (path, bytes) = try writeBody()
        let result = AF.run(["-q", "--chunked", "post", server.url("/upload"), "@\(path)"])
        #expect(result.status == 0, "\(result.err)")
        let received = try #require(server.requests(to: "/upload").last)
        #expect(received.header("Transfer-Encoding") == "chunked")
        #expect(received.body == bytes)
    }

    @Test func aLargePipedBodyArrivesWhole() {
        let bytes = TestData.bytes(count: Self.size)
        let result = AF.run(["-q", "post", server.url("/upload")], stdin: .bytes(bytes))
        #expect(result.status == 0, "\(result.err)")
        #expect(server.requests(to: "/upload").last?.body == bytes)
    }
}
