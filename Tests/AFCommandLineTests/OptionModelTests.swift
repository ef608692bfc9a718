@testable import AFCommandLine
import Testing

/// Every option of the model, walked from its one declaration through the parser, the
/// settings, `--help`, the man page and each shell's completion: they must agree.
@Suite struct OptionModelTests {
    /// `--name=VALUE` (or `--name`) as the declaration says it is spelled.
    private static func spelling(_ spec: OptionSpec, value: String?) -> String {
        guard let value else { return "--\(spec.long)" }
        return "--\(spec.long)=\(value)"
    }

    private static func parse(_ arguments: [String]) -> Result<Settings, CommandFailure> {
        do {
            let (settings, _) = try AFCommand.parse(Environment(arguments: arguments + [":8080/x"], variables: ["AF_CONFIG_DIR": "/nonexistent"]))
            return .success(settings)
        } catch {
            return .failure(error)
        }
    }

    @Test(arguments: OptionTable.all.map(\.long))
    func everyOptionParsesHelpsAndCompletes(long: String) throws {
        let spec = try #require(OptionTable.option(long: long))
        // Parse: the declared sample (or the flag) is accepted and marks the option given.
        let value: String? = spec.value == .flag ? nil : spec.binding.sample
        if spec.value != .flag, value == nil { Issue.record("--\(long) declares no sample value") }
        let parsed = Self.parse([Self.spelling(spec, value: value)])
        let settings = try parsed.get()
        #expect(settings.given.contains(spec.id))
        if spec.negatable {
            let undone = try Self.parse([Self.spelling(spec, value: value), "--no-\(long)"]).get()
            #expect(!undone.given.contains(spec.id))
            if spec.value != .flag {
                // An option with a value goes back to its default: whatever its binding set.
                // (Which options were given, and a subcommand's first option, are bookkeeping.)
                var values = undone.values, defaults = Settings().values
                values.given = []
                values.subcommandOption = nil
                defaults.given = []
                #expect(String(describing: values) == String(describing: defaults), "--no-\(long) leaves a value it set")
            }
        } else {
            // Only these have no --no- form: help and version, and --verify, whose --no-
            // spelling reads as "do not verify" (HTTPie's resets it to verifying).
            #expect([.help, .version, .verify].contains(spec.id), "--\(long) has no --no- form")
        }
        if let short = spec.short, spec.value == .flag {
            #expect(try Self.parse(["-\(short)"]).get().given.contains(spec.id))
        }
        // Help, man page and completions name it, with the declared default.
        let help = HelpText.help()
        #expect(help.contains(spec.usage), "--help lacks \(spec.usage)")
        #expect(help.contains(spec.help), "--help lacks the text of --\(long)")
        let man = ManPage.render().replacing("\\-", with: "-")
        #expect(man.contains("--\(long)"), "the man page lacks --\(long)")
        if let note = spec.binding.defaultText { #expect(man.contains("(default \(note)"), "the man page lacks the default of --\(long)") }
        for file in Completions.files {
            let mentions = file.contents.contains("--\(long)") || file.contents.contains("-l \(long)")
            #expect(mentions, "\(file.name) lacks --\(long)")
            for choice in spec.choices where !choice.contains(":") {
                #expect(file.contents.contains(choice), "\(file.name) does not complete \(choice) for --\(long)")
            }
        }
    }

    @Test(arguments: OptionTable.all.filter { if case .count = $0.binding.kind { return true } else { return false } }.map(\.long))
    func countsRefuseValuesOutsideTheirRange(long: String) throws {
        let spec = try #require(OptionTable.option(long: long))
        guard case .count(let range) = spec.binding.kind else { return }
        // A subcommand's option is read on its subcommand's command line: elsewhere it is
        // refused as such, whatever its value.
        let subcommand = spec.group.subcommand.map { [$0] } ?? []
        for bad in ["\(range.upperBound + 1)", "\(range.lowerBound - 1)", "many"] {
            guard case .failure(let failure) = Self.parse(subcommand + ["--\(long)=\(bad)"]) else {
                Issue.record("--\(long)=\(bad) was accepted")
                continue
            }
            #expect(failure == .usage("invalid value '\(bad)' for --\(long): expected a whole number from \(range.lowerBound) to \(range.upperBound)"))
        }
        #expect((try? Self.parse(subcommand + ["--\(long)=\(range.upperBound)"]).get()) != nil)
    }

    @Test(arguments: OptionTable.all.filter { if case .choice = $0.binding.kind { return true } else { return false } }.map(\.long))
    func choicesAcceptEachChoiceAndNameThemWhenWrong(long: String) throws {
        let spec = try #require(OptionTable.option(long: long))
        guard case .choice(let choices) = spec.binding.kind else { return }
        for choice in choices {
            #expect((try? Self.parse(["--\(long)=\(choice)"]).get()) != nil, "--\(long)=\(choice)")
        }
        guard case .failure(let failure) = Self.parse(["--\(long)=nonsense"]) else {
            Issue.record("--\(long)=nonsense was accepted")
            return
        }
        #expect(failure.exitCode == 64)
        #expect(failure.message.contains("--\(long)"))
    }

    @Test(arguments: OptionTable.all.filter { if case .seconds = $0.binding.kind { return true } else { return false } }.map(\.long))
    func durationsAreBounded(long: String) throws {
        for bad in ["-1", "2000001", "soon"] {
            guard case .failure(let failure) = Self.parse(["--\(long)=\(bad)"]) else {
                Issue.record("--\(long)=\(bad) was accepted")
                continue
            }
            #expect(failure.message.hasPrefix("invalid value '\(bad)' for --\(long): expected"), "\(failure.message)")
        }
    }

    @Test func defaultsComeFromTheSettingsTheyDescribe() {
        let defaults = Settings()
        #expect(OptionTable.option(long: "indent")?.binding.defaultText == "\(defaults.indent)")
        #expect(OptionTable.option(long: "retry-delay")?.binding.defaultText == "0.5")
        #expect(OptionTable.option(long: "max-headers")?.binding.defaultText == "\(defaults.maxHeaders)")
        #expect(OptionTable.option(long: "max-redirects")?.help.hasSuffix("(default \(defaults.maxRedirects))") == true)
    }
}
