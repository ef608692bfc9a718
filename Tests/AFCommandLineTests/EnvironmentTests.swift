@testable import AFCommandLine
import Testing

/// An environment is a value: its storage is shared between copies until one changes.
@Suite struct EnvironmentTests {
    @Test func aChangedCopyLeavesTheOriginalAsItWas() {
        let original = Environment(arguments: ["get", ":8080/x"], variables: ["TMPDIR": "/var/tmp"], stdout: 1, terminalWidth: 100)
        var copy = original
        copy.arguments.append("a=1")
        copy.variables = ["NO_COLOR": "1"]
        copy.stdout = 7
        copy.terminalWidth = 40
        copy.stderrIsTerminal = true
        #expect(original.arguments == ["get", ":8080/x"])
        #expect(original.variables == ["TMPDIR": "/var/tmp"])
        #expect(original.temporaryDirectory == "/var/tmp")
        #expect(!original.derived.noColor)
        #expect(original.stdout == 1 && original.terminalWidth == 100 && !original.stderrIsTerminal)
        #expect(copy.arguments == ["get", ":8080/x", "a=1"])
        // What is derived from the variables follows them.
        #expect(copy.temporaryDirectory == "/tmp")
        #expect(copy.derived.noColor)
        #expect(copy.stdout == 7 && copy.terminalWidth == 40 && copy.stderrIsTerminal)
    }
}
