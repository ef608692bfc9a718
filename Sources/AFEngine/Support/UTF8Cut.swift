/// Text in UTF-8 cut at an arbitrary byte, as chunks from the network are.
package enum UTF8Cut {
    /// How many leading bytes of `bytes` are whole: all of them, unless the end cuts a
    /// multi-byte sequence, which then starts where the count stops. Only a byte that can
    /// lead a sequence (C2–F4) starts one the end may have cut: an F8 or FF at the end is no
    /// UTF-8 at all (held back as the start of one, a Latin-1 body was taken for UTF-8).
    package static func wholeLength(_ bytes: UnsafeRawBufferPointer) -> Int {
        var back = 0
        while back < min(3, bytes.count), bytes[bytes.count - 1 - back] & 0xC0 == 0x80 { back += 1 }
        guard back < bytes.count else { return bytes.count }
        let lead = bytes[bytes.count - 1 - back]
        let needed = lead > 0xF4 ? 0 : lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC2 ? 1 : 0
        return needed > back ? bytes.count - 1 - back : bytes.count
    }
}
