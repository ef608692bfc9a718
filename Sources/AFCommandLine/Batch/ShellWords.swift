/// Splits one command line of an `af batch` file into words with POSIX shell quoting:
/// single quotes keep everything literally, double quotes keep everything but `\"`, `\\`,
/// `\$` and `` \` ``, a backslash outside quotes keeps the next character. A backslash
/// before a line break joins the lines (outside single quotes), as in a shell; a quote must
/// close on its line, so that one left open fails its line alone. Nothing is expanded:
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

    /// Whether `line` goes on in the next line of the file: it ends with a backslash that
    /// escapes the line break (outside quotes or inside double quotes). Lines without a
    /// backslash, nearly all of them, are not split for it.
    static func continuesOnNextLine(_ line: String) -> Bool {
        let end = line.utf8.suffix(2)
        guard end.last == UInt8(ascii: "\\") || end.elementsEqual([UInt8(ascii: "\\"), UInt8(ascii: "\r")]) else { return false }
        do {
            _ = try split(line)
            return false
        } catch {
            return error == .trailingBackslash
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
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"):
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
                guard let next = bytes.popFirst() else { throw .trailingBackslash }
                // A backslash and a line break join two lines, as in a shell.
                if try isLineBreak(next, &bytes) { continue }
                inWord = true
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

    /// Whether `byte`, just after a backslash, starts a line break (LF, or CRLF from a
    /// Windows editor; its LF is taken too). A CR that ends the text is a line break whose
    /// LF has not been joined yet: the line ends with a backslash.
    private static func isLineBreak(_ byte: UInt8, _ bytes: inout ArraySlice<UInt8>) throws(Problem) -> Bool {
        if byte == UInt8(ascii: "\n") { return true }
        guard byte == UInt8(ascii: "\r") else { return false }
        if bytes.isEmpty { throw .trailingBackslash }
        guard bytes.first == UInt8(ascii: "\n") else { return false }
        bytes.removeFirst()
        return true
    }

    /// Bytes that end a run of plain word bytes.
    private static func isSpecial(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"), UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "\\"): return true
        default: return false
        }
    }

    private static func readDoubleQuoted(_ bytes: inout ArraySlice<UInt8>, into current: inout [UInt8]) throws(Problem) {
        while let byte = bytes.popFirst() {
            switch byte {
            case UInt8(ascii: "\""):
                return
            case UInt8(ascii: "\\"):
                guard let next = bytes.popFirst() else { throw .trailingBackslash }
                if try isLineBreak(next, &bytes) { continue }
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
