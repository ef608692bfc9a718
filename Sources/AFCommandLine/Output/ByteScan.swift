extension UnsafeRawBufferPointer {
    /// Whether every byte is below `limit` (0x80: ASCII; 0x7F: ASCII without DEL), eight
    /// bytes at a time, the last word overlapping the one before; fewer than eight in two
    /// overlapping halves. A byte at or above the limit has its top bit set, or gets it when
    /// `0x80 - limit` is added (a carry out of a byte needs one whose top bit is set anyway).
    @inline(__always)
    func allBytes(below limit: UInt8) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let lift = ones &* UInt64(0x80 &- limit)
        @inline(__always) func flags(_ word: UInt64) -> UInt64 { word | (word &+ lift) }
        var seen: UInt64
        if count >= 8 {
            seen = flags(loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
            var index = 0
            while index + 8 < count {
                seen |= flags(loadUnaligned(fromByteOffset: index, as: UInt64.self))
                index += 8
            }
        } else if count >= 4 {
            let low = UInt64(loadUnaligned(fromByteOffset: 0, as: UInt32.self))
            let high = UInt64(loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
            seen = flags(low | high << 32)
        } else {
            var index = 0
            while index < count {
                if self[index] >= limit { return false }
                index += 1
            }
            return true
        }
        return seen & (ones &* 0x80) == 0
    }
}

extension Collection<UInt8> {
    /// Whether every byte is ASCII: a word at a time (`allBytes(below:)`) where the bytes are
    /// contiguous, as a native string's UTF-8 is.
    var isAllASCII: Bool {
        withContiguousStorageIfAvailable { UnsafeRawBufferPointer($0).allBytes(below: 0x80) } ?? allSatisfy { $0 < 0x80 }
    }
}
