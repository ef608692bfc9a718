@testable import AFCommandLine
import Testing

/// Every row of SPEC §2, separator precedence, escapes and every parse error.
@Suite struct RequestItemTests {
    @Test(arguments: [
        ("X-A:1", RequestItem.header(name: "X-A", value: "1")),
        ("X-A: spaced ", .header(name: "X-A", value: "spaced")),
        ("Accept:", .unsetHeader(name: "Accept")),
        ("X-Empty;", .emptyHeader(name: "X-Empty")),
        ("X-Token:@token.txt", .headerFromFile(name: "X-Token", path: "token.txt")),
        ("q==2", .query(name: "q", value: "2")),
        ("q==", .query(name: "q", value: "")),
        ("q==@q.txt", .queryFromFile(name: "q", path: "q.txt")),
        ("name=v", .field(key: "name", value: "v")),
        ("name=", .field(key: "name", value: "")),
        ("name=a=b", .field(key: "name", value: "a=b")),
        ("bio=@bio.txt", .fieldFromFile(key: "bio", path: "bio.txt")),
        ("n:=3", .jsonField(key: "n", json: "3")),
        ("tags:=[\"a\"]", .jsonField(key: "tags", json: "[\"a\"]")),
        ("data:=@data.json", .jsonFieldFromFile(key: "data", path: "data.json")),
        ("photo@face.png", .file(name: "photo", path: "face.png", contentType: nil)),
        ("photo@face.bin;type=image/png", .file(name: "photo", path: "face.bin", contentType: "image/png")),
        ("@body.json", .bodyFile(path: "body.json")),
        ("url=http://x:1/a", .field(key: "url", value: "http://x:1/a")),
        ("a\\:b=c", .field(key: "a:b", value: "c")),
        ("a\\=b=c", .field(key: "a=b", value: "c")),
        ("a=b\\=c", .field(key: "a", value: "b=c")),
        ("Time:12\\:30", .header(name: "Time", value: "12:30")),
        ("user[name]=x", .field(key: "user[name]", value: "x")),
        ("x==a:b", .query(name: "x", value: "a:b")),
        ("h:a=b", .header(name: "h", value: "a=b")),
        ("[]:=1", .jsonField(key: "[]", json: "1")),
    ])
    func parses(argument: String, expected: RequestItem) throws {
        #expect(try RequestItemParser.parse(argument).item == expected)
    }

    @Test func earliestSeparatorWinsThenLongest() throws {
        // ":" at position 1 beats "==" later.
        #expect(try RequestItemParser.parse("a:b==c").item == .header(name: "a", value: "b==c"))
        // At the same position, ":=" beats ":".
        #expect(try RequestItemParser.parse("a:=1").item == .jsonField(key: "a", json: "1"))
        // "==" beats "=".
        #expect(try RequestItemParser.parse("a==1").item == .query(name: "a", value: "1"))
        // ":=@" beats ":=" and ":@".
        #expect(try RequestItemParser.parse("a:=@f").item == .jsonFieldFromFile(key: "a", path: "f"))
    }

    @Test(arguments: [
        ("nothing", "is not a request item"),
        ("=@x", "has no field name before '=@'"),
        (":x", "has no header name before ':'"),
        ("a;b", "'Name;' sends an empty header and takes no value"),
        ("a=@", "names no file after '=@'"),
        ("a@", "names no file after '@'"),
        ("a@f;type=", "has an empty ;type="),
    ])
    func rejects(argument: String, message: String) {
        #expect {
            _ = try RequestItemParser.parse(argument)
        } throws: { error in
            guard let failure = error as? CommandFailure else { return false }
            return failure.exitCode == 64 && failure.message.contains(message) && failure.message.contains(argument)
        }
    }
}

@Suite struct NestedJSONTests {
    private func build(_ items: [(String, String)]) throws -> String {
        let builder = NestedJSONBuilder()
        for (key, json) in items { try builder.insert(key: key, json: json, item: "\(key)=\(json)") }
        return builder.render()
    }

    @Test func flatAndNested() throws {
        #expect(try build([("a", "\"1\""), ("b", "2")]) == #"{"a": "1", "b": 2}"#)
        #expect(try build([("user[name]", "\"x\""), ("user[tags][]", "\"a\""), ("user[tags][]", "\"b\"")])
            == #"{"user": {"name": "x", "tags": ["a", "b"]}}"#)
        #expect(try build([("list[0]", "\"x\""), ("list[2]", "\"z\"")]) == #"{"list": ["x", null, "z"]}"#)
        #expect(try build([("[]", "1"), ("[]", "2")]) == "[1, 2]")
        #expect(try build([("a[b][c][d]", "true")]) == #"{"a": {"b": {"c": {"d": true}}}}"#)
        #expect(try build([("a\\[b\\]", "1")]) == #"{"a[b]": 1}"#)
        #expect(try build([("a", "1"), ("a", "2")]) == #"{"a": [1, 2]}"#)
    }

    @Test func valuesKeepTheirText() throws {
        #expect(try build([("n", "1.10"), ("e", "1e400"), ("big", "123456789012345678901234567890")])
            == #"{"n": 1.10, "e": 1e400, "big": 123456789012345678901234567890}"#)
    }

    @Test(arguments: [
        ([("a", "1"), ("a[b]", "2")], "'a=1' and 'a[b]=2' conflict"),
        ([("a[b]", "2"), ("a", "1")], "'a[b]=2' and 'a=1' conflict"),
        ([("a[0]", "1"), ("a[b]", "2")], "'a[0]=1' and 'a[b]=2' conflict"),
        ([("[]", "1"), ("a", "2")], "'[]=1' and 'a=2' conflict"),
        ([("a[0]", "1"), ("a[0]", "2")], "'a[0]=1' and 'a[0]=2' conflict"),
    ])
    func conflictsNameBothItems(items: [(String, String)], message: String) {
        #expect {
            _ = try build(items)
        } throws: { error in
            (error as? CommandFailure)?.message.contains(message) == true
        }
    }

    @Test(arguments: ["a[b", "a]b", "a[b]c", "a[[b]]"])
    func malformedPaths(key: String) {
        #expect(throws: CommandFailure.self) { try build([(key, "1")]) }
    }
}

@Suite struct URLBuilderTests {
    @Test(arguments: [
        (":3000/x", false, "http://localhost:3000/x"),
        (":/x", false, "http://localhost/x"),
        (":", false, "http://localhost/"),
        ("example.org", false, "http://example.org/"),
        ("example.org/a", true, "https://example.org/a"),
        ("https://example.org/a/../b/./c", false, "https://example.org/b/c"),
        ("http://example.org/a b", false, "http://example.org/a%20b"),
        ("http://example.org/?q=1", false, "http://example.org/?q=1"),
        // A slash short or over after the scheme is read as curl reads it (it had been a host
        // named "https" with an empty port).
        ("https:/example.org/a", false, "https://example.org/a"),
        ("http:///example.org", true, "http://example.org/"),
        ("HTTPS:/example.org", false, "https://example.org/"),
        // Scheme-relative, as HTML writes it: the default scheme.
        ("//example.org/a", false, "http://example.org/a"),
        ("//example.org:8080", true, "https://example.org:8080/"),
        // Spaces and control characters around it are dropped, as a browser drops them: the
        // CR of `"$(cat url.txt)"` from a file with CRLF line ends was sent as %0D.
        ("http://example.org/a\r", false, "http://example.org/a"),
        (" example.org/a ", false, "http://example.org/a"),
        ("\t:3000/x\u{1}", false, "http://localhost:3000/x"),
        ("http://example.org/a b\r\n", false, "http://example.org/a%20b"),
    ])
    func shorthands(argument: String, https: Bool, expected: String) throws {
        #expect(try URLBuilder.build(argument, https: https, query: [], pathAsIs: false).string == expected)
    }

    /// An argument of nothing but blanks or control characters is an empty URL: one of
    /// control characters was read as "http://" ("no host part … check the URL ''").
    @Test(arguments: [("", ""), (" \t", " (only blanks)"), ("\r", " (only blanks and control characters)"), ("\u{1} \n", " (only blanks and control characters)")])
    func anArgumentOfNothingButBlanksIsAnEmptyURL(argument: String, what: String) {
        #expect(throws: CommandFailure.usage("the URL argument is empty\(what); give the URL to request (a variable that should hold it may be unset)")) {
            try URLBuilder.build(argument, https: false, query: [], pathAsIs: false)
        }
    }

    /// The mending alone, byte by byte: only http and https (any case), only a slash short or
    /// over, and never when nothing follows the slashes.
    @Test(arguments: [
        ("http:/h/x", "http://h/x"), ("HTTPS:///h", "HTTPS://h"), ("http:////h", "http://h"), ("hTtP:/h", "hTtP://h"),
        ("http://h", nil), ("https://h", nil), ("http:h", nil), ("http:/", nil), ("http:///", nil),
        ("ftp:/h", nil), ("htt:/h", nil), ("httpx:/h", nil), ("a:b:/h", nil), ("", nil), ("http", nil), ("https:/é", "https://é"),
    ] as [(String, String?)])
    func slashesAreMendedAsCurlReadsThem(argument: String, expected: String?) {
        #expect(URLBuilder.slashesMended(argument) == expected)
    }

    /// The shortcut for whole URLs takes only a scheme, `://` and a first byte that is no
    /// slash; everything else goes through the shorthands.
    @Test(arguments: [
        ("http://h", true), ("HTTPS://h/x", true), ("svn+ssh://h", true), ("a://b", true), ("http://h:80", true),
        ("http:///h", false), ("http:/h", false), ("http://", false), ("://h", false), (":3000/x", false),
        ("example.org", false), ("h:8080/x", false), ("http:h", false), ("", false), ("é://h", false),
    ])
    func wholeURLsAreTakenAsTheyAre(argument: String, whole: Bool) {
        #expect(URLBuilder.startsWithSchemeAndHost(argument) == whole)
    }

    @Test func pathAsIsKeepsDotSegments() throws {
        #expect(try URLBuilder.build("http://h/a/../b", https: false, query: [], pathAsIs: true).string == "http://h/a/../b")
    }

    @Test func queryItemsAreEncodedAndAppended() throws {
        let url = try URLBuilder.build("http://h/p?x=1", https: false, query: [("a b", "c&d"), ("é", "=")], pathAsIs: false)
        #expect(url.string == "http://h/p?x=1&a%20b=c%26d&%C3%A9=%3D")
    }

    /// `af -` looked up a host named "-" (exit 1, a DNS failure) instead of refusing it.
    @Test func aDashIsNoURL() {
        #expect { _ = try URLBuilder.build("-", https: false, query: [], pathAsIs: false) } throws: { error in
            (error as? CommandFailure)?.message == "'-' is not a URL: give the URL to request (a body comes from standard input by itself; af batch - reads command lines from it)"
        }
    }

    @Test func unsupportedSchemeIsAUsageError() {
        #expect { _ = try URLBuilder.build("ftp://h/x", https: false, query: [], pathAsIs: false) } throws: { error in
            (error as? CommandFailure)?.message.contains("unsupported URL scheme 'ftp'") == true
        }
    }

    @Test func methodRule() throws {
        func split(_ words: [String]) throws -> (String?, String, [String]) {
            let result = try RequestBuilder.split(words.enumerated().map { Positional(text: $1, index: $0) })
            return (result.method, result.url, result.items)
        }
        #expect(try split(["get", "x"]) == ("GET", "x", []))
        #expect(try split(["x"]) == (nil, "x", []))
        #expect(try split(["x", "a=1"]) == (nil, "x", ["a=1"]))
        #expect(try split(["example.org", "a=1"]) == (nil, "example.org", ["a=1"]))
        #expect(try split(["purge", "x", "a=1"]) == ("PURGE", "x", ["a=1"]))
        #expect(try split(["localhost", "a=1"]) == (nil, "localhost", ["a=1"]))
        #expect(try split(["localhost", "q==1"]) == (nil, "localhost", ["q==1"]))
        #expect(try split(["get", "localhost:3000"]) == ("GET", "localhost:3000", []))
        #expect(try split(["get", "http://h:1/a=b"]) == ("GET", "http://h:1/a=b", []))
    }
}

@Suite struct ArgumentParserTests {
    @Test func optionsAnywhereAndDoubleDash() throws {
        let parsed = try ParsedArguments.parse(["get", "-v", "url", "--timeout", "3", "a=1", "--", "--not-an-option"])
        #expect(parsed.positionals.map(\.text) == ["get", "url", "a=1", "--not-an-option"])
        #expect(parsed.options.map(\.spec.id) == [.verbose, .timeout])
        #expect(parsed.options[1].value == "3")
    }

    @Test func shortClusters() throws {
        let parsed = try ParsedArguments.parse(["-vvF", "-pHb", "-o", "out", "-xx"])
        #expect(parsed.options.map(\.spec.id) == [.verbose, .verbose, .follow, .print, .output, .compress, .compress])
        #expect(parsed.options[3].value == "Hb")
        #expect(parsed.options[4].value == "out")
    }

    /// A leading `~` of a path value, as a shell expands it in a word of its own.
    @Test func aLeadingTildeIsTheHomeDirectory() throws {
        #expect(HomePath.expand("~", home: "/h") == "/h")
        #expect(HomePath.expand("~/a/b", home: "/h") == "/h/a/b")
        #expect(HomePath.expand("~/a", home: "/h/") == "/h/a")
        #expect(HomePath.expand("~/a", home: "/") == "/a")
        #expect(HomePath.expand("~", home: "/") == "/")
        #expect(HomePath.expand("~root/a", home: "/h") == "/root/a")
        #expect(HomePath.expand("~root", home: "/h") == "/root")
        #expect(HomePath.expand("~no-such-user-of-af/a", home: "/h") == "~no-such-user-of-af/a")
        for kept in ["./~/a", "a~/b", "", "/~/a", "-"] { #expect(HomePath.expand(kept, home: "/h") == kept) }
        // The values of options that name files and directories, however they are given; not
        // other values, and not without a home to expand to (the redaction of --debug).
        let parsed = try ParsedArguments.parse(["--session=~/s.json", "-o", "~/out", "-o~/o2", "--output-dir=~", "--verify=~/ca.pem", "--cert-key-pass=~/x", "--auth=~:~/p", "url", "a=@~/x"], home: "/h")
        #expect(parsed.options.map(\.value) == ["/h/s.json", "/h/out", "/h/o2", "/h", "/h/ca.pem", "~/x", "~:~/p"])
        #expect(parsed.positionals.map(\.text) == ["url", "a=@~/x"])
        #expect(try ParsedArguments.parse(["--session=~/s.json"]).options[0].value == "~/s.json")
        // The files of request items.
        let item = try RequestItemParser.parse("f@~/a.png;type=image/png").item.expandingHome("/h")
        #expect(item == .file(name: "f", path: "/h/a.png", contentType: "image/png"))
        #expect(try RequestItemParser.parse("a=~/x").item.expandingHome("/h") == .field(key: "a", value: "~/x"))
    }

    @Test func negation() throws {
        var settings = Settings()
        for option in try ParsedArguments.parse(["--follow", "--no-follow"]).options { try settings.apply(option) }
        #expect(settings.follow == false)
    }

    @Test(arguments: [
        (["--retyr=3"], "unknown option '--retyr'; did you mean '--retry'?"),
        (["--folow"], "did you mean '--follow'?"),
        // Cut short: the shortest option it begins, not the nearest spelling (--form).
        (["--foll"], "unknown option '--foll'; did you mean '--follow'?"),
        (["--time"], "unknown option '--time'; did you mean '--timeout'?"),
        (["--no-folow"], "unknown option '--no-folow'; did you mean '--no-follow'?"),
        (["--no-foll"], "unknown option '--no-foll'; did you mean '--no-follow'?"),
        (["--timeout"], "option '--timeout' needs a value: --timeout=SECONDS"),
        (["--follow=yes"], "option '--follow' takes no value"),
        (["-Z"], "unknown option '-Z'"),
        // A long name after one dash is a typo, not the cluster it spells (-f -o llow would
        // write a file 'llow'); the value is left out of the message (it may be a password).
        (["-follow"], "unknown option '-follow'; did you mean '--follow'? (one dash begins one-letter options)"),
        (["-output=out.json"], "unknown option '-output'; did you mean '--output'? (one dash begins one-letter options)"),
        (["-auth=bob:secret"], "unknown option '-auth'; did you mean '--auth'? (one dash begins one-letter options)"),
        (["-no-follow"], "unknown option '-no-follow'; did you mean '--no-follow'?"),
        (["--no-version"], "unknown option '--no-version'; --version has no --no- form"),
        // curl's spellings say what af does instead (--header is not '--headers'?).
        (["--header", "X:1"], "unknown option '--header'; af sends a header given as a request item: af URL 'X-Name:value'"),
        (["-H", "X:1"], "unknown option '-H'; af sends a header given as a request item"),
        // curl's clusters in scripts, read as curl reads them.
        (["-sSL"], "unknown option '-s'; '-sSL' is curl's -s -S -L: in af, -F (af draws no progress off a terminal and always shows errors)"),
        (["-fsSL"], "unknown option '-s'; '-fsSL' is curl's -f -s -S -L: in af, --check-status -F (af draws no progress off a terminal and always shows errors)"),
        (["-sS"], "unknown option '-s'; '-sS' is curl's -s -S: in af, leave it out (af draws no progress off a terminal and always shows errors)"),
        (["-kL"], "unknown option '-L'; '-kL' is curl's -k -L: in af, -k -F"),
        // Not such a cluster: the letter's own hint.
        (["-vs"], "unknown option '-s'; '-vs' is curl's -v -s: in af, -v (af draws no progress off a terminal and always shows errors)"),
        (["-Fs"], "unknown option '-s'; af shows no progress when standard error is not a terminal"),
        // HTTPie's -s is its --style.
        (["-s", "monokai"], "unknown option '-s'; af shows no progress when standard error is not a terminal; -q prints nothing at all (curl's -s); HTTPie's -s STYLE is --style=STYLE"),
        (["-X", "POST"], "unknown option '-X'; the method goes before the URL: af POST URL"),
        // The method given, wherever curl takes it.
        (["-X", "DELETE"], "unknown option '-X'; the method goes before the URL: af DELETE URL"),
        (["-XPUT"], "unknown option '-X'; the method goes before the URL: af PUT URL"),
        (["--request=patch"], "unknown option '--request'; the method goes before the URL: af PATCH URL"),
        (["--request", "OPTIONS"], "unknown option '--request'; the method goes before the URL: af OPTIONS URL"),
        (["--data=a"], "unknown option '--data'; af sends a body from data items"),
        (["--location"], "unknown option '--location'; -F (--follow) follows redirects"),
        // curl's spelling (its --curl export writes it too), and no nearest spelling for --next.
        (["--pinnedpubkey=sha256//x"], "unknown option '--pinnedpubkey'; --pin=sha256//BASE64 requires that public key in the server's chain (repeatable)"),
        (["--next"], "unknown option '--next'; af makes one request per run; af batch FILE makes one per line of FILE"),
        // Two swapped letters are one slip; two edits in a short name are another word, so no
        // nearest spelling is offered for curl's --no-alpn (not --no-all); curl's other
        // protocols are named as such.
        (["--hedaers"], "unknown option '--hedaers'; did you mean '--headers'?"),
        (["--no-alpn"], "unknown option '--no-alpn'; see 'af --help' for the options"),
        (["--hsts"], "unknown option '--hsts'; af keeps no HSTS list: write https:// (or give --https for URLs without a scheme)"),
        (["--ftp-create-dirs"], "unknown option '--ftp-create-dirs'; af speaks http and https only"),
        (["--socks5-hostname=h:1080"], "unknown option '--socks5-hostname'; --proxy=all:socks5h://HOST:PORT sends requests through a SOCKS proxy"),
        (["-G"], "unknown option '-G'; query items go into the URL: af URL name==value"),
        (["--tlsv1.2"], "unknown option '--tlsv1.2'; --ssl=tls1.2 or --ssl=tls1.3 sets the lowest TLS version"),
        (["--oauth2-bearer", "t"], "unknown option '--oauth2-bearer'; -A bearer -a TOKEN sends a bearer token"),
        (["--disable-http2"], "unknown option '--disable-http2'; --http-version=1.1 keeps to HTTP/1.1"),
        (["--http3"], "unknown option '--http3'; af speaks HTTP/1.1 and HTTP/2 (--http-version=2), never HTTP/3"),
        (["--bearer", "t"], "unknown option '--bearer'; -A bearer -a TOKEN sends a bearer token"),
        // HTTPie's options af does without.
        (["--manual"], "unknown option '--manual'; the manual is 'man af'; --help lists the options"),
        (["--traceback"], "unknown option '--traceback'; --debug prints the versions, the parsed options and libcurl's trace"),
        (["--capath", "/etc/ssl/certs"], "unknown option '--capath'; --verify=DIR trusts a directory of hashed CA certificates"),
        // curl's options a script carries over: --cert-status was 'did you mean --check-status?'.
        (["--cert-status"], "unknown option '--cert-status'; --check-revocation requires a good stapled OCSP response"),
        (["--key", "k.pem"], "unknown option '--key'; --cert-key=FILE is the private key for --cert when it is a file of its own"),
        (["-E", "c.pem"], "unknown option '-E'; --cert=FILE is the client certificate (PEM), --cert-key=FILE its key if apart"),
        (["-D", "-"], "unknown option '-D'; -h prints only the response headers, -p hb the headers and the body"),
        (["--cookie-jar", "j"], "unknown option '--cookie-jar'; --session=NAME keeps the cookies a server sets between runs"),
        (["--ntlm"], "unknown option '--ntlm'; af speaks Basic, Digest and bearer authentication (-A), not NTLM or Negotiate"),
        (["--proto-redir", "=https"], "unknown option '--proto-redir'; af speaks http and https only, and follows redirects to nothing else"),
        (["-g"], "unknown option '-g'; af never expands [] or {} in a URL, so there is nothing to turn off"),
        // A value left out: the option after it was taken for the value (a file called
        // --follow, a session called -v).
        (["-o", "--follow", "x"], "option '-o' needs a value, not the option '--follow' after it: write -o FILE (-o=--follow if that is the value)"),
        (["--session", "-vF", "x"], "option '--session' needs a value, not the option '-vF' after it: write --session=NAME|PATH (--session=-vF if that is the value)"),
        (["--output", "--no-follow", "x"], "option '--output' needs a value, not the option '--no-follow' after it: write --output=FILE (--output=--no-follow if that is the value)"),
        (["-vo", "-pHb", "x"], "option '-o' needs a value, not the option '-pHb' after it: write -o FILE (-o=-pHb if that is the value)"),
    ])
    func errors(arguments: [String], message: String) {
        #expect {
            _ = try ParsedArguments.parse(arguments)
        } throws: { error in
            (error as? CommandFailure)?.message.contains(message) == true
        }
    }

    /// Only a whole long name after one dash is refused: a cluster whose attached value
    /// merely contains one (`-ooutput`, `-vofollow.json`) is still the cluster.
    @Test func aClusterWithAValueThatContainsALongNameIsStillACluster() throws {
        for (arguments, output) in [(["-ooutput"], "output"), (["-vofollow.json"], "follow.json"), (["-o", "follow"], "follow")] {
            let parsed = try ParsedArguments.parse(arguments)
            #expect(parsed.options.last?.spec.id == .output)
            #expect(parsed.options.last?.value == output)
        }
    }

    /// A value that reads as af's options is refused as the next argument and taken after
    /// `=`; a credential's is not repeated in the message. Other values that start with a
    /// dash are values.
    @Test func anOptionIsNoValueOfTheOptionBefore() throws {
        for (arguments, spelling, message) in [
            (["-a", "-bob:s3cret", "x"], "-a", "write -a USER[:PASS], or -a=USER[:PASS] for a value that starts with '-'"),
            (["--cert-key-pass", "-vas3cret", "x"], "--cert-key-pass", "write --cert-key-pass=PASS, which takes a value that starts with '-' too"),
        ] {
            #expect {
                _ = try ParsedArguments.parse(arguments)
            } throws: { error in
                (error as? CommandFailure)?.message == "option '\(spelling)' needs a value, not the option after it: \(message)"
            }
        }
        let taken: [([String], String)] = [
            (["-o=--follow", "x"], "--follow"), (["--output=--follow", "x"], "--follow"), (["-a=-bob:pw", "x"], "-bob:pw"),
            (["-o", "-", "x"], "-"), (["--raw", "-5"], "-5"), (["--boundary", "--unknown-word"], "--unknown-word"), (["-o", "--", "x"], "--"),
        ]
        for (arguments, value) in taken {
            #expect(try ParsedArguments.parse(arguments).options.first?.value == value, "\(arguments)")
        }
    }

    /// curl's options that af explains are options af does not have (af's own letters, such
    /// as -d, -F and -o, mean what af says), and every curl letter has its explanation.
    @Test func curlHintsCoverOnlyOptionsAfLacks() {
        let shorts = Set(OptionTable.all.compactMap(\.short))
        let longs = Set(OptionTable.all.map(\.long))
        for (letter, name) in Suggestions.curlShort {
            #expect(!shorts.contains(letter), "-\(letter) is af's own")
            #expect(Suggestions.curlLong[name] != nil, "-\(letter) (--\(name)) has no hint")
        }
        for name in Suggestions.curlLong.keys { #expect(!longs.contains(name), "--\(name) is af's own") }
        for letter in Suggestions.curlLettersForAfLongs.keys { #expect(!shorts.contains(letter), "-\(letter) is af's own") }
        #expect(Suggestions.shortHint(for: "V").contains("--version"))
        #expect(Suggestions.shortHint(for: "Z").contains("af batch --parallel"))
    }

    @Test(arguments: [
        ("--timeout=abc", "invalid value 'abc' for --timeout"),
        ("--retry=-1", "invalid value '-1' for --retry"),
        ("--pretty=fancy", "invalid value 'fancy' for --pretty: choose all, colors, format, none"),
        ("--print=Hx", "use the letters H, B, h, b and m"),
        ("--accept-status=200-199", "expected statuses, ranges and classes"),
        ("--pin=sha256//short", "invalid pin"),
        ("--max-filesize=ten", "expected a size"),
        // A name no header can have matched none, and kept nothing from a redirect.
        ("--secret-header=X-Token:", "invalid value 'X-Token:' for --secret-header: expected a header name such as X-Api-Key"),
        ("--secret-header=Api Key", "invalid value 'Api Key' for --secret-header: expected a header name"),
        // --resolve is checked as libcurl reads it (a bad entry had been a libcurl failure,
        // exit 1, after the request started).
        ("--resolve=a.test:80:notanip", "invalid value 'a.test:80:notanip' for --resolve: 'notanip' is not an IP address; expected HOST:PORT:ADDRESS"),
        ("--resolve=a.test:99999:127.0.0.1", "'99999' is not a port from 1 to 65535"),
        ("--resolve=a.test:80:127.0.0.1,", "'' is not an IP address"),
        ("--resolve=a.test:80", "no address"),
        ("--resolve=:80:127.0.0.1", "no host"),
        ("--resolve=[::1]:80:127.0.0.1", "the host is an IP address, which is never looked up"),
        // curl's spelling of --proxy, and HOST:PORT, had gone quietly direct or reached
        // libcurl as '//proxy:3128'.
        ("--proxy=http://proxy:3128", "'http://proxy:3128' for --proxy names no SCHEME for it: give all:http://proxy:3128 for every URL, or http: or https: before it"),
        ("--proxy=127.0.0.1:3128", "SCHEME is http, https or all (the URLs that go through the proxy), such as all:http://127.0.0.1:3128"),
        ("--proxy=ftp:http://proxy:3128", "SCHEME is http, https or all (the URLs that go through the proxy), such as all:http://proxy:3128"),
        // The proxy's own URL, checked as libcurl reads it (these had been connection failures
        // after the run started, and a scheme libcurl does not speak was tried as plain HTTP).
        ("--proxy=http:ftp://proxy:21", "invalid value 'http:ftp://proxy:21' for --proxy: 'ftp' is no proxy scheme af can use: http, https, socks4, socks4a, socks5 or socks5h"),
        ("--proxy=all:http://[::1:3128", "'[' without ']' around the proxy's IPv6 address"),
        ("--proxy=all:http://[::1]3128", "only ':PORT' may follow the ']' of the proxy's address"),
        ("--proxy=all:http://::1:3128", "an IPv6 address goes in brackets, as in http://[::1]:3128"),
        ("--proxy=all:proxy:99999", "'99999' is not a port from 1 to 65535"),
        ("--proxy=all:http://proxy:", "'' is not a port from 1 to 65535"),
        // A sign is no digit: Int("+80") read it as 80.
        ("--resolve=a.test:+80:127.0.0.1", "'+80' is not a port from 1 to 65535"),
        ("--resolve=-a.test:+80", "'+80' is not a port from 1 to 65535"),
        ("--proxy=all:http://user@:3128", "no proxy host"),
        // libcurl refused a space once the request was under way, quoting the URL whole in
        // its message, password and all; messages about --proxy never show the password.
        ("--proxy=all:http://user:se cret@proxy:3128", "invalid value 'all:http://user:***@proxy:3128' for --proxy: a URL holds no spaces or control characters; percent-encode them (a space is %20)"),
        ("--proxy=http://user:secret@proxy:3128", "'http://user:***@proxy:3128' for --proxy names no SCHEME for it: give all:http://user:***@proxy:3128 for every URL"),
        ("--proxy=user:secret@proxy:3128", "invalid value 'user:***@proxy:3128' for --proxy: SCHEME is http, https or all (the URLs that go through the proxy), such as all:http://user:***@proxy:3128"),
    ])
    func badValues(argument: String, message: String) throws {
        let parsed = try ParsedArguments.parse([argument])
        var settings = Settings()
        #expect {
            for option in parsed.options { try settings.apply(option) }
        } throws: { error in
            (error as? CommandFailure)?.message.contains(message) == true
        }
    }

    /// Entries libcurl takes: IPv4 and IPv6 (bare or bracketed), several addresses, `+` to
    /// time an entry out, `-HOST:PORT` to drop one, `*` for every host.
    /// Proxy URLs libcurl takes: a scheme it speaks (or none), credentials, brackets, a path.
    @Test(arguments: ["all:proxy", "http:proxy:3128", "all:HTTP://proxy:3128/", "all:socks5h://u:p@proxy:1080", "https:https://[::1]:8443",
                      "all:socks4a://[fe80::1]", "http:http://user:p%40ss@proxy"])
    func proxyURLsLibcurlTakes(value: String) throws {
        var settings = Settings()
        for option in try ParsedArguments.parse(["--proxy=" + value]).options { try settings.apply(option) }
        #expect(settings.proxies == [value])
    }

    @Test(arguments: ["a.test:80:127.0.0.1", "a.test:443:[::1]", "a.test:443:::1", "a.test:80:127.0.0.1,::1",
                      "+a.test:80:127.0.0.1", "-a.test:80", "*:80:127.0.0.1"])
    func resolveEntriesLibcurlTakes(entry: String) throws {
        var settings = Settings()
        for option in try ParsedArguments.parse(["--resolve=" + entry]).options { try settings.apply(option) }
        #expect(settings.resolve == [entry])
    }

    @Test func sizesAndStatusLists() throws {
        // Durations as they are often written, in seconds.
        #expect(try Settings.seconds("30s", "--timeout") == 30)
        #expect(try Settings.seconds("500ms", "--retry-delay") == 0.5)
        #expect(try Settings.seconds("1.5m", "--retry-max-time") == 90)
        #expect(try Settings.seconds(" 1H ", "--timeout") == 3600)
        for bad in ["s", "5ss", "0x10s", "-1s", "5d", "1e9h"] {
            #expect(throws: CommandFailure.self, "\(bad)") { try Settings.seconds(bad, "--timeout") }
        }
        #expect(try Settings.size("10M", "--max-filesize") == 10 << 20)
        #expect(try Settings.size("512k", "--max-filesize") == 512 << 10)
        // As af prints sizes ("saved 'f' (1.5 MiB)"), and with a B; a fraction needs a unit.
        #expect(try Settings.size("10MiB", "--max-filesize") == 10 << 20)
        #expect(try Settings.size("10MB", "--max-filesize") == 10 << 20)
        #expect(try Settings.size("1.5 GiB", "--max-filesize") == 3 << 29)
        #expect(try Settings.size("0.5k", "--max-filesize") == 512)
        for bad in ["1.5", "10iB", "0x10M", "1e3K", ".5M", "5.M", "-1M", "10Q"] {
            #expect(throws: CommandFailure.self, "\(bad)") { try Settings.size(bad, "--max-filesize") }
        }
        #expect(try Settings.statusList("200-299,404", "--accept-status") == [200...299, 404...404])
        // Classes as people write them.
        #expect(try Settings.statusList("4xx, 5XX,302", "--accept-status") == [400...499, 500...599, 302...302])
        for bad in ["0xx", "xx", "5x", "5xxx", "10xx", "abc"] {
            #expect(throws: CommandFailure.self, "\(bad)") { try Settings.statusList(bad, "--retry-on") }
        }
    }
}
