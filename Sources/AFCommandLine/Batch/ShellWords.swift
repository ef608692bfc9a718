/// Splits one line of an `af batch` file into words with POSIX shell quoting: single
/// quotes keep everything literally, double quotes keep everything but `\"`, `\\`, `\$`
/// and `` \` ``, a backslash outside quotes keeps the next character. Nothing is expanded:
/// `$HOME`, `*` and `~` are plain text.
enum ShellWords {
    /// Why a line cannot be split.
    enum Problem: Error, Equatable {
        case unterminatedSingleQuote
        case unterminatedDoubleQuote
        case trailingBackslash

        var message: String {
            switch self {
            case .unterminatedSingleQuote: return "a single quote is not closed"
            case .unterminatedDoubleQuote: return "a double quote is not closed"
            case .trailingBackslash: return "the line ends with a backslash"
            }
        }
    }

    /// The words of `line`; an empty array for a blank line or a comment.
    static func split(_ line: String) throws(Problem) -> [String] {
        var words: [String] = []
        var current: [UInt8] = []
        var inWord = false
        var bytes = Array(line.utf8)[...]
        while let byte = bytes.popFirst() {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                if inWord { words.append(String(decoding: current, as: UTF8.self)) }
                current.removeAll(keepingCapacity: true)
                inWord = false
            case UInt8(ascii: "#") where !inWord:
                bytes.removeAll()
            case UInt8(ascii: "'"):
                inWord = true
                guard let end = bytes.firstIndex(of: UInt8(ascii: "'")) else { throw .unterminatedSingleQuote }
                current.append(contentsOf: bytes[..<end])
                bytes = bytes[(end + 1)...]
            case UInt8(ascii: "\""):
                inWord = true
                try readDoubleQuoted(&bytes, into: &current)
            case UInt8(ascii: "\\"):
                inWord = true
                guard let next = bytes.popFirst() else { throw .trailingBackslash }
                current.append(next)
            default:
                inWord = true
                current.append(byte)
                // The rest of a run of plain bytes at once (`#` inside a word is plain).
                let end = bytes.firstIndex(where: isSpecial) ?? bytes.endIndex
                current.append(contentsOf: bytes[..<end])
                bytes = bytes[end...]
            }
        }
        if inWord { words.append(String(decoding: current, as: UTF8.self)) }
        return words
    }

    /// Bytes that end a run of plain word bytes.
    private static func isSpecial(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "\\"): return true
        default: return false
        }
    }

    private static func readDoubleQuoted(_ bytes: inout ArraySlice<UInt8>, into current: inout [UInt8]) throws(Problem) {
        while let byte = bytes.popFirst() {
            switch byte {
            case UInt8(ascii: "\""):
                return
            case UInt8(ascii: "\\"):
                guard let next = bytes.popFirst() else { throw .unterminatedDoubleQuote }
                if ![UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "$"), UInt8(ascii: "`")].contains(next) {
                    current.append(byte)
                }
                current.append(next)
            default:
                current.append(byte)
            }
        }
        throw .unterminatedDoubleQuote
    }
}
