@testable import AFCommandLine
import AFInProcess
import AFTestSupport
import Foundation
import Testing

/// Every declared conflict and requirement is a usage error naming the options involved,
/// whatever else is on the command line.
@Suite struct OptionCombinationTests {
    /// A command line that turns `id` on.
    private static func arguments(for id: OptionID) throws -> [String] {
        let spec = try #require(OptionTable.all.first { $0.id == id })
        switch spec.value {
        case .flag: return ["--\(spec.long)"]
        case .required, .optional:
            let samples: [OptionID: String] = [.report: "json", .output: "file.bin", .raw: "x", .checksum: "md5:00112233445566778899aabbccddeeff"]
            return ["--\(spec.long)=\(samples[id] ?? spec.choices.first ?? "1")"]
        }
    }

    private static func failure(_ arguments: [String]) -> CommandFailure? {
        do {
            let (settings, _) = try AFCommand.parse(Environment(arguments: arguments + [":8080/x"], variables: ["AF_CONFIG_DIR": "/nonexistent"]))
            try AFCommand.checkCombinations(settings)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: OptionTable.conflicts.map { ($0.first, $0.second) })
    func everyConflictIsRefusedNamingBoth(first: OptionID, second: OptionID) throws {
        let names = try [first, second].map { id in try #require(OptionTable.all.first { $0.id == id }).long }
        for order in [[first, second], [second, first]] {
            let failure = Self.failure(try order.flatMap(Self.arguments(for:)))
            #expect(failure?.exitCode == 64, "\(order)")
            for name in names { #expect(failure?.message.contains("--\(name)") == true, "\(failure?.message ?? "no error") names --\(name)") }
        }
        // Either one alone does not trip this conflict.
        let alone = Self.failure(try Self.arguments(for: first))
        #expect(alone?.message.contains("--\(names[1])") != true)
        // `--no-X` takes an earlier X back.
        let undone = try Self.arguments(for: first) + ["--no-\(names[0])"] + Self.arguments(for: second)
        let spec = try #require(OptionTable.all.first { $0.id == first })
        if spec.negatable { #expect(Self.failure(undone)?.message.contains("--\(names[0])") != true) }
    }

    /// The command line overrides the config file: one side of a conflict set there is undone
    /// by the other given on the command line (--json over a configured --form), as a later
    /// option overrides an earlier one. Both in the config file is still an error, which
    /// says where they came from.
    @Test(arguments: OptionTable.conflicts.map { ($0.first, $0.second) })
    func theCommandLineOverridesAConflictingConfigOption(first: OptionID, second: OptionID) throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        func run(config: [String], line: [String]) throws -> (Settings?, CommandFailure?) {
            try TemporaryDirectory.writeConfig(defaultOptions: config, in: directory)
            do {
                let (settings, _) = try AFCommand.parse(Environment(arguments: line + [":8080/x"], variables: ["AF_CONFIG_DIR": directory]))
                try AFCommand.checkCombinations(settings)
                return (settings, nil)
            } catch {
                return (nil, error)
            }
        }
        for (configured, given) in [(first, second), (second, first)] {
            let spec = try #require(OptionTable.all.first { $0.id == configured })
            let (settings, failure) = try run(config: Self.arguments(for: configured), line: Self.arguments(for: given))
            if spec.negatable {
                #expect(failure == nil, "\(configured) in the config file, \(given) on the command line")
                #expect(settings?.given.contains(configured) == false)
                #expect(settings?.given.contains(given) == true)
            } else {
                #expect(failure?.exitCode == 64)
            }
        }
        let both = try Self.arguments(for: first) + Self.arguments(for: second)
        try TemporaryDirectory.writeConfig(defaultOptions: both, in: directory)
        let result = InProcessAF.run([":8080/x"], environment: ["AF_CONFIG_DIR": directory])
        #expect(result.status == 64)
        let names = try [first, second].map { id in "--" + (try #require(OptionTable.all.first { $0.id == id })).long }
        #expect(result.err.hasSuffix("come from the config file '\(directory)/config.json')\n"), "\(result.err)")
        for name in names { #expect(result.err.contains(name)) }
    }

    /// SPEC §11: a line's own options override the batch's, conflicting ones too (a line's
    /// --json over `af batch --form`): the line was refused as giving both.
    @Test func aBatchLineOverridesTheBatchsConflictingOption() throws {
        let directory = try TemporaryDirectory.make()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = try TemporaryDirectory.write("http://example.test/a a=1\n--json http://example.test/b a=1\n", named: "lines.txt", in: directory)
        let result = InProcessAF.run(["batch", "--offline", "--form", path], environment: ["AF_CONFIG_DIR": "/nonexistent"])
        #expect(result.status == 0, "\(result.err)")
        let types = result.out.split(separator: "\n").filter { $0.hasPrefix("Content-Type: ") }
        #expect(types == ["Content-Type: application/x-www-form-urlencoded; charset=utf-8", "Content-Type: application/json"], "\(result.out)")
    }

    @Test func theRawBodyIsNotDroppedByFormWithMultipart() {
        // Before the conflicts were declared, -f --multipart skipped the check and --raw was lost.
        #expect(Self.failure(["-f", "--multipart", "--raw=x"]) == .usage("--raw gives the whole body; it cannot be combined with --multipart"))
        #expect(Self.failure(["-f", "--raw=a=1&b=2"]) == nil, "a raw urlencoded body with --form is HTTPie's way to send one")
    }

    /// A checksum with the body printed was not checked at all (exit 0 whatever the digest).
    @Test func aChecksumNeedsTheBodySaved() {
        let checksum = "--checksum=sha256:" + String(repeating: "00", count: 32)
        #expect(Self.failure([checksum])?.message.hasPrefix("--checksum verifies what af saves; use it with --download or -o FILE") == true)
        #expect(Self.failure([checksum, "-o", "-"]) == nil)
        #expect(Self.failure([checksum, "-d"]) == nil)
    }

    @Test(arguments: OptionTable.requirements.map(\.option))
    func everyRequirementIsChecked(option: OptionID) throws {
        let requirement = try #require(OptionTable.requirements.first { $0.option == option })
        let alone = Self.failure(try Self.arguments(for: option))
        #expect(alone == .usage(requirement.message))
        for other in requirement.anyOf {
            #expect(Self.failure(try Self.arguments(for: option) + Self.arguments(for: other)) == nil, "\(option) with \(other)")
        }
    }
}
