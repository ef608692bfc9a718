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
        let documents = [("man/af.1", committed("man/af.1")?.replacingAll("\\-", with: "-"))] + Completions.files.map { ("completions/" + $0.name, committed("completions/" + $0.name)) }
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
