@testable import AFCommandLine
@_spi(Locking) import AFEngine
import AFInProcess
import AFTestSupport
import Foundation
import Testing

/// SPEC §2–§3 end to end: the exact bytes and headers of every body kind, at the server.
@Suite struct BodyTests {
    let server: TestServer
    let directory: String

    init() throws {
        server = try TestServer()
        directory = try TemporaryDirectory.make(prefix: "af-body")
    }

    private func file(_ name: String, _ contents: String) throws -> String {
        try TemporaryDirectory.write(contents, named: name, in: directory)
    }

    private func last() throws -> ServerRequest {
        try #require(server.requests.last)
    }

    /// A sniffing decoder stays undecided through ASCII, whatever the chunks: the first
    /// bytes that are not ASCII decide, a UTF-8 sequence cut between chunks is joined, a body
    /// that ends inside one is windows-1252, and a byte order mark counts however it is cut.
    @Test(arguments: [
        ([[0x61, 0x62], [0x63, 0xC3], [0xA9, 0x21]] as [[UInt8]], "abc\u{E9}!"),
        ([[0x61, 0xE2, 0x82], [0xAC]], "a\u{20AC}"),
        ([[0x61, 0x62], [0x63, 0xE9]], "abc\u{E9}"),
        ([[0x61, 0xE2, 0x82]], "a\u{E2}\u{201A}"),
        ([[0x61], [0x62, 0x80, 0x63]], "ab\u{20AC}c"),
        ([[0x3C, 0x6D, 0x65, 0x74, 0x61, 0x20, 0x63, 0x68, 0x61, 0x72, 0x73, 0x65, 0x74, 0x3D, 0x6B, 0x6F, 0x69, 0x38, 0x2D, 0x72, 0x3E], [0xF0, 0xD2]], "<meta charset=koi8-r>\u{41F}\u{440}"),
        ([[0x61], [], [0x62]], "ab"),
        // A byte order mark cut by the first chunk is still one (UTF-16LE "hé", UTF-32LE "h").
        ([[0xFF], [0xFE, 0x68, 0x00, 0xE9, 0x00]], "h\u{E9}"),
        ([[0xFF, 0xFE], [0x00, 0x00, 0x68, 0x00, 0x00, 0x00]], "h"),
        ([[0x3C], [0x00, 0x3F, 0x00]], "<?"),
        // A body shorter than a mark is decoded whole at its end.
        ([[0x61, 0xE9]], "a\u{E9}"),
        ([[0x61]], "a"),
    ])
    func sniffingDecoderWaitsForTheFirstBytesBeyondASCII(chunks: [[UInt8]], text: String) throws {
        let decoder = CharsetDecoder.sniffing()
        var shown = ""
        for chunk in chunks { shown += decoder.decode(chunk) }
        shown += decoder.decode([UInt8](), final: true)
        #expect(shown == text, "\(chunks)")
    }

    @Test func jsonBodyKeepsValuesAsWritten() throws {
        let data = try file("data.json", #"{"from": "file", "n": 1.50}"#)
        let bio = try file("bio.txt", "line one\nline \"two\"\n")
        let result = InProcessAF.run([
            server.url("/echo"), "name=ada", "age:=36", "ratio:=1.10", "huge:=1e400", "big:=123456789012345678901234567890",
            "tags:=[\"a\", 2]", "user[roles][]=admin", "user[roles][]=dev", "list[1]=x", "bio=@\(bio)", "data:=@\(data)",
        ])
        #expect(result.status == 0, "\(result.err)")
        let request = try last()
        #expect(request.method == "POST")
        #expect(request.header("Content-Type") == "application/json")
        #expect(request.header("Accept") == "application/json, */*;q=0.5")
        #expect(request.bodyText == #"{"name": "ada", "age": 36, "ratio": 1.10, "huge": 1e400, "big": 123456789012345678901234567890, "tags": ["a", 2], "user": {"roles": ["admin", "dev"]}, "list": [null, "x"], "bio": "line one\nline \"two\"\n", "data": {"from": "file", "n": 1.50}}"#)
        #expect(request.header("Content-Length") == "\(request.body.count)")
    }

    @Test func topLevelArray() throws {
        #expect(InProcessAF.run([server.url("/echo"), "[]:=1", "[]:=\"two\""]).status == 0)
        #expect(try last().bodyText == #"[1, "two"]"#)
    }

    @Test func formBody() throws {
        let text = try file("note.txt", "a&b=c")
        let result = InProcessAF.run(["-f", server.url("/echo"), "name=Ada Lovelace", "sym=é&=", "note=@\(text)", "arr[0]=x"])
        #expect(result.status == 0, "\(result.err)")
        let request = try last()
        #expect(request.header("Content-Type") == "application/x-www-form-urlencoded; charset=utf-8")
        #expect(request.bodyText == "name=Ada+Lovelace&sym=%C3%A9%26%3D&note=a%26b%3Dc&arr%5B0%5D=x")
    }

    /// A POST without a body says nothing of a type (libcurl would add a form type of its
    /// own); `--form` or `--json` without data say theirs, as in HTTPie.
    @Test func aPostWithoutABodyHasNoTypeUnlessAsked() throws {
        for (flags, type) in [([String](), nil as String?), (["--form"], "application/x-www-form-urlencoded; charset=utf-8"), (["--json"], "application/json")] {
            let result = InProcessAF.run(flags + ["POST", server.url("/echo")])
            #expect(result.status == 0, "\(result.err)")
            let request = try last()
            #expect(request.header("Content-Type") == type, "\(flags)")
            #expect(request.header("Content-Length") == "0")
            let offline = InProcessAF.run(flags + ["--offline", "-p", "H", "POST", server.url("/echo")])
            #expect(offline.out.contains("Content-Type") == (type != nil))
        }
    }

    @Test func multipartBodyPartByPart() throws {
        let text = try file("hello.txt", "hello file\n")
        let binary = directory + "/blob.bin"
        let bytes = TestData.bytes(count: 70_000)
        _ = FileManager.default.createFile(atPath: binary, contents: Data(bytes))
        let result = InProcessAF.run([
            server.url("/echo"), "title=My \"doc\"", "doc@\(text)", "raw@\(binary);type=image/png", "blob@\(binary)",
        ])
        #expect(result.status == 0, "\(result.err)")
        let request = try last()
        let type = try #require(request.header("Content-Type"))
        #expect(type.hasPrefix("multipart/form-data; boundary="))
        let boundary = String(type.dropFirst("multipart/form-data; boundary=".count))
        let parts = try #require(MultipartParser.parse(request.body, boundary: boundary))
        #expect(parts.count == 4)
        #expect(parts[0].name == "title")
        #expect(parts[0].text == "My \"doc\"")
        #expect(parts[0].headers["content-type"] == nil)
        #expect(parts[0].headers["content-disposition"] == #"form-data; name="title""#)
        #expect(parts[1].name == "doc")
        #expect(parts[1].filename == "hello.txt")
        #expect(parts[1].headers["content-type"] == "text/plain")
        #expect(parts[1].text == "hello file\n")
        #expect(parts[2].headers["content-type"] == "image/png")
        #expect(parts[2].body == bytes)
        #expect(parts[3].headers["content-type"] == "application/octet-stream")
        #expect(parts[3].filename == "blob.bin")
        #expect(request.header("Content-Length") == "\(request.body.count)")
    }

    @Test func multipartWithFixedBoundaryAndFormFlag() throws {
        let result = InProcessAF.run(["--multipart", "--boundary=XyZ", server.url("/echo"), "a=1"])
        #expect(result.status == 0)
        let request = try last()
        #expect(request.header("Content-Type") == "multipart/form-data; boundary=XyZ")
        #expect(request.bodyText == "--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--XyZ--\r\n")
    }

    /// A boundary with a space or one of `()+,/:=?` (all allowed in one) goes in quotes in
    /// `Content-Type`: unquoted, `boundary=a b` is the boundary `a` to the server's parser,
    /// which then finds no part. The delimiter lines in the body are the boundary as given.
    @Test(arguments: [("simple boundary", "\"simple boundary\""), ("a:b=c?(1)", "\"a:b=c?(1)\""), ("it's-1.0_x", "it's-1.0_x")])
    func aBoundaryThatIsNoTokenIsQuoted(boundary: String, parameter: String) throws {
        let result = InProcessAF.run(["--multipart", "--boundary=\(boundary)", server.url("/echo"), "a=1"])
        #expect(result.status == 0, "\(result.err)")
        let request = try last()
        #expect(request.header("Content-Type") == "multipart/form-data; boundary=\(parameter)")
        #expect(request.bodyText == "--\(boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--\(boundary)--\r\n")
        let related = InProcessAF.run(["--boundary=\(boundary)", server.url("/echo"), "Content-Type:multipart/related", "f@\(#filePath)"])
        #expect(related.status == 0, "\(related.err)")
        #expect(try last().header("Content-Type") == "multipart/related; boundary=\(parameter)")
        #expect(MultipartFormData(boundary: "q\"\\").boundaryParameter == #""q\"\\""#)
    }

    @Test func rawBody() throws {
        #expect(InProcessAF.run(["--raw", "hello\nworld", server.url("/echo")]).status == 0)
        let request = try last()
        #expect(request.method == "POST")
        #expect(request.bodyText == "hello\nworld")
        #expect(request.header("Content-Type") == "application/json")
    }

    @Test func wholeBodyFromFileIsStreamedWithItsType() throws {
        let path = directory + "/payload.json"
        let bytes = Array(#"{"x": [1, 2, 3]}"#.utf8) + TestData.bytes(count: 10).map { _ in UInt8(ascii: " ") }
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        #expect(InProcessAF.run(["put", server.url("/echo"), "@\(path)"]).status == 0)
        let request = try last()
        #expect(request.method == "PUT")
        #expect(request.body == bytes)
        #expect(request.header("Content-Type") == "application/json")
        #expect(request.header("Content-Length") == "\(bytes.count)")
    }

    @Test func standardInputPipeIsTheBody() throws {
        let payload = Array("{\"from\": \"stdin\"}".utf8)
        #expect(InProcessAF.run([server.url("/echo")], stdin: .bytes(payload)).status == 0)
        let request = try last()
        #expect(request.method == "POST")
        #expect(request.body == payload)
        #expect(request.header("Content-Length") == "\(payload.count)")
        #expect(request.header("Content-Type") == "application/json")
    }

    @Test func standardInputRegularFileIsTheBody() throws {
        let path = try file("in.txt", "from a file on stdin")
        #expect(InProcessAF.run(["put", server.url("/echo")], stdin: .file(path)).status == 0)
        #expect(try last().bodyText == "from a file on stdin")
    }

    @Test func emptyOrNullStdinIsNoBody() throws {
        #expect(InProcessAF.run([server.url("/echo")], stdin: .bytes([])).status == 0)
        #expect(try last().method == "GET")
        #expect(try last().body.isEmpty)
        #expect(InProcessAF.run([server.url("/echo")], stdin: .null).status == 0)
        #expect(try last().method == "GET")
    }

    @Test func ignoreStdin() throws {
        #expect(InProcessAF.run(["-I", server.url("/echo")], stdin: .bytes(Array("data".utf8))).status == 0)
        #expect(try last().method == "GET")
        #expect(try last().body.isEmpty)
    }

    /// `@/dev/null` was read as a stream of unknown length and sent chunked with no bytes;
    /// curl's `--data-binary @/dev/null` and HTTPie send `Content-Length: 0`, and a server
    /// that wants a length (S3's presigned PUT) refuses the chunked one. Still a POST.
    @Test func theNullDeviceIsAnEmptyBody() throws {
        #expect(InProcessAF.run([server.url("/echo"), "@/dev/null"]).status == 0)
        let request = try last()
        #expect(request.method == "POST")
        #expect(!request.chunked)
        #expect(request.header("Content-Length") == "0")
        #expect(request.header("Content-Type") == "application/octet-stream")
        #expect(request.body.isEmpty)
    }

    /// `af post URL < DIR`: a directory on standard input, where a file was meant, cannot be
    /// read; it was sent as no body (exit 0). Items, or -I, leave standard input unread.
    @Test func aDirectoryOnStandardInputIsNoBody() throws {
        let directory = try TemporaryDirectory.make(prefix: "af-stdin-dir")
        let message = "af: error: cannot read the body from standard input: it is a directory; redirect a file (< FILE), or give -I (--ignore-stdin) to send no body\n"
        for arguments in [["post", server.url("/echo")], ["post", server.url("/echo"), "@-"]] {
            let refused = InProcessAF.run(arguments, stdin: .file(directory))
            #expect(refused.status == 66)
            #expect(refused.err == message)
        }
        #expect(server.requests(to: "/echo").isEmpty)
        #expect(InProcessAF.run(["post", server.url("/echo"), "a=1"], stdin: .file(directory)).status == 0)
        #expect(try last().bodyText == #"{"a": "1"}"#)
        #expect(InProcessAF.run(["-I", "post", server.url("/echo")], stdin: .file(directory)).status == 0)
        #expect(try last().body.isEmpty)
    }

    @Test func chunkedBody() throws {
        #expect(InProcessAF.run(["--chunked", server.url("/echo"), "a=1"]).status == 0)
        let request = try last()
        #expect(request.chunked)
        #expect(request.header("Content-Length") == nil)
        #expect(request.bodyText == #"{"a": "1"}"#)
    }

    @Test func chunkedStdinIsStreamed() throws {
        let payload = TestData.bytes(count: 200_000)
        #expect(InProcessAF.run(["--chunked", "post", server.url("/echo")], stdin: .bytes(payload)).status == 0)
        let request = try last()
        #expect(request.chunked)
        let same = request.body == payload
        #expect(same)
    }

    @Test func compressedBodyInflatesBack() throws {
        let text = String(repeating: "compressible text ", count: 2000)
        let path = try file("big.txt", text)
        #expect(InProcessAF.run(["-x", server.url("/echo"), "text=@\(path)"]).status == 0)
        let request = try last()
        #expect(request.header("Content-Encoding") == "deflate")
        #expect(request.body.count < text.utf8.count / 10)
        let inflated = try #require(Deflate.inflate(request.body))
        #expect(String(decoding: inflated, as: UTF8.self) == "{\"text\": \"\(text)\"}")
        #expect(request.header("Content-Length") == "\(request.body.count)")
    }

    @Test func compressionIsSkippedWhenItDoesNotHelpUnlessForced() throws {
        #expect(InProcessAF.run(["-x", server.url("/echo"), "a=1"]).status == 0)
        #expect(try last().header("Content-Encoding") == nil)
        #expect(try last().bodyText == #"{"a": "1"}"#)
        #expect(InProcessAF.run(["-xx", server.url("/echo"), "a=1"]).status == 0)
        let forced = try last()
        #expect(forced.header("Content-Encoding") == "deflate")
        #expect(Deflate.inflate(forced.body).map { String(decoding: $0, as: UTF8.self) } == #"{"a": "1"}"#)
    }

    @Test func compressedMultipartFileIsStreamedThroughZlib() throws {
        let path = try file("log.txt", String(repeating: "log line\n", count: 50_000))
        #expect(InProcessAF.run(["-x", server.url("/echo"), "log@\(path)"]).status == 0)
        let request = try last()
        #expect(request.header("Content-Encoding") == "deflate")
        let inflated = try #require(Deflate.inflate(request.body))
        let type = try #require(request.header("Content-Type"))
        let parts = try #require(MultipartParser.parse(inflated, boundary: String(type.split(separator: "=").last ?? "")))
        #expect(parts.first?.text == String(repeating: "log line\n", count: 50_000))
    }

    @Test func headersFromItems() throws {
        let token = try file("token", "secret-token\n")
        #expect(InProcessAF.run([server.url("/echo"), "X-A:1", "X-A:2", "User-Agent:custom/1", "Accept:", "X-Empty;", "X-Token:@\(token)"]).status == 0)
        let request = try last()
        #expect(request.headerValues("X-A") == ["1", "2"])
        #expect(request.header("User-Agent") == "custom/1")
        #expect(request.header("Accept") == nil)
        #expect(request.headerValues("X-Empty") == [""])
        #expect(request.header("X-Token") == "secret-token")
    }

    /// A value file whose line ends in CRLF (saved on Windows, or by a tool that writes them)
    /// is one line: its header was refused as holding a line break, and its query value got
    /// `%0D%0A`. A line break inside the value is still refused.
    @Test func valueFilesEndingInCRLFAreOneLine() throws {
        let token = try file("crlf-token", "Bearer abc\r\n")
        let result = InProcessAF.run([server.url("/echo"), "Authorization:@\(token)", "q==@\(token)"])
        #expect(result.status == 0, "\(result.err)")
        let request = try last()
        #expect(request.header("Authorization") == "Bearer abc")
        #expect(request.target == "/echo?q=Bearer%20abc")
        let two = try file("crlf-two", "a\r\nb\r\n")
        let refused = InProcessAF.run([server.url("/echo"), "X-A:@\(two)"])
        #expect(refused.status == 64)
        #expect(refused.err == "af: error: header 'X-A' in 'X-A:@\(two)' contains a line break; header values must be one line\n")
    }

    @Test func queryFromFileAndEscapes() throws {
        let value = try file("q", "a b&c\n")
        #expect(InProcessAF.run([server.url("/echo?x=1"), "q==@\(value)", "k\\===v"]).status == 0)
        #expect(try last().target == "/echo?x=1&q=a%20b%26c&k%3D=v")
    }

    /// A file saved by an editor that starts it with a UTF-8 byte order mark gives each value
    /// item its text without the mark: `:=@` parses (it failed with "unexpected byte 0xef"),
    /// and a header, a query value and a string field get no three stray bytes. A body file
    /// (`@file`, `name@file`) is data and is sent as it is, mark and all.
    @Test func valueFilesLeaveAnEditorsByteOrderMarkOut() throws {
        let mark = "\u{FEFF}"
        let json = try file("bom.json", mark + #"{"n": 1}"#)
        let text = try file("bom.txt", mark + "ada\n")
        var result = InProcessAF.run([server.url("/echo"), "data:=@\(json)", "name=@\(text)", "q==@\(text)", "X-Name:@\(text)"])
        #expect(result.status == 0, "\(result.err)")
        var request = try last()
        #expect(request.bodyText == #"{"data": {"n": 1}, "name": "ada\n"}"#)
        #expect(request.target == "/echo?q=ada")
        #expect(request.header("X-Name") == "ada")
        result = InProcessAF.run(["-f", server.url("/echo"), "name=@\(text)"])
        #expect(result.status == 0, "\(result.err)")
        #expect(try last().bodyText == "name=ada%0A")
        result = InProcessAF.run([server.url("/echo"), "@\(json)"])
        #expect(result.status == 0, "\(result.err)")
        request = try last()
        #expect(request.body == Array((mark + #"{"n": 1}"#).utf8))
    }
}

/// SPEC §2 errors: a clear line, the right status, and nothing sent.
@Suite struct BodyErrorTests {
    let server: TestServer

    init() throws {
        server = try TestServer()
    }

    @Test(arguments: [
        (["n:=1."], "af: error: invalid JSON in 'n:=1.': the number '1.' is incomplete at line 1, column 3\n", Int32(64)),
        (["n:={\"a\" 1}"], "af: error: invalid JSON in 'n:={\"a\" 1}': expected ':' after the key at line 1, column 6\n", 64),
        // The usual slips get a word on what JSON wants.
        (["n:=True"], "af: error: invalid JSON in 'n:=True': unexpected 'T' at line 1, column 1; JSON's literals are true, false and null, in lower case (not True)\n", 64),
        (["n:={'a': 1}"], "af: error: invalid JSON in 'n:={'a': 1}': unexpected ''' at line 1, column 2; JSON strings take double quotes (\"x\"), not single ones (in a shell, quote the whole item: 'name:={\"x\": 1}')\n", 64),
        (["n:=[1,]"], "af: error: invalid JSON in 'n:=[1,]': unexpected ']' where a value should be at line 1, column 4; JSON allows no comma before a closing bracket\n", 64),
        (["X-A : 1"], "af: error: invalid header name 'X-A ' in 'X-A : 1': a header name has no spaces around it; write 'X-A:VALUE'\n", 64),
        // "Token:$(cat token.txt)" of a file saved with CRLF line ends.
        (["Token:abc\r"], "af: error: header 'Token' in 'Token:abc\\r' ends with a carriage return (\\r), as text from a file with CRLF line ends does; remove it (tr -d '\\r'), or read the file with 'Token:@FILE', which drops line ends\n", 64),
        (["Token:a\rb"], "af: error: header 'Token' in 'Token:a\\rb' contains a line break; header values must be one line\n", 64),
        (["a=1", "a[b]=2"], "af: error: request items 'a=1' and 'a[b]=2' conflict: 'a' cannot be both a value and an object; keep one, or give them different names\n", 64),
        (["bad"], "af: error: 'bad' is not a request item: expected Name:Value, name==value, name=value, name:=json, name@file or @file\n", 64),
        (["a=@/nonexistent/file"], "af: error: cannot read '/nonexistent/file' (from 'a=@/nonexistent/file'): no such file or directory; check the path and its permissions\n", 66),
        (["up@/nonexistent/file"], "af: error: cannot read '/nonexistent/file' (from 'up@/nonexistent/file'): no such file or directory; check the path and its permissions\n", 66),
        (["@/nonexistent/file"], "af: error: cannot read '/nonexistent/file' (from '@/nonexistent/file'): no such file or directory; check the path and its permissions\n", 66),
        (["X-Bad Name:1"], "af: error: invalid header name 'X-Bad Name' in 'X-Bad Name:1': use letters, digits and !#$%&'*+-.^_`|~\n", 64),
        (["-f", "n:=[1]"], "af: error: 'n:=[1]' is a JSON array, which a form field cannot carry; use a string, number or boolean, or drop --form\n", 64),
        // A file item makes the body multipart without --form: the way out is not "drop --form".
        (["n:=[1]", "up@/etc/hostname"], "af: error: 'n:=[1]' is a JSON array, which a form field cannot carry; use a string, number or boolean, or send no file: the file item 'up@/etc/hostname' makes the body multipart/form-data\n", 64),
        (["--multipart", "n:={}"], "af: error: 'n:={}' is a JSON object, which a form field cannot carry; use a string, number or boolean, or drop --multipart\n", 64),
        (["a=1", "@/etc/hostname"], "af: error: the body comes from both items 'a=1' and '@/etc/hostname'; give only one\n", 64),
        (["--raw", "x", "a=1"], "af: error: the body comes from both items 'a=1' and --raw; give only one\n", 64),
        // What was probably meant, where the item parser alone said "not a request item" or
        // "invalid header name '{"a"'".
        (["name", "=", "value"], "af: error: '=' alone is not a request item: write each item without spaces around its separator, such as name=value or name:=json\n", 64),
        (["name=", "value"], "af: error: 'value' is not a request item; the item before it, 'name=', ends with its separator: write the two as one argument, name=value\n", 64),
        (["q==", "two words"], "af: error: 'two words' is not a request item; the item before it, 'q==', ends with its separator: write the two as one argument, 'q==two words'\n", 64),
        (["name", "=value"], "af: error: 'name' is not a request item; the item after it, '=value', begins with its separator: write the two as one argument, name=value\n", 64),
        (["X-Id", ":seven"], "af: error: 'X-Id' is not a request item; the item after it, ':seven', begins with its separator: write the two as one argument, X-Id:seven\n", 64),
        (["age", ":=36"], "af: error: 'age' is not a request item; the item after it, ':=36', begins with its separator: write the two as one argument, age:=36\n", 64),
        (["Authorization", ":Bearer_abc"], "af: error: 'Authorization' is not a request item; the item after it (not shown: a credential) begins with its separator: write the two as one argument, Authorization:VALUE\n", 64),
        // Text where JSON goes: HTTPie's `=` was meant, or a JSON string.
        (["name:=Ada"], "af: error: invalid JSON in 'name:=Ada': unexpected 'A' at line 1, column 1; ':=' takes JSON, in which text is quoted: send the text with '=' (name=Ada) or as a JSON string ('name:=\"Ada\"')\n", 64),
        (["a[b]:=two words"], "af: error: invalid JSON in 'a[b]:=two words': 'two' is not a JSON value (true, false and null are) at line 1, column 1; ':=' takes JSON, in which text is quoted: send the text with '=' ('a[b]=two words') or as a JSON string ('a[b]:=\"two words\"')\n", 64),
        (["{\"a\": 1}"], "af: error: '{\"a\": 1}' is a JSON document, not a request item: send it as the body with --raw, @FILE or standard input, or as items such as name=value and name:=json\n", 64),
        (["-d", "[1, 2]"], "af: error: '[1, 2]' is a JSON document, not a request item: send it as the body with --raw, @FILE or standard input, or as items such as name=value and name:=json; -d means --download in af, as in HTTPie\n", 64),
        // A header value the shell split at its space: `Name:` alone leaves the header out.
        // A credential's value is not repeated (an error line ends up in a CI job's log): the
        // header's, a --secret-header's, the words the shell split off it.
        (["Authorization:", "Bearer", "abc", "a=1"], "af: error: the words after 'Authorization:' are not request items (not shown: a credential), and 'Authorization:' alone leaves that header out. Quote a header value with spaces as one argument: 'Authorization: Bearer (hidden)'\n", 64),
        (["--secret-header=x-key", "X-Key:", "abc"], "af: error: the words after 'X-Key:' are not request items (not shown: a credential), and 'X-Key:' alone leaves that header out. Quote a header value with spaces as one argument: 'X-Key: (hidden)'\n", 64),
        (["Authorization:Bearer abc\r"], "af: error: header 'Authorization' (its value not shown: a credential) ends with a carriage return (\\r), as text from a file with CRLF line ends does; remove it (tr -d '\\r'), or read the file with 'Authorization:@FILE', which drops line ends\n", 64),
        (["--secret-header=x-key", "X-Key:a\nb"], "af: error: header 'X-Key' (its value not shown: a credential) contains a line break; header values must be one line\n", 64),
        (["Cookie :sid=abc"], "af: error: invalid header name 'Cookie ' (its value not shown: a credential): a header name has no spaces around it; write 'Cookie:VALUE'\n", 64),
        (["X-Note:", "it's", "here"], "af: error: 'it's' is not a request item; it follows 'X-Note:', which alone leaves that header out. Quote a header value with spaces as one argument: 'X-Note: it'\\''s here'\n", 64),
    ])
    func rejected(items: [String], message: String, status: Int32) {
        var arguments = items
        let split = arguments.firstIndex { !$0.hasPrefix("-") && $0 != "x" } ?? 0
        arguments.insert(server.url("/echo"), at: items.first == "-f" || items.first == "--raw" ? (items.first == "--raw" ? 2 : 1) : split)
        let result = InProcessAF.run(arguments)
        #expect(result.status == status)
        #expect(result.err == message)
        #expect(server.requests.isEmpty)
    }

    @Test func headerInjectionFromFileIsRefused() throws {
        let directory = try TemporaryDirectory.make()
        let path = directory + "/h"
        try "a\r\nX-Injected: 1".write(toFile: path, atomically: false, encoding: .utf8)
        let result = InProcessAF.run([server.url("/echo"), "X-A:@\(path)"])
        #expect(result.status == 64)
        #expect(result.err == "af: error: header 'X-A' in 'X-A:@\(path)' contains a line break; header values must be one line\n")
        #expect(server.requests.isEmpty)
    }

    /// `@-` is standard input as the body, as curl's `-d @-`: it was read as a file called
    /// "-" (exit 66), or, with a pipe, refused as a second body.
    @Test func atDashIsStandardInput() {
        let piped = InProcessAF.run(["post", server.url("/echo"), "@-"], stdin: .bytes(Array("data\n".utf8)))
        #expect(piped.status == 0, "\(piped.err)")
        #expect(server.requests.last?.body == Array("data\n".utf8))
        #expect(server.requests.last?.header("Content-Type") == "application/json")
        let empty = InProcessAF.run(["post", server.url("/echo"), "@-"])
        #expect(empty.status == 0, "\(empty.err)")
        #expect(server.requests.last?.header("Content-Length") == "0")
        let count = server.requests.count
        let ignored = InProcessAF.run(["-I", "post", server.url("/echo"), "@-"], stdin: .bytes(Array("data".utf8)))
        #expect(ignored.status == 64)
        #expect(ignored.err == "af: error: '@-' reads the body from standard input, which -I (--ignore-stdin) ignores; give one of them\n")
        let both = InProcessAF.run(["post", server.url("/echo"), "@-", "a=1"], stdin: .bytes(Array("data".utf8)))
        #expect(both.status == 64)
        #expect(both.err == "af: error: the body comes from both items 'a=1' and '@-'; give only one\n")
        #expect(server.requests.count == count)
    }

    /// `--multipart` with no data item is an empty form: a body given as `@FILE`, `@-` or a
    /// pipe was dropped without a word (the empty form sent, exit 0). It is refused, before
    /// anything is sent; with nothing else, or with -I, the empty form is still what is asked.
    @Test func multipartRefusesAWholeBody() {
        let cases: [([String], AFTestSupport.StandardInput, String)] = [
            (["@/etc/hostname"], .null, "'@/etc/hostname' is a whole body; send it as a part (name@FILE) or drop --multipart"),
            (["@-"], .bytes(Array("data".utf8)), "'@-' is a whole body; send it as a part (name@-) or drop --multipart"),
            ([], .bytes(Array("data".utf8)), "standard input is a whole body; send it as a part (name@-) or drop --multipart (-I ignores standard input)"),
        ]
        for (items, stdin, message) in cases {
            let result = InProcessAF.run(["--multipart", server.url("/echo")] + items, stdin: stdin)
            #expect(result.status == 64, "\(items)")
            #expect(result.err == "af: error: --multipart makes the body a form of data items, and \(message)\n", "\(items)")
        }
        #expect(server.requests.isEmpty)
        for (extra, stdin) in [([String](), AFTestSupport.StandardInput.null), (["-I"], .file("/etc/hostname"))] {
            let empty = InProcessAF.run(["--multipart", "--boundary=B", server.url("/echo")] + extra, stdin: stdin)
            #expect(empty.status == 0, "\(empty.err)")
            #expect(server.requests.last?.bodyText == "--B--\r\n")
        }
    }

    /// libcurl sends a HEAD request without its body: `af head URL a=1` printed the body with
    /// -v as sent, dropped it, and exited 0. A body that is empty (`@/dev/null`, standard
    /// input with nothing in it) is still no body to lose.
    @Test func headRefusesABody() throws {
        let cases: [([String], AFTestSupport.StandardInput, String)] = [
            (["a=1"], .null, "the data items"),
            (["--raw=x"], .null, "--raw"),
            (["@/etc/hostname"], .null, "'@/etc/hostname'"),
            ([], .bytes(Array("x".utf8)), "standard input (-I ignores it)"),
            (["--multipart"], .null, "the multipart form"),
        ]
        for (extra, stdin, source) in cases {
            let result = InProcessAF.run(["head", server.url("/echo")] + extra, stdin: stdin)
            #expect(result.status == 64, "\(extra)")
            #expect(result.err == "af: error: a HEAD request sends no body, and \(source) would be one; drop it, or use GET or POST\n", "\(extra)")
        }
        #expect(server.requests.isEmpty)
        for (extra, stdin) in [(["@/dev/null"], AFTestSupport.StandardInput.null), ([], .bytes([])), (["-I"], .bytes(Array("x".utf8)))] {
            let result = InProcessAF.run(["head", server.url("/echo")] + extra, stdin: stdin)
            #expect(result.status == 0, "\(extra): \(result.err)")
            #expect(server.requests.last?.method == "HEAD")
        }
        #expect(server.requests.count == 3)
    }

    /// `-` as an item's file is standard input, as curl's `-F f=@-`: a file part named `-`, a
    /// field's text or JSON, a header's value. With a pipe it was refused as a second body;
    /// otherwise it was read as a file called "-" (exit 66).
    @Test func itemsReadStandardInputThroughDash() throws {
        let part = InProcessAF.run(["-f", "post", server.url("/echo"), "f@-", "a=1"], stdin: .bytes(Array("hi\n".utf8)))
        #expect(part.status == 0, "\(part.err)")
        let body = String(decoding: server.requests.last?.body ?? [], as: UTF8.self)
        #expect(body.contains("Content-Disposition: form-data; name=\"f\"; filename=\"-\"\r\nContent-Type: application/octet-stream\r\n\r\nhi\n\r\n"), "\(body)")
        let json = InProcessAF.run(["post", server.url("/echo"), "a:=@-", "b=2"], stdin: .bytes(Array("{\"x\": 1}".utf8)))
        #expect(json.status == 0, "\(json.err)")
        #expect(server.requests.last?.body == Array("{\"a\": {\"x\": 1}, \"b\": \"2\"}".utf8))
        let header = InProcessAF.run([server.url("/echo"), "X-Token:@-"], stdin: .bytes(Array("secret\n".utf8)))
        #expect(header.status == 0, "\(header.err)")
        #expect(server.requests.last?.header("X-Token") == "secret")
        // Read once, by one item, and never a standard input that is ignored.
        let count = server.requests.count
        let twice = InProcessAF.run([server.url("/echo"), "X-Token:@-", "q==@-"], stdin: .bytes(Array("x".utf8)))
        #expect(twice.status == 64)
        #expect(twice.err == "af: error: standard input can be read once, by one item; 'X-Token:@-' and 'q==@-' both read it\n")
        let ignored = InProcessAF.run(["-I", "-f", "post", server.url("/echo"), "f@-"], stdin: .bytes(Array("x".utf8)))
        #expect(ignored.status == 64)
        #expect(ignored.err == "af: error: 'f@-' reads standard input, which -I (--ignore-stdin) ignores; give one of them\n")
        #expect(server.requests.count == count)
    }

    @Test func bodyItemsWithStdinDataAreRefused() {
        let result = InProcessAF.run([server.url("/echo"), "a=1"], stdin: .bytes(Array("data".utf8)))
        #expect(result.status == 64)
        #expect(result.err == "af: error: the body comes from both items 'a=1' and standard input; give only one (use -I to ignore standard input)\n")
        #expect(server.requests.isEmpty)
    }
}

/// A pipe on standard input that gives nothing for a while gets one line saying what af waits
/// for (a CI step whose standard input is an open pipe held af without a word).
@Suite struct StandardInputWaitTests {
    @Test func aSilentPipeGetsOneNoticeThenIsReadToItsEnd() throws {
        let directory = try TemporaryDirectory.make(prefix: "af-stdin-wait")
        for (delay, noticed) in [(0.6, true), (0.0, false)] {
            var ends: [Int32] = [0, 0]
            #expect(pipe(&ends) == 0)
            let writer = ends[1]
            let thread = Thread {
                if delay > 0 { Thread.sleep(forTimeInterval: delay) }
                _ = "body".withCString { write(writer, $0, 4) }
                close(writer)
            }
            thread.start()
            let notices = Locked([String]())
            let notice = StandardInput.WaitNotice(seconds: 0.2) { text in notices.withLock { $0.append(text) } }
            let held = try StandardInput.hold(ends[0], temporaryDirectory: directory, notice: notice)
            close(ends[0])
            guard case .bytes(let bytes) = held else {
                Issue.record("four bytes are held in memory, not \(String(describing: held))")
                return
            }
            #expect(bytes == Array("body".utf8))
            let seen = notices.withLock { $0 }
            #expect(seen == (noticed ? ["nothing has come on standard input in 200ms; af waits for it to end as the request body (give -I, --ignore-stdin, when it is not the body)"] : []), "delay \(delay)")
        }
    }

    /// A pipe as the body (`@<(command)`, here the test's own pipe by its /proc path) was
    /// read as the transfer sent it, on the transfer's thread: `--timeout=1` fired only once
    /// the pipe gave bytes again (exit 2 after the writer's pause), and nothing said what af
    /// waited for. Now it is read whole first, with the notice, and sent with its length;
    /// `--chunked` still streams it.
    @Test func aPipeBodyIsReadBeforeTheTransfer() throws {
        let server = try TestServer()
        func pipeWriting(_ text: String, after delay: Double) -> (read: Int32, path: String) {
            var ends: [Int32] = [0, 0]
            #expect(pipe(&ends) == 0)
            let writer = ends[1]
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: delay)
                _ = Array(text.utf8).withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
                close(writer)
            }
            return (ends[0], "/proc/self/fd/\(ends[0])")
        }
        let late = pipeWriting("late body", after: 1.2)
        let held = InProcessAF.run(["--timeout=1", "post", server.url("/post"), "@" + late.path], noticeDelays: NoticeDelays(silentInput: 0.3))
        close(late.read)
        #expect(held.status == 0, "\(held.err)")
        #expect(held.err == "af: nothing has come on '\(late.path)' in 300ms; af reads it to its end before sending the request (--chunked sends it as it comes)\n")
        let sent = try #require(server.requests(to: "/post").last)
        #expect(sent.bodyText == "late body" && sent.header("Content-Length") == "9" && !sent.chunked)
        let streamed = pipeWriting("streamed", after: 0)
        let chunked = InProcessAF.run(["--chunked", "post", server.url("/post"), "@" + streamed.path])
        close(streamed.read)
        #expect(chunked.status == 0, "\(chunked.err)")
        let second = try #require(server.requests(to: "/post").last)
        #expect(second.bodyText == "streamed" && second.chunked)
        // -v shows what it held, with its length. (--offline does not read it: a pipe may
        // never end, or a FIFO never get its writer.)
        let shown = pipeWriting("{\"a\": 1}", after: 0)
        let verbose = InProcessAF.run(["-p", "HB", "post", server.url("/post"), "@" + shown.path, "Content-Type:application/json"])
        close(shown.read)
        #expect(verbose.status == 0, "\(verbose.err)")
        #expect(verbose.out.contains("Content-Length: 8\n") && verbose.out.hasSuffix("\n\n{\"a\": 1}\n"), "\(verbose.out)")
        #expect(try #require(server.requests(to: "/post").last).bodyText == "{\"a\": 1}")
    }

    /// A named FIFO whose writer comes late: `open` waited for it without a word. It is
    /// opened without waiting, and the wait for its first bytes gets the notice; a writer that
    /// comes and goes without writing is an empty body, not a wait for ever.
    @Test func aFIFOBodyWaitingForItsWriterSaysSo() throws {
        let server = try TestServer()
        let fifo = try TemporaryDirectory.make(prefix: "af-fifo-body") + "/body"
        #expect(mkfifo(fifo, 0o600) == 0)
        for text in ["late body", ""] {
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: 1)
                let handle = FileHandle(forWritingAtPath: fifo)
                handle?.write(Data(text.utf8))
                try? handle?.close()
            }
            let result = InProcessAF.run(["post", server.url("/post"), "@" + fifo], noticeDelays: NoticeDelays(silentInput: 0.3))
            #expect(result.status == 0, "\(result.err)")
            #expect(result.err == "af: nothing has come on '\(fifo)' in 300ms; af reads it to its end before sending the request (--chunked sends it as it comes)\n")
            let sent = try #require(server.requests(to: "/post").last)
            #expect(sent.bodyText == text && sent.header("Content-Length") == String(text.utf8.count))
        }
    }

    /// A value item from a pipe that gives nothing for a while (`a=@-` with a CI step's open
    /// standard input, `X-Token:@fifo` before its writer): af waited without a word (in
    /// `open`, for a FIFO), and an interrupted wait named standard input `/proc/self/fd/0`.
    @Test func aValueFromAPipeThatComesLateSaysSo() throws {
        let server = try TestServer()
        let delays = NoticeDelays(silentInput: 0.3)
        let value = InProcessAF.run(["post", server.url("/post"), "a=@-"], stdin: .later(Array("late value\n".utf8), seconds: 1), noticeDelays: delays)
        #expect(value.status == 0, "\(value.err)")
        #expect(value.err == "af: nothing has come on standard input in 300ms; af reads it to its end as the value of 'a=@-'\n")
        #expect(try #require(server.requests(to: "/post").last).bodyText == "{\"a\": \"late value\\n\"}")
        let fifo = try TemporaryDirectory.make(prefix: "af-fifo-value") + "/token"
        #expect(mkfifo(fifo, 0o600) == 0)
        for quiet in [false, true] {
            Thread.detachNewThread {
                Thread.sleep(forTimeInterval: 1)
                let handle = FileHandle(forWritingAtPath: fifo)
                handle?.write(Data("s3cret\n".utf8))
                try? handle?.close()
            }
            let header = InProcessAF.run((quiet ? ["-q"] : []) + [server.url("/get"), "X-Token:@" + fifo], noticeDelays: delays)
            #expect(header.status == 0, "\(header.err)")
            #expect(header.err == (quiet ? "" : "af: nothing has come on '\(fifo)' in 300ms; af reads it to its end as the value of 'X-Token:@\(fifo)'\n"))
            #expect(try #require(server.requests(to: "/get").last).header("X-Token") == "s3cret")
        }
    }

    /// The wait is the environment's (`NoticeDelays.silentInput`): a body on standard input
    /// that comes late gets the notice through the whole command, as `af batch -`'s lines do
    /// (a batch held by an open standard input said nothing); lines that come in time, or
    /// `-q`, get none.
    @Test func aBatchWaitingForItsLinesSaysSo() throws {
        let server = try TestServer()
        server.route("/line") { request, _ in .text("ok \(request.body.count)") }
        let delays = NoticeDelays(silentInput: 0.3)
        let body = InProcessAF.run(["post", server.url("/line")], stdin: .later(Array("body".utf8), seconds: 1), noticeDelays: delays)
        #expect(body.status == 0, "\(body.err)")
        #expect(body.out == "ok 4")
        #expect(body.err == "af: nothing has come on standard input in 300ms; af waits for it to end as the request body (give -I, --ignore-stdin, when it is not the body)\n")
        let lines = Array("\(server.url("/line"))\n".utf8)
        let late = InProcessAF.run(["batch", "-"], stdin: .later(lines, seconds: 2), noticeDelays: delays)
        #expect(late.status == 0, "\(late.err)")
        #expect(late.out == "ok 0")
        #expect(late.err == "af: nothing has come on standard input in 300ms; af batch - reads its lines there until it ends\n")
        let prompt = InProcessAF.run(["batch", "-"], stdin: .bytes(lines), noticeDelays: delays)
        #expect(prompt.out == "ok 0" && prompt.err.isEmpty, "\(prompt.err)")
        let quiet = InProcessAF.run(["batch", "-q", "-"], stdin: .later(lines, seconds: 2), noticeDelays: delays)
        #expect(quiet.status == 0 && quiet.err.isEmpty, "\(quiet.err)")
    }
}

/// A token command that runs on gets one line saying af waits for it, and how to limit it:
/// without --timeout, `--auth-cmd` held a script without a word for as long as it ran.
@Suite struct TokenCommandWaitTests {
    @Test func aSlowTokenCommandGetsOneNotice() {
        for (command, limit, noticed) in [("sleep 0.6; echo slow", nil as Double?, true), ("sleep 0.6; echo slow", 5, true), ("echo quick", nil, false)] {
            let notices = Locked([String]())
            let notice = StandardInput.WaitNotice(seconds: 0.2) { text in notices.withLock { $0.append(text) } }
            let result = CommandTokenProvider.fetch(AuthCommand(command: command, timeLimit: limit), environment: ["PATH": "/usr/bin:/bin"], notice: notice)
            #expect((try? result.get()) == (noticed ? "slow" : "quick"))
            let advice = limit == nil ? "give --timeout to limit it" : "--timeout limits it"
            let seen = notices.withLock { $0 }
            #expect(seen == (noticed ? ["--auth-cmd '\(command)' has not finished in 200ms; af waits for its token (\(advice))"] : []), "\(command)")
        }
    }

    /// The lines of `af batch` that share a command share its notice: one, however many wait.
    @Test func aSharedTokenCommandGetsOneNotice() {
        let notices = Locked([String]())
        let notice = StandardInput.WaitNotice(seconds: 0.2) { text in notices.withLock { $0.append(text) } }
        let shared = SharedCommandToken(command: AuthCommand(command: "sleep 0.6; echo shared"), environment: ["PATH": "/usr/bin:/bin"], notice: notice)
        let tokens = Locked([String]())
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<3 {
            shared.token(replacing: nil) { result in
                tokens.withLock { $0.append((try? result.get()) ?? "failed") }
                done.signal()
            }
        }
        for _ in 0..<3 { #expect(done.wait(timeout: .now() + 10) == .success) }
        #expect(tokens.withLock { $0 } == ["shared", "shared", "shared"])
        #expect(notices.withLock { $0 } == ["--auth-cmd 'sleep 0.6; echo shared' has not finished in 200ms; af waits for its token (give --timeout to limit it)"])
    }
}
