/// Splits one command line of an `af batch` file into words with POSIX shell quoting:
/// single quotes keep everything literally, double quotes keep everything but `\"`, `\\`,
/// `\$` and `` \` ``, a backslash outside quotes keeps the next character. A backslash
/// before a line break joins the lines (outside single quotes), as in a shell; a quote must
/// close on its line, so that one left open fails its line alone. Nothing is expanded:
/// `$HOME`, `*` and `~` are plain text; the first text a shell would have expanded
/// (`$TOKEN`, `${HOME}`, `$(date)`, a backquote) is noted, for a warning.
enum ShellWords {
    /// Why a line cannot be split.
    enum Problem: Error, Equatable {
        case unterminatedSingleQuote
        case unterminatedDoubleQuote
        case trailingBackslash

        var message: String {
            switch self {
            // Pasted JSON of many lines in quotes is the likely cause: say what a line is,
            // and where such a value goes.
            case .unterminatedSingleQuote:
                return "a single quote is not closed on its line (a line of af batch is one request; send a value of many lines from a file, with @FILE or name=@FILE)"
            case .unterminatedDoubleQuote:
                return "a double quote is not closed on its line (a line of af batch is one request; end a line with \\ to go on in the next, or send a value of many lines from a file, with @FILE or name=@FILE)"
            case .trailingBackslash: return "the line ends with a backslash"
            }
        }
    }

    /// Where splitting stands at the end of a line that goes on in the next: inside double
    /// quotes or not, and inside a word or not (a `#` right after the joined line break is
    /// then part of the word, not a comment).
    struct Carry: Sendable, Equatable {
        var inDoubleQuotes = false
        var inWord = false
    }

    /// Whether the file's line `line`, read from `carry` (where the line before it left off),
    /// ends with a backslash that escapes its line break (outside quotes or inside double
    /// quotes), so the command goes on in the next line; `carry` becomes where this line
    /// leaves off. Only this line is read, so a command joined from many lines costs its
    /// length once; a line that does not end with a backslash, nearly every one, not at all.
    static func continues(_ line: String, from carry: inout Carry) -> Bool {
        // The last byte or two, looked at from the end (a generic `suffix(2)` and comparison
        // cost hundreds of instructions for every line of a batch).
        let utf8 = line.utf8
        guard let last = utf8.last else { return false }
        if last != UInt8(ascii: "\\") {
            guard last == UInt8(ascii: "\r"), utf8.count >= 2,
                  utf8[utf8.index(utf8.endIndex, offsetBy: -2)] == UInt8(ascii: "\\") else { return false }
        }
        let bytes = Array(line.utf8)
        // A backslash at the end, or before a CR that ends the line (CRLF files).
        func endsAt(_ index: Int) -> Bool {
            index == bytes.count || (index == bytes.count - 1 && bytes[index] == UInt8(ascii: "\r"))
        }
        var inDoubleQuotes = carry.inDoubleQuotes
        var inWord = carry.inWord
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if inDoubleQuotes {
                if byte == UInt8(ascii: "\"") {
                    inDoubleQuotes = false
                } else if byte == UInt8(ascii: "\\") {
                    if endsAt(index) {
                        carry = Carry(inDoubleQuotes: true, inWord: true)
                        return true
                    }
                    index += 1
                }
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"):
                inWord = false
            case UInt8(ascii: "#") where !inWord:
                return false
            case UInt8(ascii: "'"):
                // A single quote closes on its line, or the line fails (and goes on nowhere).
                guard let close = bytes[index...].firstIndex(of: UInt8(ascii: "'")) else { return false }
                inWord = true
                index = close + 1
            case UInt8(ascii: "\""):
                inWord = true
                inDoubleQuotes = true
            case UInt8(ascii: "\\"):
                if endsAt(index) {
                    carry = Carry(inDoubleQuotes: false, inWord: inWord)
                    return true
                }
                inWord = true
                index += 1
            default:
                inWord = true
            }
        }
        return false
    }

    /// The words of `line`; an empty array for a blank line or a comment.
    static func split(_ line: String) throws(Problem) -> [String] {
        try splitMarkingQuotes(line).words
    }

    /// The words of `line`, and for each whether any of it was quoted or escaped (`'|'`, `\|`):
    /// only a word with none, which a shell would read as written, can be a shell operator.
    /// `quoted` is nil for a plain line (nearly every one), none of whose words is.
    /// `expansion` is the first text a shell would have expanded, outside single quotes and
    /// not escaped (`$TOKEN`, `"${HOME}"`), which af sends as written.
    static func splitMarkingQuotes(_ line: String) throws(Problem) -> (words: [String], quoted: [Bool]?, expansion: String?) {
        if let plain = plainWords(line) { return (plain, nil, nil) }
        var quoted: [Bool] = []
        var expansion: String?
        let words = try splitQuoted(line, quoted: &quoted, expansion: &expansion)
        return (words, quoted, expansion)
    }

    /// `split` byte by byte, for any line (internal for tests, which compare the two ways).
    static func splitQuoted(_ line: String) throws(Problem) -> [String] {
        var quoted: [Bool] = []
        var expansion: String?
        return try splitQuoted(line, quoted: &quoted, expansion: &expansion)
    }

    /// `splitQuoted`, appending to `quoted` whether each word had a quote or a backslash in it
    /// and noting the first expansion.
    private static func splitQuoted(_ line: String, quoted: inout [Bool], expansion: inout String?) throws(Problem) -> [String] {
        var words: [String] = []
        var current: [UInt8] = []
        var inWord = false
        var wordQuoted = false
        var bytes = Array(line.utf8)[...]
        func endWord() {
            if inWord {
                words.append(String(decoding: current, as: UTF8.self))
                quoted.append(wordQuoted)
            }
            current.removeAll(keepingCapacity: true)
            inWord = false
            wordQuoted = false
        }
        while let byte = bytes.popFirst() {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                endWord()
            case UInt8(ascii: "#") where !inWord:
                bytes.removeAll()
            case UInt8(ascii: "'"):
                inWord = true
                wordQuoted = true
                guard let end = bytes.firstIndex(of: UInt8(ascii: "'")) else { throw .unterminatedSingleQuote }
                current.append(contentsOf: bytes[..<end])
                bytes = bytes[(end + 1)...]
            case UInt8(ascii: "\""):
                inWord = true
                wordQuoted = true
                try readDoubleQuoted(&bytes, into: &current, expansion: &expansion)
            case UInt8(ascii: "\\"):
                guard let next = bytes.popFirst() else { throw .trailingBackslash }
                // A backslash and a line break join two lines, as in a shell.
                if try isLineBreak(next, &bytes) { continue }
                inWord = true
                wordQuoted = true
                current.append(next)
            default:
                inWord = true
                current.append(byte)
                // The rest of a run of plain bytes at once (`#` inside a word is plain).
                let end = bytes.firstIndex(where: isSpecial) ?? bytes.endIndex
                if expansion == nil { expansion = firstExpansion(byte, bytes[..<end]) }
                current.append(contentsOf: bytes[..<end])
                bytes = bytes[end...]
            }
        }
        endWord()
        return words
    }

    /// The words of a line with no quote, backslash, `#`, `$`, backquote, tab or line break — nearly every
    /// line of a batch (`af get URL`, a URL alone) — cut at its spaces; nil for any other
    /// line, which `split` reads byte by byte.
    static func plainWords(_ line: String) -> [String]? {
        var line = line
        return line.withUTF8 { bytes -> [String]? in
            var words: [String] = []
            var start: Int?
            for index in bytes.indices {
                switch bytes[index] {
                case UInt8(ascii: " "):
                    if let begun = start { words.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[begun..<index]), as: UTF8.self)) }
                    start = nil
                case UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"), UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "#"),
                     UInt8(ascii: "$"), UInt8(ascii: "`"):
                    return nil
                default:
                    if start == nil { start = index }
                }
            }
            if let begun = start { words.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[begun...]), as: UTF8.self)) }
            return words
        }
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

    private static func readDoubleQuoted(_ bytes: inout ArraySlice<UInt8>, into current: inout [UInt8], expansion: inout String?) throws(Problem) {
        while let byte = bytes.popFirst() {
            switch byte {
            case UInt8(ascii: "\""):
                return
            case UInt8(ascii: "$"), UInt8(ascii: "`"):
                if expansion == nil { expansion = firstExpansion(byte, bytes.prefix { $0 != UInt8(ascii: "\"") }) }
                current.append(byte)
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

    /// The first expansion a shell would make in `first` and the bytes after it, read as
    /// unquoted text (or double-quoted: the caller gives the bytes up to the closing quote):
    /// `$NAME`, `${…}`, `$(…)` or a backquoted command, as written (at most 40 bytes); nil
    /// when there is none (`$` alone, `$5`, `a$`).
    static func firstExpansion(_ first: UInt8, _ rest: ArraySlice<UInt8>) -> String? {
        let starts = { (byte: UInt8) in byte == UInt8(ascii: "$") || byte == UInt8(ascii: "`") }
        // Most runs hold neither byte: nothing is copied for them.
        guard starts(first) || rest.contains(where: starts) else { return nil }
        let run = [first] + rest
        for index in run.indices where starts(run[index]) {
            let after = run[(index + 1)...]
            var end: Int?
            if run[index] == UInt8(ascii: "`") {
                end = after.firstIndex(of: UInt8(ascii: "`")).map { $0 + 1 }
            } else if let next = after.first {
                switch next {
                case UInt8(ascii: "{"): end = after.firstIndex(of: UInt8(ascii: "}")).map { $0 + 1 }
                case UInt8(ascii: "("): end = after.firstIndex(of: UInt8(ascii: ")")).map { $0 + 1 }
                case UInt8(ascii: "_"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
                    end = after.firstIndex { !isNameByte($0) } ?? run.endIndex
                default: end = nil
                }
            }
            guard let end else { continue }
            return String(decoding: run[index..<min(end, index + 40)], as: UTF8.self)
        }
        return nil
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "_"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): return true
        default: return false
        }
    }
}
