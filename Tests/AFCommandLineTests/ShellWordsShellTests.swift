@testable import AFCommandLine
import AFTestSupport
import Foundation
import Testing

/// `af batch` promises POSIX shell quoting (SPEC §11): the words of a line are the words a
/// shell would pass, less its expansions. Random lines of quotes, backslashes, blanks and `#`
/// are split by ShellWords and by /bin/sh (`set -f`, and no character a shell would expand
/// or treat as an operator), and must give the same words, or both refuse the line.
@Suite struct ShellWordsShellTests {
    /// The words /bin/sh gives `line`, or nil when it refuses it (an open quote).
    static func shellWords(_ line: String) throws -> [String]? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        // A first word of our own, so that no words and one empty word differ.
        process.arguments = ["-c", "set -f; printf '%s\\0' START " + line]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        var words = data.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        // printf ends every word with a NUL, so the split leaves an empty piece last.
        guard words.first == "START", words.last == "" else { return nil }
        words.removeFirst()
        words.removeLast()
        return words
    }

    @Test func randomLinesSplitAsTheShellSplitsThem() throws {
        var random = SeededGenerator(seed: 29)
        let pieces = ["a", "b", "é", " ", "  ", "\t", "'", "\"", "\\", "#", "=", ":", "''", "\"\"", "\\'", "\\\"", "\\\\", "\\ ", "\\#", "\\a"]
        var compared = 0
        for _ in 0..<600 {
            let length = Int.random(in: 1...12, using: &random)
            // Ended by a word of its own: a backslash that ends a command joins it to the next
            // line in a batch file, where a shell given one line would keep it literally.
            let line = (0..<length).map { _ in pieces.randomElement(using: &random) ?? "a" }.joined() + " end"
            let ours = try? ShellWords.split(line)
            let shells = try Self.shellWords(line)
            #expect(ours == shells, "line \(line.debugDescription): af \(String(describing: ours)), sh \(String(describing: shells))")
            compared += 1
        }
        #expect(compared == 600)
    }
}
