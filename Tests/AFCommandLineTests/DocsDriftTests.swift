@testable import AFCommandLine
import Foundation
import Testing

/// The committed man page and completions are generated from the option table; they must
/// not drift from it (run `swift run af-docs` after changing an option).
@Suite struct DocsDriftTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    private func committed(_ path: String) -> String? {
        try? String(contentsOfFile: Self.root + "/" + path, encoding: .utf8)
    }

    @Test func manPageMatchesTheOptionTable() {
        #expect(committed("man/af.1") == ManPage.render(), "man/af.1 is stale: run swift run af-docs")
    }

    @Test(arguments: Completions.files.map(\.name))
    func completionMatchesTheOptionTable(name: String) {
        let generated = Completions.files.first { $0.name == name }?.contents
        #expect(committed("completions/" + name) == generated, "completions/\(name) is stale: run swift run af-docs")
    }

    @Test func everyHelpOptionIsDocumentedEverywhere() throws {
        let help = HelpText.help()
        var options = Set<String>()
        var index = help.startIndex
        while let range = help[index...].firstRange(of: "--") {
            var end = range.upperBound
            while end < help.endIndex, help[end].isLetter || help[end].isNumber || help[end] == "-" { end = help.index(after: end) }
            let name = String(help[range.upperBound..<end])
            if let first = name.first, first.isLetter { options.insert(name) }
            index = end
        }
        #expect(options.count > 70)
        let documents = [("man/af.1", committed("man/af.1")?.replacing("\\-", with: "-"))] + Completions.files.map { ("completions/" + $0.name, committed("completions/" + $0.name)) }
        for (path, text) in documents {
            let text = try #require(text, "\(path) is missing")
            for option in options where !option.hasPrefix("no-") {
                let found = text.contains("--\(option)") || text.contains("-l \(option) ") || text.contains("-l \(option)\n")
                #expect(found, "--\(option) is missing from \(path)")
            }
        }
    }

    @Test func everyOptionHasHelpAndAGroup() {
        var seen = Set<String>()
        for spec in OptionTable.all {
            #expect(!spec.help.isEmpty)
            #expect(seen.insert(spec.long).inserted, "--\(spec.long) is declared twice")
            #expect(!spec.help.hasSuffix("."), "--\(spec.long): short help has no final period")
        }
    }
}

/// The README's exit-status table lists exactly the codes of `ExitStatus.table`, which
/// `--help` and the man page are generated from.
@Suite struct ExitTableTests {
    @Test func readmeListsEveryExitStatus() throws {
        let readme = try #require(try? String(contentsOfFile: DocsDriftTests.root + "/README.md", encoding: .utf8))
        let section = try #require(readme.components(separatedBy: "## Exit status").dropFirst().first?.components(separatedBy: "\n## ").first)
        var codes: [Int32] = []
        for line in section.split(separator: "\n") where line.hasPrefix("| ") && !line.hasPrefix("| code") {
            let cell = line.dropFirst(2).prefix { $0 != "|" }
            codes += cell.split(separator: ",").compactMap { Int32($0.trimmingCharacters(in: .whitespaces)) }
        }
        #expect(codes == ExitStatus.table.flatMap(\.codes))
        let help = HelpText.help()
        for entry in ExitStatus.table {
            #expect(help.contains("\(entry.codes.map(String.init).joined(separator: "/")) \(entry.brief)"))
        }
    }
}
