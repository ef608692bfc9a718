@testable import AFCommandLine
import Testing

/// Lines drawn in place on a terminal keep to one row of it (StatusLine).
@Suite struct StatusLineTests {
    @Test func theFullestFormThatFitsIsChosenElseTheLastIsCut() {
        let forms = ["a long form", "short", "s"]
        #expect(StatusLine.fitting(forms, columns: 80) == "a long form")
        #expect(StatusLine.fitting(forms, columns: 12) == "a long form")
        // The last column stays empty.
        #expect(StatusLine.fitting(forms, columns: 11) == "short")
        #expect(StatusLine.fitting(forms, columns: 2) == "s")
        #expect(StatusLine.fitting(["abcdef"], columns: 4) == "abc")
        #expect(StatusLine.fitting(["█░█░"], columns: 3) == "█░")
        #expect(StatusLine.fitting(forms, columns: 1).isEmpty)
        #expect(StatusLine.fitting(forms, columns: 0).isEmpty)
        #expect(StatusLine.fitting([], columns: 80).isEmpty)
    }

    @Test func theBatchLineDropsTheRateThenTheWords() {
        let line = { (columns: Int) in BatchProgress.line(count: "25/31", failed: 2, rate: 54.43, columns: columns) }
        #expect(line(80) == "af: 25/31 done, 2 failed, 54.4 requests/s")
        #expect(line(42) == "af: 25/31 done, 2 failed, 54.4 requests/s")
        #expect(line(41) == "af: 25/31 done, 2 failed, 54.4/s")
        #expect(line(30) == "af: 25/31 done, 2 failed")
        #expect(line(20) == "25/31, 2 failed")
        #expect(line(10) == "25/31")
        #expect(line(4) == "25/")
    }

    @Test func theDownloadBarNarrowsThenDropsTheETAAndSpeed() {
        var spinner = 0
        let bar = { (columns: Int) in
            ProgressBar.render(done: 524_288, total: 1_048_576, speed: 262_144, spinner: &spinner, columns: columns)
        }
        let tail = " 512.0 KiB / 1.0 MiB  256.0 KiB/s  ETA 0:02"
        #expect(bar(120) == " 50% " + String(repeating: "█", count: 20) + String(repeating: "░", count: 20) + tail)
        // 80 columns: the bar takes what is left of 79.
        #expect(bar(80) == " 50% " + String(repeating: "█", count: 15) + String(repeating: "░", count: 16) + tail)
        #expect(bar(80).unicodeScalars.count == 79)
        #expect(bar(50) == " 50% " + String(repeating: "█", count: 5) + String(repeating: "░", count: 6) + " 512.0 KiB / 1.0 MiB  256.0 KiB/s")
        #expect(bar(36) == " 50% " + String(repeating: "█", count: 5) + String(repeating: "░", count: 5) + " 512.0 KiB / 1.0 MiB")
        // Under ten columns of bar, none.
        #expect(bar(35) == " 50% 512.0 KiB / 1.0 MiB")
        #expect(bar(28) == " 50% 512.0 KiB / 1.0 MiB")
        #expect(bar(10) == " 50%")
        #expect(bar(3) == " 5")
    }

    @Test func theSpinnerDropsTheSpeed() {
        var spinner = 0
        #expect(ProgressBar.render(done: 2048, total: nil, speed: 1024, spinner: &spinner, columns: 80) == "⠙ 2.0 KiB  1.0 KiB/s")
        #expect(ProgressBar.render(done: 2048, total: nil, speed: 1024, spinner: &spinner, columns: 15) == "⠹ 2.0 KiB")
    }
}
