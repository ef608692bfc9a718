@testable import AFCommandLine
import AFEngine
import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import AFTestSupport
import Testing

/// How `af batch` splits and plans its lines (SPEC §11), without a process.
@Suite struct BatchLineTests {
    @Test(arguments: [
        ("get :8080/x", ["get", ":8080/x"]),
        ("  post  :8080/x   name=ada\t", ["post", ":8080/x", "name=ada"]),
        ("post :8080/x 'name=Ada Lovelace'", ["post", ":8080/x", "name=Ada Lovelace"]),
        ("post :8080/x \"name=Ada \\\"the\\\" Countess\"", ["post", ":8080/x", "name=Ada \"the\" Countess"]),
        ("post :8080/x name=a\\ b", ["post", ":8080/x", "name=a b"]),
        ("post :8080/x 'it'\\''s'", ["post", ":8080/x", "it's"]),
        ("get :8080/x a==$HOME b==~ c==*", ["get", ":8080/x", "a==$HOME", "b==~", "c==*"]),
        ("get :8080/x \"a==\\$HOME\\n\"", ["get", ":8080/x", "a==$HOME\\n"]),
        ("get :8080/x '' x", ["get", ":8080/x", "", "x"]),
        ("get :8080/x # a comment", ["get", ":8080/x"]),
        ("get :8080/x#fragment", ["get", ":8080/x#fragment"]),
        ("a#b'c d'e\"f\"g\\ h\té#", ["a#bc def" + "g h", "é#"]),
        // A quote followed by a combining mark is one Character but still a quote byte.
        ("x\\'\u{064C} 'y'\u{064C}", ["x'\u{064C}", "y\u{064C}"]),
        ("# only a comment", []),
        ("   ", []),
        // Lines joined by a backslash before the line break (LF or CRLF), in or out of
        // double quotes; in single quotes a line break would be kept, but a quote must close
        // on its line.
        ("get :8080/x \\\n  a==1", ["get", ":8080/x", "a==1"]),
        ("get :8080/x\\\r\n a==1 \"b==x\\\ny\"", ["get", ":8080/x", "a==1", "b==xy"]),
    ])
    func splitsWithShellQuotingAndNoExpansion(line: String, words: [String]) throws {
        #expect(try ShellWords.split(line) == words)
        #expect(try ShellWords.splitQuoted(line) == words)
    }

    /// Lines with nothing to unquote are cut at their spaces without the byte-by-byte
    /// reading, into the same words; any other line is left to it.
    @Test(arguments: [
        "http://127.0.0.1:8080/bytes/1024?i=1", "get  :8080/x   name=ada ", " ", "", "post :8080/x name=Ada\u{301} é=1 a==1",
        "get :8080/x#fragment", "get :8080/x 'q'", "get :8080/x\\ y", "get\t:8080/x", "get :8080/x \"a\"", "get :8080/x\r",
    ])
    func plainLinesSplitAsTheQuotingReaderSplitsThem(line: String) throws {
        let special = line.utf8.contains { "\t\r\n'\"\\#".utf8.contains($0) }
        #expect((ShellWords.plainWords(line) == nil) == special)
        if let plain = ShellWords.plainWords(line) { #expect(try plain == ShellWords.splitQuoted(line)) }
    }

    @Test(arguments: [
        ("get 'open", ShellWords.Problem.unterminatedSingleQuote),
        ("get \"open", .unterminatedDoubleQuote),
        ("get \"open\\\"", .unterminatedDoubleQuote),
        ("get x\\", .trailingBackslash),
        ("get \"open\\", .trailingBackslash),
        ("get x\\\r", .trailingBackslash),
    ])
    func refusesUnfinishedQuoting(line: String, problem: ShellWords.Problem) {
        #expect(throws: problem) { try ShellWords.split(line) }
        // Only a backslash at the end carries a line on to the next.
        var carry = ShellWords.Carry()
        #expect(ShellWords.continues(line, from: &carry) == (problem == .trailingBackslash))
    }

    /// Command lines as a batch file's reader hands them over: joined where a line ends with
    /// a backslash, numbered by their first line, other lines as they are.
    @Test func commandLinesJoinAtABackslashAndKeepTheirFirstLineNumber() throws {
        let directory = try TemporaryDirectory.make(prefix: "af-lines")
        let path = try TemporaryDirectory.write("one \\\n  two\ncomment # not joined \\\n'open \\\nthree \\\r\nfour \\\n", named: "lines.txt", in: directory)
        let fd = open(path, O_RDONLY)
        #expect(fd >= 0)
        defer { close(fd) }
        let reader = LineReader(fd: fd, name: "lines.txt")
        var commands: [(Int, String)] = []
        while let text = try reader.nextCommand() { commands.append((reader.commandLineNumber, text)) }
        #expect(commands.map(\.0) == [1, 3, 4, 5])
        #expect(commands.map(\.1) == ["one \\\n  two", "comment # not joined \\", "'open \\", "three \\\r\nfour \\"])
        #expect(commands.map { (_, text) in try? ShellWords.split(text) } == [["one", "two"], ["comment"], nil, nil])
    }

    /// Read only when ready (`af batch -`), a command line whose end has not arrived is left
    /// whole for the next read: neither handed over in part nor numbered twice.
    @Test func aCommandLineReadInPiecesIsHandedOverWholeOnceItsEndArrives() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let reader = LineReader(fd: ends[0], name: "standard input")
        func send(_ text: String) {
            let bytes = Array(text.utf8)
            #expect(write(ends[1], bytes, bytes.count) == bytes.count)
            #expect((try? reader.readReady()) != nil)
        }
        func available() throws -> String {
            switch try reader.availableCommand() {
            case .command(let text): return "\(reader.commandLineNumber): \(text)"
            case .later: return "later"
            case .end: return "end"
            }
        }
        #expect(try available() == "later")
        send("\u{FEFF}one \\\n")
        #expect(try available() == "later")
        send("  two \\\n  thr")
        #expect(try available() == "later")
        #expect(try available() == "later")
        send("ee\nfour\nfi")
        #expect(try available() == "1: one \\\n  two \\\n  three")
        #expect(try available() == "4: four")
        #expect(try available() == "later")
        send("ve \\\n")
        #expect(try available() == "later")
        close(ends[1])
        #expect((try? reader.readReady()) != nil)
        #expect(try available() == "5: five \\")
        #expect(try available() == "end")
    }

    /// The read end of a pipe that carries `count` request lines and is closed.
    private static func pipeOfLines(_ count: Int) throws -> Int32 {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let text = (1...count).map { "http://127.0.0.1:9/\($0)\n" }.joined()
        #expect(write(ends[1], text, text.utf8.count) == text.utf8.count)
        close(ends[1])
        return ends[0]
    }

    /// Streamed lines are let go of once handed out, also when the stream never runs dry
    /// (each line taken is replaced by the next before the list empties): memory stays
    /// bounded by the lines waiting, not by the lines read.
    @Test func streamedLinesAreLetGoOfAsTheyAreHandedOut() throws {
        let input = try Self.pipeOfLines(300)
        defer { close(input) }
        let lines = StreamedLines(capacity: 8)
        lines.start(fd: input, name: "standard input", session: Session()) {}
        lines.readable()
        var numbers: [Int] = []
        var most = 0
        while case let (line?, _) = lines.next(lane: 0) {
            numbers.append(line.number)
            most = max(most, lines.held)
            if numbers.count % 50 == 0 { lines.readable() }
        }
        #expect(numbers == Array(1...300))
        #expect(lines.next(lane: 0).ended)
        #expect(most <= 16, "\(most) lines held at once")
    }

    /// A lane but the first takes streamed lines without reading: once the first lane has
    /// stopped reading for want of room, the other lane's taking asks it to read on (on the
    /// session's thread), and every line comes, in order, with no more held than the room.
    @Test func anotherLaneAsksTheFirstToReadOn() throws {
        let input = try Self.pipeOfLines(300)
        defer { close(input) }
        let session = Session()
        let arrived = DispatchSemaphore(value: 0)
        let lines = StreamedLines(capacity: 8)
        lines.start(fd: input, name: "standard input", session: session) { arrived.signal() }
        lines.readable()
        var numbers: [Int] = []
        var most = 0
        while true {
            let (line, ended) = lines.next(lane: 1)
            most = max(most, lines.held)
            if let line {
                numbers.append(line.number)
                continue
            }
            if ended { break }
            guard arrived.wait(timeout: .now() + 5) == .success else {
                Issue.record("no more lines came after line \(numbers.last ?? 0)")
                break
            }
        }
        session.shutdownAndWait(timeout: 5)
        #expect(numbers == Array(1...300))
        #expect(most <= 16, "\(most) lines held at once")
    }

    /// Cut into reads of one byte each, lines give the same command lines, numbered the same,
    /// as read from a file in one piece.
    @Test func commandLinesReadAByteAtATimeAreTheCommandLinesOfTheWhole() throws {
        let input = "one \\\n  two\ncomment # not joined \\\n'open \\\nthree \\\r\nfour \\\n"
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { close(ends[0]) }
        let reader = LineReader(fd: ends[0], name: "standard input")
        var commands: [(Int, String)] = []
        func collect() throws {
            while case .command(let text) = try reader.availableCommand() { commands.append((reader.commandLineNumber, text)) }
        }
        for byte in Array(input.utf8) {
            #expect(write(ends[1], [byte], 1) == 1)
            try reader.readReady()
            try collect()
        }
        close(ends[1])
        try reader.readReady()
        try collect()
        #expect(try reader.availableCommand() == .end)
        #expect(commands.map(\.0) == [1, 3, 4, 5])
        #expect(commands.map(\.1) == ["one \\\n  two", "comment # not joined \\", "'open \\", "three \\\r\nfour \\"])
    }

    /// Each line is read once for whether the command goes on, from where the line before
    /// left off; joined and split, the lines give what a shell gives.
    @Test(arguments: [
        ("x\\\n#y\n", ["x#y"]),
        ("p \\\n# a comment\n", ["p"]),
        ("\"a\\\nb\" \\\nc\n", ["ab", "c"]),
        ("'q\\' \\\nr\n", ["q\\", "r"]),
        ("s \\\\\nt\n", ["s", "\\"]),
    ])
    func continuedLinesSplitAsAShellSplitsThem(file: String, words: [String]) throws {
        let directory = try TemporaryDirectory.make(prefix: "af-lines")
        let path = try TemporaryDirectory.write(file, named: "lines.txt", in: directory)
        let fd = open(path, O_RDONLY)
        #expect(fd >= 0)
        defer { close(fd) }
        let text = try #require(try LineReader(fd: fd, name: "lines.txt").nextCommand())
        #expect(try ShellWords.split(text) == words)
    }

    @Test func lineOptionsGoOnTopOfTheBatchOptions() throws {
        var base = Settings()
        base.checkStatus = true
        base.retry = 2
        let planner = LinePlanner(base: base, environment: Environment(arguments: []))
        let (settings, positionals, _) = try planner.plan(["--no-check-status", "--retry=5", "post", ":8080/x", "a=1"])
        #expect(!settings.checkStatus)
        #expect(settings.retry == 5)
        #expect(settings.ignoreStdin)
        #expect(positionals.map(\.text) == ["post", ":8080/x", "a=1"])
        // A line copied from a shell, `af` and all.
        let (copied, words, _) = try planner.plan(try #require(try LinePlanner.words("af --retry=5 post :8080/x a=1")))
        #expect(copied.retry == 5)
        #expect(words.map(\.text) == ["post", ":8080/x", "a=1"])
        #expect(try planner.plan(try #require(try LinePlanner.words("af"))).1.map(\.text) == ["af"])
        #expect(try planner.plan(["HTTP", ":8080/x"]).1.map(\.text) == ["HTTP", ":8080/x"])
        let (plain, _, _) = try planner.plan([":8080/x"])
        #expect(plain.checkStatus)
        #expect(plain.retry == 2)
        #expect(planner.environment.stdin == -1)
        #expect(!planner.environment.stderrIsTerminal)
    }

    @Test(arguments: [
        (["--parallel=2", ":8080/x"], "--parallel applies to the whole batch: give it to af batch, not on a line"),
        (["--help"], "--help has no place on a line of a batch"),
        (["-j"], "the line has no URL"),
        (["-o", "https://example.org/f"], "the line has no URL: -o took 'https://example.org/f' as its value; give -o a value of its own before the URL"),
        (["pin", "example.org"], "af pin cannot run on a line of a batch"),
        (["batch", "other.txt"], "af batch cannot run on a line of a batch"),
        (["post", ":8080/x", "@-"], "'@-' reads standard input, which is never a request body in af batch; put the body in a file and use @FILE"),
        // Standard input by its paths: the body was read as empty (exit 0), racing the lines.
        (["post", ":8080/x", "@/dev/stdin"], "'@/dev/stdin' reads standard input, which is never a request body in af batch; put the body in a file and use @FILE"),
        (["post", ":8080/x", "a=@/dev/fd/0"], "'a=@/dev/fd/0' reads standard input, which is never a request body in af batch; put the body in a file and use @FILE"),
        (["--verify=/dev/stdin", "https://example.org/"], "--verify=/dev/stdin reads standard input, which no line of af batch reads; name a file"),
        (["--cert", "/proc/self/fd/0", "https://example.org/"], "--cert=/proc/self/fd/0 reads standard input, which no line of af batch reads; name a file"),
        (["--offline", "--curl", ":8080/x"], "--offline and --curl both print instead of sending; pick one"),
    ])
    func refusesWhatALineCannotDo(words: [String], message: String) {
        let planner = LinePlanner(base: Settings(), environment: Environment(arguments: []))
        #expect(throws: CommandFailure.usage(message)) { try planner.plan(words) }
    }

    @Test(arguments: [
        // Shell syntax copied with a command: it was "'|' is not a request item", or for
        // `| jq -r .` an unknown option -r.
        ("get example.org | jq -r .", "'|' is shell syntax, but af batch runs each line without a shell: pipe the whole batch instead (af batch FILE | ...), whose output keeps line order"),
        ("get example.org > out.json", "'>' is shell syntax, but af batch runs each line without a shell: give the line -o FILE to save its body"),
        ("get example.org && echo ok", "'&&' is shell syntax, but af batch runs each line without a shell: each line is one request (--fail-fast stops the batch at its first failure)"),
        ("--raw='{}' post 'example.org' ; echo", "';' is shell syntax, but af batch runs each line without a shell: each line is one request (--fail-fast stops the batch at its first failure)"),
        ("curl -s -X POST example.org", "the line starts with 'curl', another program's name, which would be sent as the method CURL: "
            + "a line is af's [METHOD] URL [ITEMS] without a program name, as in 'get example.org/health' (write CURL to send that method)"),
        ("curl -s example.org | jq", "the line starts with 'curl', another program's name, which would be sent as the method CURL: "
            + "a line is af's [METHOD] URL [ITEMS] without a program name, as in 'get example.org/health' (write CURL to send that method)"),
    ])
    func refusesAnotherProgramsLineAndShellSyntax(line: String, message: String) {
        #expect(throws: CommandFailure.usage(message)) { try LinePlanner.words(line) }
    }

    /// What a shell would have expanded outside single quotes is noted for a warning, and
    /// still sent as written; a quoted or escaped `$`, and a `$` no name follows, are not.
    @Test(arguments: [
        ("get :8080/x Authorization:\"Bearer $TOKEN\"", "$TOKEN"),
        ("get :8080/x a==$HOME/b c==$D", "$HOME"),
        ("get :8080/x \"a==${HOME}\"", "${HOME}"),
        ("get :8080/x a==$(date) b==`id`", "$(date)"),
        ("get :8080/x \"a==`id`\"", "`id`"),
        ("get :8080/x b==\\$x 'a==$HOME' \"c==\\$y\" d==$_under_score", "$_under_score"),
        ("get :8080/x 'a==$HOME' b==\\$HOME \"c==\\$HOME\"", nil),
        ("get :8080/x price==$5 cost==a$ b==$ c==$-", nil),
        ("get :8080/x", nil),
    ] as [(String, String?)])
    func expansionsAShellWouldMakeAreNoted(line: String, expansion: String?) throws {
        let split = try #require(try LinePlanner.split(line))
        #expect(split.expansion == expansion)
        #expect(split.words == (try ShellWords.split(line)))
    }

    /// An operator quoted or escaped is data, as in a shell: a body, a value, an item.
    @Test func quotedOperatorsAreData() throws {
        let planner = LinePlanner(base: Settings(), environment: Environment(arguments: []))
        let raw = try #require(try LinePlanner.words("--raw '|' post :8080/x"))
        #expect(raw == ["--raw", "|", "post", ":8080/x"])
        #expect(try planner.plan(raw).0.raw == "|")
        #expect(try LinePlanner.words("post :8080/x \\> a=\"&&\" '2>&1'") == ["post", ":8080/x", ">", "a=&&", "2>&1"])
        #expect(try LinePlanner.words("'af' get :8080/x") == ["get", ":8080/x"])
        // A command copied with its shell prompt; a quoted '$' is a word of its own.
        #expect(try LinePlanner.words("$ af get :8080/x") == ["get", ":8080/x"])
        #expect(try LinePlanner.words("% af :8080/x a==1") == [":8080/x", "a==1"])
        #expect(try LinePlanner.words("'$' af get :8080/x") == ["$", "af", "get", ":8080/x"])
        #expect(try LinePlanner.words("$ get :8080/x") == ["$", "get", ":8080/x"])
    }

    /// The check before a run keeps what it built for the first lines, and the run sends that
    /// instead of planning them again, unless building read a file (which may change before
    /// the line runs) or made a temporary one.
    @Test func onlyLinesBuiltFromTheCommandLineAloneAreKeptFromTheCheck() throws {
        let directory = try TemporaryDirectory.make(prefix: "af-batch-plan")
        let file = try TemporaryDirectory.write("{}", named: "body.json", in: directory)
        let planner = LinePlanner(base: Settings(), environment: Environment(arguments: []))
        let kept = try planner.prepare(["post", "127.0.0.1:8080/x", "a=1", "n:=2", "X-A:b", "q==1"])
        #expect(kept.isReusable)
        #expect(kept.built.description.method == .post)
        for words in [
            ["post", "127.0.0.1:8080/x", "@" + file],
            ["post", "127.0.0.1:8080/x", "a=@" + file],
            ["post", "127.0.0.1:8080/x", "a:=@" + file],
            ["get", "127.0.0.1:8080/x", "q==@" + file],
            ["get", "127.0.0.1:8080/x", "X-A:@" + file],
            ["--form", "post", "127.0.0.1:8080/x", "f@" + file],
            ["--session=" + directory + "/s.json", "get", "127.0.0.1:8080/x"],
        ] {
            #expect(try !planner.prepare(words).isReusable, "\(words)")
        }
    }

    /// Kept plans are bounded by count and by memory: past the budget, lines are planned
    /// again when they run (and a line that reads a file always is).
    @Test func keptPlansStayWithinTheirBudget() throws {
        let directory = try TemporaryDirectory.make(prefix: "af-batch-kept")
        let body = try TemporaryDirectory.write("{}", named: "body.json", in: directory)
        let lines = ["127.0.0.1:1/a", "post 127.0.0.1:1/b @\(body)", "127.0.0.1:1/c", "127.0.0.1:1/d", "# a comment", "127.0.0.1:1/e"]
        let path = try TemporaryDirectory.write(lines.joined(separator: "\n") + "\n", named: "lines.txt", in: directory)
        let planner = LinePlanner(base: Settings(), environment: Environment(arguments: []))
        // Room for two plans of lines this long.
        let budget = 2 * FileLines.keptCost(lineLength: 13)
        let source = try FileLines(path: path, planner: planner, temporaryDirectory: directory, keptBudget: budget)
        #expect(source.total == 5)
        var contents: [String] = []
        while case let (line?, _) = source.next(lane: 0) {
            switch line.content {
            case .planned(let plan): contents.append("\(line.number) kept \(plan.built.url.path)")
            case .words(let words): contents.append("\(line.number) words \(words.count)")
            case .failure(let failure): contents.append("\(line.number) failed \(failure.message)")
            }
        }
        #expect(contents == ["1 kept /a", "2 words 3", "3 kept /c", "4 words 1", "6 words 1"])
    }

    /// When every line's plan is kept, the run sends exactly what the check planned, in line
    /// order with the lines' numbers, without reading the file again: emptying it after the
    /// check changes nothing.
    @Test func whenEveryPlanIsKeptTheFileIsNotReadAgain() throws {
        let directory = try TemporaryDirectory.make(prefix: "af-batch-kept")
        let lines = ["# endpoints", "127.0.0.1:1/a", "", "127.0.0.1:1/b -h", "127.0.0.1:1/c"]
        let path = try TemporaryDirectory.write(lines.joined(separator: "\n") + "\n", named: "lines.txt", in: directory)
        let planner = LinePlanner(base: Settings(), environment: Environment(arguments: []))
        let source = try FileLines(path: path, planner: planner, temporaryDirectory: directory)
        #expect(truncate(path, 0) == 0)
        var contents: [String] = []
        while case let (line?, _) = source.next(lane: 0) {
            guard case .planned(let plan) = line.content else {
                contents.append("\(line.number) not kept")
                continue
            }
            contents.append("\(line.number) \(plan.built.url.path)")
        }
        #expect(contents == ["2 /a", "4 /b", "5 /c"])
        #expect(source.next(lane: 0).ended)
    }

    @Test func theRetryBudgetIsAPercentageOfStartedRequestsPlusTen() {
        let budget = RetryBudget(percent: 20)
        for _ in 0..<50 { budget.noteStarted() }
        // 10 + 20 % of 50 = 20 retries.
        let granted = (0..<30).filter { _ in budget.take() }.count
        #expect(granted == 20)
        #expect(budget.usage.spent == 20)
        #expect(budget.usage.refused == 10)
        budget.noteStarted()
        budget.noteStarted()
        budget.noteStarted()
        budget.noteStarted()
        budget.noteStarted()
        #expect(budget.take(), "55 started: 21 allowed")
        #expect(!budget.take())
    }

    @Test func differentTrustOrRoutingSettingsNeverShareConnections() throws {
        var base = Settings()
        base.retry = 2
        let planner = LinePlanner(base: base, environment: Environment(arguments: []))
        func key(_ options: [String]) throws -> LinePlanner.ConnectionKey? {
            try planner.plan(options + [":8080/x"]).2
        }
        // Options that decide nothing of a connection leave a line on the batch's.
        #expect(try key([]) == nil)
        #expect(try key(["--retry=3", "-v", "--timeout=5", "--http-version=1.1"]) == nil)
        let pinA = String(repeating: "A", count: 43) + "=", pinB = String(repeating: "B", count: 43) + "="
        let apart: [[String]] = [
            ["--pin=sha256//\(pinA)"], ["--verify=/etc/ssl/ca.pem"], ["-k"],
            // Two pins are neither of them alone, nor the two in the other order.
            ["--pin=sha256//\(pinA)", "--pin=sha256//\(pinB)"], ["--pin=sha256//\(pinB)", "--pin=sha256//\(pinA)"],
            ["--resolve=example.org:443:127.0.0.1"], ["--proxy=http:http://127.0.0.1:3128"],
            ["--unix-socket=/run/api.sock"], ["--interface=lo"], ["-6"], ["--ipv4"],
            ["--tls-max=tls1.2"], ["--ssl=tls1.3"], ["--check-revocation"], ["--no-resolve"],
        ]
        var keys: Set<LinePlanner.ConnectionKey> = []
        for options in apart {
            let made = try #require(try key(options), "\(options) shares the batch's connections")
            #expect(keys.insert(made).inserted, "\(options) shares connections with another line")
        }
        // The same options given again (other options aside) share those lines' connections;
        // `-6` and `--ipv6` are one option.
        #expect(try key(["-v", "--tls-max=tls1.2", "--retry=1"]) == key(["--tls-max=tls1.2"]))
        #expect(try key(["--ipv6"]) == key(["-6"]))
    }

    /// Every option whose value changes what the engine connects with (TLS settings, proxy,
    /// addresses, socket, interface) is marked as deciding connections, so that `af batch`
    /// keeps apart the lines that give it; and so is every TLS option (trust is evaluated
    /// outside `TransferOptions`).
    @Test(arguments: OptionTable.all.map(\.long))
    func optionsThatChangeConnectionsAreMarked(long: String) throws {
        let spec = try #require(OptionTable.option(long: long))
        if spec.group == .tls { #expect(spec.decidesConnection) }
        guard spec.group.subcommand == nil else { return }
        let word = spec.value == .flag ? "--\(long)" : "--\(long)=\(spec.binding.sample ?? "")"
        let environment = Environment(arguments: [], variables: ["AF_CONFIG_DIR": "/nonexistent"])
        guard let (settings, _) = try? AFCommand.parse(Environment(arguments: [word, ":8080/x"], variables: environment.variables)),
              let options = try? RequestBuilder.transferOptions(settings, environment: environment),
              let defaults = try? RequestBuilder.transferOptions(Settings(), environment: environment) else { return }
        let changes = options.tls != defaults.tls || options.proxy != defaults.proxy || options.resolve != defaults.resolve
            || options.unixSocketPath != defaults.unixSocketPath || options.interface != defaults.interface || options.ipVersion != defaults.ipVersion
        if changes { #expect(spec.decidesConnection, "--\(long) changes connections, and af batch would let its lines share them") }
        if spec.decidesConnection, spec.group != .tls { #expect(changes, "--\(long) is marked, and changes nothing of a connection") }
    }
}
