internal import CZlib

/// Decodes a `Content-Encoding: gzip` body itself, so that af knows what libcurl does not
/// tell: whether the gzip stream really ended. libcurl accepts a gzip body that stops short
/// (on a connection closed to end the body, or with a lying `Content-Length`) as complete;
/// here that is a truncated body. Several gzip members one after another (RFC 1952 allows
/// it) decode as one body; anything else after the last member is malformed.
///
/// Confined to the transfer driver's thread, like its transfer.
final class GzipDecoder {
    enum Failure: Error {
        case corrupt(String)
        case garbageAfterEnd
    }

    private var stream = z_stream()
    private var initialized = false
    /// Between members: the last member ended and no byte of another has arrived.
    private(set) var atMemberBoundary = false
    private var output = [UInt8](repeating: 0, count: 64 * 1024)

    init?() {
        guard afz_inflate_init_gzip(&stream) == Z_OK else { return nil }
        initialized = true
    }

    deinit {
        if initialized { inflateEnd(&stream) }
    }

    /// Whether `bytes` can start a gzip member (magic 1f 8b, method 8).
    static func startsMember(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count < 3 ? bytes.elementsEqual([0x1F, 0x8B, 0x08].prefix(bytes.count)) : (bytes[0] == 0x1F && bytes[1] == 0x8B && bytes[2] == 0x08)
    }

    /// Inflates `input`, handing decoded bytes to `deliver` (false from it stops at once).
    func decode(_ input: UnsafeRawBufferPointer, deliver: (UnsafeRawBufferPointer) -> Bool) throws(Failure) -> Bool {
        guard let base = input.baseAddress, input.count > 0 else { return true }
        var offset = 0
        while offset < input.count {
            if atMemberBoundary {
                guard Self.startsMember(UnsafeRawBufferPointer(rebasing: input[offset...])) else { throw .garbageAfterEnd }
                inflateReset(&stream)
                atMemberBoundary = false
            }
            stream.next_in = UnsafeMutablePointer(mutating: (base + offset).assumingMemoryBound(to: UInt8.self))
            stream.avail_in = UInt32(min(input.count - offset, Int(UInt32.max)))
            let before = Int(stream.avail_in)
            var status: Int32 = Z_OK
            repeat {
                let produced: Int
                (status, produced) = output.withUnsafeMutableBufferPointer { buffer -> (Int32, Int) in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = UInt32(buffer.count)
                    let status = inflate(&stream, Z_NO_FLUSH)
                    return (status, buffer.count - Int(stream.avail_out))
                }
                if produced > 0 {
                    let keepGoing = output.withUnsafeBytes { deliver(UnsafeRawBufferPointer(rebasing: $0[0..<produced])) }
                    if !keepGoing { return false }
                }
                guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                    let reason = stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                    throw .corrupt(reason)
                }
            } while status == Z_OK && (stream.avail_in > 0 || stream.avail_out == 0)
            offset += before - Int(stream.avail_in)
            if status == Z_STREAM_END { atMemberBoundary = true }
            if status == Z_BUF_ERROR { break }
        }
        return true
    }
}
