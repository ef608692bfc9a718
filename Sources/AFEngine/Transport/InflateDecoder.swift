internal import CZlib

/// Decodes a `Content-Encoding: gzip` or `deflate` body itself, so that af knows what libcurl
/// does not tell: whether the compressed stream really ended. libcurl accepts a body that
/// stops short (on a connection closed to end the body, with a lying `Content-Length`, or a
/// chunked body whose data the server cut) as complete; here that is a truncated body.
/// Several gzip members one after another (RFC 1952 allows it) decode as one body; anything
/// else after the end of the data is malformed, as libcurl has it too.
///
/// `deflate` is zlib-wrapped deflate (RFC 1950) as the standard says, or raw deflate, which
/// some servers send instead and which libcurl accepts: the first two bytes decide.
///
/// Confined to the transfer driver's thread, like its transfer.
final class InflateDecoder {
    enum Coding {
        case gzip, deflate

        /// The coding's name, for messages.
        var name: String { self == .gzip ? "gzip" : "deflate" }
    }

    enum Failure: Error {
        case corrupt(String)
        case garbageAfterEnd
    }

    let coding: Coding
    private var stream = z_stream()
    private var initialized = false
    /// No byte has been inflated yet: a deflate body's form is still open.
    private var atStart = true
    /// The data ended (for gzip: the last member so far) and no byte of more has arrived.
    private(set) var ended = false
    private var output = [UInt8](repeating: 0, count: 64 * 1024)

    init?(_ coding: Coding) {
        self.coding = coding
        let status = coding == .gzip ? afz_inflate_init_gzip(&stream) : afz_inflate_init(&stream)
        guard status == Z_OK else { return nil }
        initialized = true
    }

    deinit {
        if initialized { inflateEnd(&stream) }
    }

    /// Whether `bytes` can start a gzip member (magic 1f 8b, method 8).
    static func startsMember(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count < 3 ? bytes.elementsEqual([0x1F, 0x8B, 0x08].prefix(bytes.count)) : (bytes[0] == 0x1F && bytes[1] == 0x8B && bytes[2] == 0x08)
    }

    /// Whether `bytes` start with a zlib header (RFC 1950: method 8, a window of at most
    /// 32 KiB, and the check bits); raw deflate is read otherwise.
    static func startsZlibStream(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let first = bytes.first, first & 0x0F == 8, first >> 4 <= 7 else { return false }
        return bytes.count < 2 || (Int(first) << 8 | Int(bytes[1])) % 31 == 0
    }

    /// Inflates `input`, handing decoded bytes to `deliver` (false from it stops at once).
    func decode(_ input: UnsafeRawBufferPointer, deliver: (UnsafeRawBufferPointer) -> Bool) throws(Failure) -> Bool {
        guard let base = input.baseAddress, input.count > 0 else { return true }
        if atStart {
            atStart = false
            if coding == .deflate, !Self.startsZlibStream(input) {
                inflateEnd(&stream)
                initialized = afz_inflate_init_raw(&stream) == Z_OK
                guard initialized else { throw .corrupt("zlib could not start") }
            }
        }
        var offset = 0
        while offset < input.count {
            if ended {
                guard coding == .gzip, Self.startsMember(UnsafeRawBufferPointer(rebasing: input[offset...])) else { throw .garbageAfterEnd }
                inflateReset(&stream)
                ended = false
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
            if status == Z_STREAM_END { ended = true }
            if status == Z_BUF_ERROR { break }
        }
        return true
    }
}
