import AFTestSupport
import Foundation
import Testing

/// A file af reads that the shell also made its output: `> FILE` empties the file before af
/// starts, so an empty body went out (exit 0) and a batch file read as no requests.
@Suite struct InputIsOutputTests {
    static let original = "{\"a\": 1}\n"

    /// A directory holding `data.json` and `lines.txt`; the path the kernel gives for it.
    static func directory(lines: String = "") throws -> String {
        let directory = URL(fileURLWithPath: try TemporaryDirectory.make()).resolvingSymlinksInPath().path
        try Data(original.utf8).write(to: URL(fileURLWithPath: directory + "/data.json"))
        try Data(lines.utf8).write(to: URL(fileURLWithPath: directory + "/lines.txt"))
        return directory
    }

    static func contents(_ path: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    }

    @Test func aFileTheShellEmptiedForStandardOutputIsNamedAndNothingIsSent() throws {
        let server = try TestServer()
        let url = server.url("/post")
        let emptied = "the shell emptied that file before af started"
        let cases = [
            ("post \(url) @data.json > data.json",
             "'data.json' (from '@data.json') is also standard output: \(emptied) (> data.json), so nothing of it is left to send; send standard output to another file"),
            ("post \(url) name=@data.json > data.json",
             "'data.json' (from 'name=@data.json') is also standard output: \(emptied) (> data.json), so nothing of it is left to send; send standard output to another file"),
            ("post \(url) < data.json > data.json",
             "standard input, the body, is also standard output: \(emptied) (> DIR/data.json), so nothing of it is left to send; send standard output to another file"),
            ("post \(url) @- < data.json > data.json",
             "standard input (from '@-') is also standard output: \(emptied) (> DIR/data.json), so nothing of it is left to send; send standard output to another file"),
            ("post \(url) f@- < data.json > data.json",
             "standard input (from 'f@-') is also standard output: \(emptied) (> DIR/data.json), so nothing of it is left to send; send standard output to another file"),
            // The session file read as no JSON ("fix it or remove it").
            ("--session=./data.json \(url) > data.json",
             "the session file './data.json' (--session) is also standard output: \(emptied) (> ./data.json), so nothing of it is left to use; send standard output to another file"),
        ]
        for (command, message) in cases {
            let directory = try Self.directory()
            let (status, errors) = try AF.shell("cd '\(directory)' && '\(AF.binary)' \(command)")
            #expect(status == 64, "\(command)")
            #expect(errors == "af: error: " + message.replacingOccurrences(of: "DIR", with: directory) + "\n")
        }
        // Standard error's file: the message is written into it.
        let directory = try Self.directory()
        let (status, errors) = try AF.shell("cd '\(directory)' && '\(AF.binary)' post \(url) 'X-Sum:@data.json' 2> data.json")
        #expect(status == 64)
        #expect(errors.isEmpty)
        #expect(try Self.contents(directory + "/data.json") == "af: error: 'data.json' (from 'X-Sum:@data.json') is also standard error: \(emptied) (2> data.json), "
            + "so nothing of it is left to send; send standard error to another file\n")
        #expect(server.requests.isEmpty)
    }

    @Test func aFileSentAndAppendedToIsSentWhole() throws {
        let server = try TestServer()
        let directory = try Self.directory()
        let (status, errors) = try AF.shell("cd '\(directory)' && '\(AF.binary)' post \(server.url("/post")) @data.json >> data.json")
        #expect(status == 0)
        #expect(errors.isEmpty)
        #expect(server.requests.map { String(decoding: $0.body, as: UTF8.self) } == [Self.original])
        #expect(try Self.contents(directory + "/data.json").hasPrefix(Self.original + "{"))
    }

    @Test func theOutputFileOfDashOIsNotTheFileSentUnlessReplacedOnPurpose() throws {
        let server = try TestServer()
        let url = server.url("/post")
        let directory = try Self.directory()
        let named = try AF.shell("cd '\(directory)' && '\(AF.binary)' post \(url) @data.json -o data.json")
        #expect(named.status == 9)
        #expect(named.errors == "af: error: 'data.json' (from '@data.json') is also the output file (-o data.json): "
            + "give --overwrite to replace it with the response once it has come, or -o another file\n")
        // -c moved the file aside as data.json.part, then could not find it to send.
        let resumed = try AF.shell("cd '\(directory)' && '\(AF.binary)' post \(url) @data.json -o data.json -c")
        #expect(resumed.status == 9)
        #expect(resumed.errors == "af: error: 'data.json' (from '@data.json') is also the output file (-o data.json): "
            + "-c cannot resume a download into the file it sends; give -o another file\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["data.json", "lines.txt"])
        #expect(try Self.contents(directory + "/data.json") == Self.original)
        #expect(server.requests.isEmpty)
        // --overwrite: the file is sent, then replaced by the response.
        let replaced = try AF.shell("cd '\(directory)' && '\(AF.binary)' -q post \(url) @data.json -o data.json --overwrite")
        #expect(replaced.status == 0)
        #expect(server.requests.map { String(decoding: $0.body, as: UTF8.self) } == [Self.original])
        #expect(try Self.contents(directory + "/data.json").contains("\"body_length\": \(Self.original.utf8.count)"))
    }

    @Test func aBatchDoesNotReadItsOwnOutput() throws {
        let server = try TestServer()
        let directory = try Self.directory(lines: server.url("/get") + "\n")
        let emptied = try AF.shell("cd '\(directory)' && '\(AF.binary)' batch lines.txt > lines.txt")
        #expect(emptied.status == 64)
        #expect(emptied.errors == "af: error: the batch file 'lines.txt' is also standard output: the shell emptied that file before af started (> lines.txt), "
            + "so nothing of it is left to run; send standard output to another file\n")
        try Data((server.url("/get") + "\n").utf8).write(to: URL(fileURLWithPath: directory + "/lines.txt"))
        let streamed = try AF.shell("cd '\(directory)' && '\(AF.binary)' batch - < lines.txt >> lines.txt")
        #expect(streamed.status == 64)
        #expect(streamed.errors == "af: error: standard input, which af batch - reads its lines from, is also standard output: "
            + "af would read what it writes there as more lines; send standard output to another file\n")
        #expect(server.requests.isEmpty)
        // A file is read whole before anything is sent: appending to it is harmless.
        let appended = try AF.shell("cd '\(directory)' && '\(AF.binary)' batch lines.txt >> lines.txt")
        #expect(appended.status == 0)
        #expect(server.requests.count == 1)
    }
}
