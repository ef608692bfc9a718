import AFTestSupport
import Foundation
import Testing

/// A script saved with Windows line endings runs under sh with a carriage return at the end
/// of each line's last word: an item's value, a file name or an option gained it silently.
@Suite struct ScriptLineEndingTests {
    static let advice = " ends with a carriage return (\\r), as the last word of each line does in a script saved with Windows line endings (CRLF); "
        + "convert the script to Unix line endings (dos2unix SCRIPT)\n"

    @Test func aCRLFScriptsLastWordIsNamedAndNothingIsSent() throws {
        let server = try TestServer()
        let directory = try TemporaryDirectory.make()
        let lines = [
            ("post \(server.url("/post")) name=ada", "af: error: request item 'name=ada\\r'"),
            ("\(server.url("/get")) -o \(directory)/out.json", "af: error: the value of -o, '\(directory)/out.json\\r',"),
            ("\(server.url("/get")) --follow", "af: error: '--follow\\r'"),
            ("\(server.url("/get")) --auth=bob:secret", "af: error: the value of --auth"),
        ]
        for (line, start) in lines {
            let script = directory + "/script.sh"
            try Data("'\(AF.binary)' \(line)\r\n".utf8).write(to: URL(fileURLWithPath: script))
            let (status, errors) = try AF.shell("sh '\(script)'")
            #expect(status == 64)
            #expect(errors == start + Self.advice)
        }
        #expect(server.requests.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["script.sh"])
        // The URL as the last word is taken without it (its parser drops trailing white space).
        try Data("'\(AF.binary)' -q \(server.url("/get"))\r\n".utf8).write(to: URL(fileURLWithPath: directory + "/url.sh"))
        #expect(try AF.shell("sh '\(directory)/url.sh'").status == 0)
        #expect(server.requests.map(\.target) == ["/get"])
    }
}
