internal import CZlib
#if canImport(Glibc)
import Glibc
#endif

/// zlib-format deflate for request bodies, in memory or streamed to a temporary file.
enum Deflate {
    /// Compresses a body. Small in-memory bodies stay in memory; anything else is streamed
    /// through zlib into a temporary file in `directory`, so memory stays flat.
    static func compress(_ body: RequestBody, temporaryDirectory directory: String) throws(AFError) -> (body: RequestBody, size: Int64, temporaryFile: String?) {
        var stream = z_stream()
        guard deflateInit_(&stream, Z_DEFAULT_COMPRESSION, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .output(OutputFailure(kind: .writeFailed, message: "zlib could not start compressing the body"))
        }
        defer { deflateEnd(&stream) }
        if case .bytes(let bytes) = body, bytes.count <= 8 << 20 {
            var output: [UInt8] = []
            var input = bytes
            try input.withMutableBytes { raw throws(AFError) in
                try run(&stream, input: raw, finish: true) { output.append(contentsOf: $0) }
            }
            return (.bytes(output), Int64(output.count), nil)
        }
        let (fd, path) = try FileIO.makeTemporaryFile(in: directory, prefix: "af-deflate").mapError { failure in
            AFError.output(OutputFailure(kind: .writeFailed, message: "cannot create a temporary file in '\(MessageQuote.capped(directory))' to compress the body: \(failure.description)"))
        }.get()
        defer { close(fd) }
        let file = CompressedFile(fd: fd, path: path)
        do throws(AFError) {
            let reader = try BodyReader(body: body)
            var buffer = [UInt8](repeating: 0, count: 256 * 1024)
            while true {
                let count = try buffer.withMutableBytes { raw throws(AFError) in try reader.read(into: raw) }
                try buffer.withMutableBytes { raw throws(AFError) in
                    try run(&stream, input: UnsafeMutableRawBufferPointer(rebasing: raw[0..<count]), finish: count == 0, output: file.save)
                }
                if count == 0 { break }
            }
        } catch {
            unlink(path)
            throw error
        }
        return (.file(path: path), file.size, path)
    }

    private static func run(
        _ stream: inout z_stream,
        input: UnsafeMutableRawBufferPointer,
        finish: Bool,
        output: (UnsafeRawBufferPointer) throws(AFError) -> Void
    ) throws(AFError) {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        stream.next_in = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        stream.avail_in = UInt32(input.count)
        while true {
            let (status, produced) = chunk.withUnsafeMutableBufferPointer { buffer -> (Int32, Int) in
                stream.next_out = buffer.baseAddress
                stream.avail_out = UInt32(buffer.count)
                let status = deflate(&stream, finish ? Z_FINISH : Z_NO_FLUSH)
                return (status, buffer.count - Int(stream.avail_out))
            }
            if produced > 0 {
                try Array(chunk[0..<produced]).withBytes { raw throws(AFError) in try output(raw) }
            }
            if status == Z_STREAM_END { return }
            guard status == Z_OK || status == Z_BUF_ERROR else { throw .output(OutputFailure(kind: .writeFailed, message: "zlib failed to compress the body (\(status))")) }
            if !finish && stream.avail_in == 0 { return }
        }
    }
}

/// The temporary file a streamed body is deflated into, and how much of it is written. An
/// object, so that `save`, handed to the compressor, captures no variable to hand on inout
/// (the room it keeps): closures that did so faulted in ThreadSanitizer's instrumentation in
/// Swift 6.3.1 (see `ReportBodyWriter`).
private final class CompressedFile {
    let fd: Int32
    let path: String
    private(set) var size: Int64 = 0
    private var room = TemporaryRoom()

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    func save(_ chunk: UnsafeRawBufferPointer) throws(AFError) {
        let code = FileIO.writeAll(fd, chunk, keeping: &room)
        guard code == 0 else {
            throw .output(OutputFailure(kind: .writeFailed, message: "cannot write the compressed body to \(path): \(POSIXFailure(code: code).description)"))
        }
        size += Int64(chunk.count)
    }
}
