#if canImport(Glibc)
import Glibc
#endif

extension Collection where Element == UInt8 {
    /// A URL's authority, from the bytes after its `scheme://`: up to the first `/`, `?` or `#`.
    package var urlAuthority: SubSequence {
        prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
    }
}

extension UInt8 {
    /// A letter, digit, `+`, `.` or `-`: what a URL scheme is made of.
    package var isURLSchemeByte: Bool {
        switch self {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}

extension StringProtocol {
    /// The byte offset of the first occurrence of `needle` in the UTF-8 bytes, compared
    /// byte for byte (no Unicode normalisation): for ASCII markers such as `://`, where the
    /// standard library's grapheme-aware search is far slower than needed.
    package func utf8Offset(of needle: String) -> Int? {
        // In place where both are contiguous (native strings), else through copies.
        let direct: Int?? = utf8.withContiguousStorageIfAvailable { bytes -> Int?? in
            needle.utf8.withContiguousStorageIfAvailable { pattern in utf8Offset(of: pattern, in: bytes) }
        } ?? nil
        if let direct { return direct }
        return Array(utf8).withUnsafeBufferPointer { bytes in
            Array(needle.utf8).withUnsafeBufferPointer { pattern in utf8Offset(of: pattern, in: bytes) }
        }
    }

    private func utf8Offset(of pattern: UnsafeBufferPointer<UInt8>, in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let first = pattern.first else { return 0 }
        guard bytes.count >= pattern.count else { return nil }
        var index = 0
        let last = bytes.count - pattern.count
        while index <= last {
            if bytes[index] == first, UnsafeBufferPointer(rebasing: bytes[index..<(index + pattern.count)]).elementsEqual(pattern) { return index }
            index += 1
        }
        return nil
    }

    /// Whether the UTF-8 bytes contain `byte`, looked for in place with `memchr` where the
    /// bytes are contiguous (the generic `utf8.contains` steps through an iterator byte by
    /// byte).
    package func containsByte(_ byte: UInt8) -> Bool {
        utf8.withContiguousStorageIfAvailable { bytes in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, Int32(byte), bytes.count) != nil
        } ?? utf8.contains(byte)
    }

    /// Whether the UTF-8 bytes contain `needle`'s bytes (see `utf8Offset(of:)`).
    package func containsBytes(of needle: String) -> Bool {
        utf8Offset(of: needle) != nil
    }

    /// The byte offsets of `pattern`'s occurrences in the UTF-8 bytes, found left to right and
    /// not overlapping (as `ranges(of:)` counts them). None for an empty pattern.
    fileprivate func byteOccurrences(of pattern: [UInt8]) -> [Int] {
        guard let first = pattern.first, containsByte(first) else { return [] }
        let bytes = Array(utf8)
        var found: [Int] = []
        var index = 0
        while bytes.count - index >= pattern.count {
            if bytes[index] == first, bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
                found.append(index)
                index += pattern.count
            } else {
                index += 1
            }
        }
        return found
    }

    /// The string with each occurrence of `target`'s UTF-8 bytes, left to right and not
    /// overlapping, replaced by `replacement`. Compared byte for byte: a match of whole UTF-8
    /// sequences starts and ends on scalar boundaries, so the result is valid text. (The
    /// standard library's `replacing(_:with:)` compares characters and lives in the
    /// `_StringProcessing` module, which the release build leaves out: Build/link-flags.)
    package func replacingBytes(of target: String, with replacement: String) -> String {
        let pattern = Array(target.utf8)
        let found = byteOccurrences(of: pattern)
        guard !found.isEmpty else { return String(self) }
        let bytes = Array(utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + found.count * Swift.max(0, replacement.utf8.count - pattern.count))
        var copied = 0
        for start in found {
            result.append(contentsOf: bytes[copied..<start])
            result.append(contentsOf: replacement.utf8)
            copied = start + pattern.count
        }
        result.append(contentsOf: bytes[copied...])
        return String(decoding: result, as: UTF8.self)
    }

    /// `split(separator:maxSplits:omittingEmptySubsequences:)` for an ASCII separator,
    /// found as a byte: a `Character` split walks grapheme clusters, which is most of the
    /// cost of taking a header value apart. An ASCII byte is a whole scalar and a whole
    /// character after it starts, so the pieces are the same.
    package func split(byte separator: UInt8, maxSplits: Int = .max, omittingEmptySubsequences: Bool = true) -> [Substring] {
        let whole = Substring(self)
        let bytes = whole.utf8
        var pieces: [Substring] = []
        var start = bytes.startIndex
        var index = start
        while index < bytes.endIndex, pieces.count < maxSplits {
            if bytes[index] == separator {
                if !omittingEmptySubsequences || index > start { pieces.append(whole[start..<index]) }
                start = bytes.index(after: index)
            }
            bytes.formIndex(after: &index)
        }
        if !omittingEmptySubsequences || start < bytes.endIndex { pieces.append(whole[start...]) }
        return pieces
    }

    /// The text before and after the first `separator` byte (ASCII), or nil when there is
    /// none. Found as a byte, not a `Character`: a separator followed by a combining mark is
    /// one character with it, which a character search would not find.
    package func splitOnce(byte separator: UInt8) -> (before: Substring, after: Substring)? {
        let whole = Substring(self)
        guard let index = whole.utf8.firstIndex(of: separator) else { return nil }
        return (whole[..<index], whole[whole.utf8.index(after: index)...])
    }

    /// The string without leading and trailing characters from `set`, compared as Unicode
    /// scalars (so "\r\n" in `set` means both characters, not the one grapheme).
    package func trimmingCharacters(in set: String) -> String {
        let substring = Substring(self)
        if set.utf8.allSatisfy({ $0 < 0x80 }) {
            // ASCII only (every caller): compare bytes; an ASCII byte is a whole scalar, so
            // the bounds stay on scalar boundaries.
            let trimmed = set.utf8
            let bytes = substring.utf8
            var start = bytes.startIndex
            var end = bytes.endIndex
            while start < end, trimmed.contains(bytes[start]) { bytes.formIndex(after: &start) }
            while start < end {
                let before = bytes.index(before: end)
                guard trimmed.contains(bytes[before]) else { break }
                end = before
            }
            return String(substring[start..<end])
        }
        let scalars = Set(set.unicodeScalars)
        var view = Substring(self).unicodeScalars[...]
        while let first = view.first, scalars.contains(first) { view = view.dropFirst() }
        while let last = view.last, scalars.contains(last) { view = view.dropLast() }
        return String(String.UnicodeScalarView(view))
    }
}

extension String {
    /// The path's last non-empty component, split on the `/` byte as the file system splits
    /// it (a `/` followed by a combining mark is one character, but still a separator); the
    /// whole text when it has none.
    package var pathBaseName: String {
        guard let last = utf8.split(separator: UInt8(ascii: "/")).last else { return self }
        return String(Substring(last))
    }

    /// The range of the last occurrence of `needle`'s UTF-8 bytes, occurrences counted left
    /// to right without overlaps as `ranges(of:)` counts them (see `replacingBytes`).
    package func lastRange(ofBytes needle: String) -> Range<String.Index>? {
        guard let last = byteOccurrences(of: Array(needle.utf8)).last else { return nil }
        let lower = utf8.index(startIndex, offsetBy: last)
        return lower..<utf8.index(lower, offsetBy: needle.utf8.count)
    }
}
