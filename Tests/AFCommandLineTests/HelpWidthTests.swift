@testable import AFCommandLine
import Testing

/// `af --help` on a terminal fits its width; into a pipe, one whole line per option.
@Suite struct HelpWidthTests {
    @Test func aLongLineWrapsUnderItsDescriptionColumn() {
        let text = "  -t, --timeout=SECONDS        Seconds each attempt may take, connecting and sending included\nshort\n"
        #expect(HelpText.fit(text, width: 60) == """
              -t, --timeout=SECONDS        Seconds each attempt may
                                           take, connecting and sending
                                           included
            short

            """)
        // A paragraph hangs at its own indentation; a word longer than the room stays whole.
        #expect(HelpText.fit("one two three four five six seven eight nine ten eleven twelve", width: 30) == "one two three four five six\nseven eight nine ten eleven\ntwelve")
        #expect(HelpText.fit("  a " + String(repeating: "x", count: 40) + " b", width: 30) == "  a\n  " + String(repeating: "x", count: 40) + "\n  b")
    }

    @Test func theHelpFitsAnEightyColumnTerminalAndLosesNoWord() {
        let whole = HelpText.help()
        let fitted = HelpText.help(width: 80)
        #expect(whole.split(whereSeparator: \.isWhitespace) == fitted.split(whereSeparator: \.isWhitespace))
        // No word of the help is too long for a line: every line fits (--sorted's help held
        // a 60-character option value that stayed longer).
        for line in fitted.split(separator: "\n") {
            #expect(line.count <= 79, "\(line)")
        }
        #expect(whole.split(separator: "\n").contains { $0.count > 79 }, "the piped help keeps one line per option")
    }
}
