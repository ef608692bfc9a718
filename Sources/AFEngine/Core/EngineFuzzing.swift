internal import CZlib
/// Entry points into engine parsers that are not public, for the fuzz targets
/// (`FuzzTargets` in the command line). Each must return without trapping for any input.
package enum EngineFuzzing {
    /// The names a certificate in DER is for, as an error about another host lists them
    /// (a server chooses every byte of its certificate).
    package static func subjectAltNames(_ der: [UInt8]) -> [String] {
        Certificates.subjectAltNames(der: der)
    }

    /// Feeds `data`, split into lines, to a response head parser with a limit taken from the
    /// first byte (0 means none).
    package static func responseHead(_ data: [UInt8]) {
        var parser = ResponseHeadParser()
        parser.maxHeaders = data.first.map { Int($0) } ?? 100
        var start = data.isEmpty ? 0 : 1
        var index = start
        while index <= data.count {
            if index == data.count || data[index] == 10 {
                let end = min(index + 1, data.count)
                let line = Array(data[start..<end])
                let step = line.withUnsafeBytes { parser.consume($0) }
                switch step {
                case .failure: return
                case .complete(let head):
                    precondition(head.informational.count <= ResponseHead.keptInformational, "at most keptInformational interim heads")
                    precondition(head.informational.allSatisfy { (100..<200).contains($0.status) && $0.status != 101 }, "only 1xx heads are informational")
                case .informational(let head):
                    precondition((100..<200).contains(head.status) && head.status != 101, "only 1xx heads are informational")
                case .needMore: break
                }
                start = end
            }
            index += 1
        }
    }

    /// af's own gzip and deflate decoder (`InflateDecoder`). The first byte picks the coding,
    /// the form of deflate and the size of the pieces the rest arrives in. The rest is decoded
    /// as it stands (never a trap); then zlib compresses it and the decoder must give it back
    /// exactly, with the data ended, and not ended when the last compressed byte is missing.
    package static func inflate(_ data: [UInt8]) {
        guard let first = data.first else { return }
        let coding: InflateDecoder.Coding = first & 1 == 0 ? .gzip : .deflate
        let piece = Int(first >> 2) + 1
        let payload = Array(data.dropFirst())
        if let decoder = InflateDecoder(coding) { _ = decode(payload, with: decoder, in: piece) }
        let windowBits: Int32 = coding == .gzip ? 31 : (first & 2 == 0 ? 15 : -15)
        let compressed = compress(payload, windowBits: windowBits, level: Int32(first % 10))
        guard !compressed.isEmpty, let decoder = InflateDecoder(coding), let cut = InflateDecoder(coding) else { return }
        let output = decode(compressed, with: decoder, in: piece)
        precondition(output == payload && decoder.ended, "\(coding.name) round trip of \(payload.count) bytes")
        _ = decode(Array(compressed.dropLast()), with: cut, in: piece)
        precondition(!cut.ended, "\(coding.name) data less its last byte passed as ended")
    }

    /// What `decoder` gives for `bytes` arriving `piece` bytes at a time; nil when it fails.
    private static func decode(_ bytes: [UInt8], with decoder: InflateDecoder, in piece: Int) -> [UInt8]? {
        var output: [UInt8] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + piece, bytes.count)
            let ok = bytes[offset..<end].withUnsafeBytes { chunk in
                (try? decoder.decode(chunk) { output.append(contentsOf: $0); return true }) != nil
            }
            guard ok else { return nil }
            offset = end
        }
        return output
    }

    /// `bytes` compressed by zlib with `windowBits` (15 zlib, 31 gzip, -15 raw deflate).
    private static func compress(_ bytes: [UInt8], windowBits: Int32, level: Int32) -> [UInt8] {
        var stream = z_stream()
        guard afz_deflate_init2(&stream, level, windowBits) == Z_OK else { return [] }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(bytes.count))) + 64)
        var input = bytes
        let produced = input.withUnsafeMutableBufferPointer { source -> Int in
            output.withUnsafeMutableBufferPointer { target -> Int in
                stream.next_in = source.baseAddress
                stream.avail_in = UInt32(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = UInt32(target.count)
                return deflate(&stream, Z_FINISH) == Z_STREAM_END ? target.count - Int(stream.avail_out) : 0
            }
        }
        return Array(output.prefix(produced))
    }
}
