extension StringProtocol {
    /// The byte offset of the first occurrence of `needle` in the UTF-8 bytes, compared
    /// byte for byte (no Unicode normalisation): for ASCII markers such as `://`, where the
    /// standard library's grapheme-aware search is far slower than needed.
    package func utf8Offset(of needle: String) -> Int? {
        let pattern = Array(needle.utf8)
        guard let first = pattern.first else { return 0 }
        let bytes = Array(utf8)
        guard bytes.count >= pattern.count else { return nil }
        var index = 0
        let last = bytes.count - pattern.count
        while index <= last {
            if bytes[index] == first, bytes[index..<(index + pattern.count)].elementsEqual(pattern) { return index }
            index += 1
        }
        return nil
    }

    /// Whether the UTF-8 bytes contain `needle`'s bytes (see `utf8Offset(of:)`).
    package func containsBytes(of needle: String) -> Bool {
        utf8Offset(of: needle) != nil
    }
}
