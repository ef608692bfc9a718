/// Text from the network that may not be UTF-8: header values and cookies, which HTTP/1.1
/// once defined as ISO-8859-1 and servers still send so.
extension String {
    /// `bytes` as UTF-8 when they are valid UTF-8, else one character per byte (ISO-8859-1),
    /// so that no byte is lost; `isLatin1` says which reading was taken.
    package static func utf8OrLatin1(_ bytes: some Collection<UInt8>) -> (text: String, isLatin1: Bool) {
        if let text = String(validating: bytes, as: UTF8.self) { return (text, false) }
        var scalars = String.UnicodeScalarView()
        for byte in bytes { scalars.append(Unicode.Scalar(byte)) }
        return (String(scalars), true)
    }

    /// The bytes a string read by `utf8OrLatin1` as ISO-8859-1 came from: one byte per
    /// character (a character past U+00FF, which only an edited string has, goes as UTF-8).
    package var latin1Bytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        for scalar in unicodeScalars {
            if scalar.value <= 0xFF { bytes.append(UInt8(scalar.value)) } else { bytes.append(contentsOf: String(scalar).utf8) }
        }
        return bytes
    }
}
