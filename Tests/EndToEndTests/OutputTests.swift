import AFTestSupport
import Foundation
import Testing

/// SPEC §4: what reaches a terminal and what reaches a pipe.
@Suite struct OutputTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
    }

    private func terminal(_ arguments: [String], environment: [String: String] = [:]) -> String {
        PTYRunner.run(arguments, environment: environment).output.replacingOccurrences(of: "\r\n", with: "\n")
    }

    /// `af --help` on an 80-column terminal keeps to its width, continuation lines under the
    /// description column (half its lines had wrapped at the terminal's edge); into a pipe it
    /// keeps one whole line per option, for grep.
    @Test func helpFitsTheTerminalAndStaysWholeInAPipe() {
        let (output, status) = PTYRunner.run(["--help"], columns: 80)
        #expect(status == 0)
        let lines = output.components(separatedBy: "\r\n")
        #expect(lines.count > 150)
        for line in lines where line.count > 79 { #expect(line.split(separator: " ").count == 1, "\(line)") }
        #expect(output.contains("      --timeout=SECONDS"), "\(output.prefix(2000))")
        let piped = AF.run(["--help"])
        #expect(piped.status == 0)
        #expect(piped.out.split(separator: "\n").contains { $0.count > 79 && $0.hasPrefix("      --verify=") })
    }

    @Test func terminalGetsColouredHeadersAndFormattedJSON() {
        let output = terminal([server.url("/json")])
        #expect(output.hasPrefix("\u{1b}[34mHTTP/1.1\u{1b}[0m \u{1b}[1;32m200 OK\u{1b}[0m\n\u{1b}[36mContent-Type\u{1b}[0m: application/json\n"))
        #expect(output.contains("\n{\n    \u{1b}[34m\"name\"\u{1b}[0m: \u{1b}[33m\"af\"\u{1b}[0m,\n"))
        #expect(output.contains("\u{1b}[35m123456789012345678901234567890\u{1b}[0m"))
        #expect(output.contains("\u{1b}[35m1.10\u{1b}[0m"))
    }

    @Test func noColorKeepsFormattingWithoutColour() {
        let output = terminal([server.url("/json")], environment: ["NO_COLOR": "1"])
        #expect(!output.contains("\u{1b}["))
        #expect(output.contains("\n{\n    \"name\": \"af\",\n    \"version\": 1.10,\n"))
        let forced = terminal(["--pretty=all", server.url("/json")], environment: ["NO_COLOR": "1"])
        #expect(forced.contains("\u{1b}[34m\"name\""))
        // An empty NO_COLOR is unset (no-color.org); af pin read any value, even an empty one.
        #expect(terminal([server.url("/json")], environment: ["NO_COLOR": ""]).contains("\u{1b}[34m\"name\""))
    }

    /// TERM=dumb (Emacs' shell, CI logs on a pseudo-terminal) takes no escape sequences: af
    /// coloured its output and drew its progress bar there as on any terminal.
    @Test func aDumbTerminalGetsNoColoursAndNoProgressBar() {
        let output = terminal([server.url("/json")], environment: ["TERM": "dumb"])
        #expect(!output.contains("\u{1b}["))
        #expect(output.contains("\n{\n    \"name\": \"af\",\n"))
        #expect(terminal(["--pretty=colors", server.url("/json")], environment: ["TERM": "dumb"]).contains("\u{1b}[34m\"name\""))
        let directory = (try? TemporaryDirectory.make(prefix: "af-dumb")) ?? "/tmp"
        let download = terminal(["-d", "--output-dir", directory, server.url("/json")], environment: ["TERM": "dumb"])
        #expect(!download.contains("\u{1b}["), "\(download)")
        #expect(!download.contains("\r"))
        #expect(download.hasPrefix("HTTP/1.1 200 OK\nContent-Type: application/json\n"), "\(download)")
        #expect(download.contains("\naf: saved '\(directory)/json' ("), "\(download)")
    }

    @Test func stylesPickTheirPalette() {
        let output = terminal(["--style=monokai", server.url("/json")])
        #expect(output.contains("\u{1b}[38;5;197m\"name\"\u{1b}[0m"))
        let solarized = terminal(["--style=solarized", "-b", server.url("/json")])
        #expect(solarized.contains("\u{1b}[38;5;33m\"name\"\u{1b}[0m"))
    }

    @Test func serverControlCharactersAreEscapedOnATerminal() {
        let output = terminal(["--pretty=none", server.url("/escape")])
        #expect(output.contains("X-Evil: a\\x1B[2Jb\n"))
        #expect(output.contains("before\\x1B]0;pwned\\x07\\x1B[31mred\\x1B[0m after\n"))
        #expect(!output.contains("\u{1b}]0;"))
        #expect(!output.contains("\u{07}"))
    }

    @Test func pipedOutputStaysExact() {
        let result = AF.run([server.url("/escape")])
        #expect(result.out == "before\u{1b}]0;pwned\u{07}\u{1b}[31mred\u{1b}[0m after\n")
        let binary = AF.run([server.url("/binary")])
        #expect(binary.stdout == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52])
    }

    @Test func binaryIsKeptOffTheTerminal() {
        let output = terminal(["--pretty=none", server.url("/binary")])
        #expect(output.hasSuffix("\n\n[binary data not shown on the terminal: 16 B of application/octet-stream; use -o FILE or redirect the output]\n"))
        #expect(!output.contains("PNG"))
    }

    @Test func charsetFromContentTypeAndOverride() {
        #expect(terminal(["-b", server.url("/text/latin1")]) == "café\n")
        #expect(terminal(["-b", "--response-charset=utf-8", server.url("/text/latin1")]).hasPrefix("caf\u{FFFD}"))
        #expect(AF.run([server.url("/text/latin1")]).stdout == [0x63, 0x61, 0x66, 0xE9, 0x0A])
    }

    @Test func prettyModesOnAPipe() {
        let format = AF.run(["--pretty=format", "--indent=2", server.url("/json")])
        #expect(format.out.hasPrefix("{\n  \"name\": \"af\",\n  \"version\": 1.10,\n  \"big\": 123456789012345678901234567890,\n"))
        #expect(!format.out.contains("\u{1b}["))
        let colors = AF.run(["--pretty=colors", server.url("/json")])
        #expect(colors.out.hasPrefix("{\u{1b}[34m\"name\"\u{1b}[0m:\u{1b}[33m\"af\"\u{1b}[0m,"))
        let sorted = AF.run(["--pretty=format", "--sort-keys", "--indent=1", server.url("/json")])
        #expect(sorted.out.hasPrefix("{\n \"big\": 123456789012345678901234567890,\n \"empty\": {},\n"))
        let none = terminal(["--pretty=none", "-b", server.url("/json")])
        #expect(none == BuiltinRoutes.sampleJSON + "\n")
    }

    @Test func xssiPrefixIsShownAndTheRestFormatted() {
        let result = AF.run(["--pretty=format", server.url("/xssi")])
        #expect(result.out == ")]}',\n{\n    \"a\": [\n        1,\n        2\n    ]\n}\n")
    }

    @Test func invalidJSONIsPrintedAsItCame() {
        server.route("/broken") { _, _ in .json("{\"a\": [1, 2,, 3]}") }
        let result = AF.run(["--pretty=format", server.url("/broken")])
        #expect(result.out == "{\"a\": [1, 2,, 3]}")
    }

    @Test func streamWritesChunksAsTheyArrive() throws {
        server.route("/slow-stream") { _, _ in
            .custom { connection in
                connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n")
                for index in 0..<3 {
                    let line = "{\"n\":\(index)}\n"
                    connection.write(String(line.utf8.count, radix: 16) + "\r\n" + line + "\r\n")
                    Thread.sleep(forTimeInterval: 0.6)
                }
                connection.write("0\r\n\r\n")
            }
        }
        let running = AF.start(["-S", "--pretty=format", "--indent=1", server.url("/slow-stream")])
        Thread.sleep(forTimeInterval: 0.35)
        let early = running.outputSoFar
        let result = running.wait()
        #expect(early == "{\n \"n\": 0\n}\n")
        #expect(result.out == "{\n \"n\": 0\n}\n{\n \"n\": 1\n}\n{\n \"n\": 2\n}\n")
    }

    /// A body in one-byte chunks (libcurl hands each to af on its own) arrives whole and in
    /// order, past the 64 KiB af gathers small pieces into, printed as it came, formatted, and
    /// streamed. (Each byte had been a write of its own: 17 times curl's time for 2 MB.)
    @Test func aBodyInOneByteChunksArrivesWhole() throws {
        let body = Array(("[" + (0..<12_000).map { "{\"é\": \($0)}" }.joined(separator: ",") + "]").utf8)
        server.route("/one-byte-chunks") { _, _ in
            .custom { connection in
                var wire = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
                for byte in body { wire += Array("1\r\n".utf8) + [byte] + Array("\r\n".utf8) }
                connection.write(wire + Array("0\r\n\r\n".utf8))
            }
        }
        #expect(body.count > 64 * 1024)
        let exact = AF.run([server.url("/one-byte-chunks")])
        #expect(exact.status == 0)
        #expect(exact.stdout == body)
        let streamed = AF.run(["--stream", server.url("/one-byte-chunks")])
        #expect(streamed.stdout == body)
        let formatted = AF.run(["--pretty=format", "--indent=0", server.url("/one-byte-chunks")])
        #expect(formatted.out.hasPrefix("[\n{\n\"é\": 0\n},\n{\n\"é\": 1\n}"))
        #expect(formatted.out.hasSuffix("{\n\"é\": 11999\n}\n]\n"))
    }

    @Test func serverSentEventsStreamToAPipe() {
        let running = AF.start(["-S", server.url("/sse?count=40")])
        Thread.sleep(forTimeInterval: 0.5)
        let early = running.outputSoFar
        let result = running.wait()
        #expect(early.hasPrefix("event: tick\ndata: {\"n\": 0}\n\n"))
        #expect(early.count < result.out.count)
        #expect(result.out.hasSuffix("event: tick\ndata: {\"n\": 39}\n\n"))
    }

    @Test func metadataShowsEachAttempt() {
        let result = AF.run(["-m", "-b", server.url("/get")])
        #expect(result.status == 0)
        let lines = result.out.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.contains { $0.hasPrefix("Attempt 1: 200 OK  HTTP/1.1  127.0.0.1:\(server.port)  GET ") })
        #expect(lines.contains { $0.hasPrefix("  DNS ") && $0.contains("  connect ") && $0.contains("  first byte ") && $0.contains("  total ") })
        #expect(lines.contains { $0.hasPrefix("  sent ") && $0.contains("  received ") && $0.contains("  speed ") })
    }

    @Test func quietPrintsNothingButKeepsTheExitCode() {
        let result = AF.run(["-q", "--check-status", server.url("/status/404")])
        #expect(result.stdout.isEmpty)
        #expect(result.status == 4)
        #expect(result.err == "af: error: server answered 404 Not Found\n")
    }
}
