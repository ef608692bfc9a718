import AFTestSupport
import Foundation
import Testing

/// Completions loaded into real shells, the man page rendered by groff, and install.sh.
@Suite struct ShellCompletionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    private func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws -> (String, Int32) {
        try Command.run(executable, arguments, environment: environment)
    }

    private func bash(_ words: [String]) throws -> [String] {
        let array = words.map { "'\($0)'" }.joined(separator: " ")
        let script = "source '\(Self.root)/completions/af.bash'; COMP_WORDS=(\(array)); COMP_CWORD=\(words.count - 1); _af; printf '%s\\n' \"${COMPREPLY[@]}\""
        return try run("bash", ["-c", script]).0.split(separator: "\n").map(String.init)
    }

    @Test(.enabled(if: ExternalServer.available("bash"), "bash is not installed"))
    func bashCompletesOptionsAndValues() throws {
        let options = try bash(["af", "--re"])
        #expect(options.contains("--retry="))
        #expect(options.contains("--retry-all-methods"))
        #expect(try bash(["af", "--pretty", "=", ""]) == ["all", "colors", "format", "none"])
        #expect(try bash(["af", "--pretty=c"]) == ["--pretty=colors"])
        #expect(try bash(["af", "--http-version", "2"]) == ["2", "2-prior-knowledge"])
        #expect(try bash(["af", "-A", ""]) == ["basic", "digest", "bearer"])
        #expect(try bash(["af", "-p", "HB"]).contains("HBhb"))
        #expect(try bash(["af", "p"]) == ["post", "put", "patch", "pin"])
        #expect(try bash(["af", "pin", "--f"]).contains("--file="))
        #expect(try bash(["af", "--no-fol"]) == ["--no-follow"])
    }

    @Test(.enabled(if: ExternalServer.available("fish"), "fish is not installed; ./install.sh --dev installs it"))
    func fishCompletesOptionsAndValues() throws {
        let script = "source '\(Self.root)/completions/af.fish'; complete -C 'af --re'; echo ---; complete -C 'af --pretty='; echo ---; complete -C 'af --ssl='"
        let (output, status) = try run("fish", ["--no-config", "-c", script])
        #expect(status == 0, "\(output)")
        let sections = output.components(separatedBy: "---\n")
        #expect(sections.count == 3)
        #expect(sections[0].contains("--retry\t"))
        #expect(sections[0].contains("--retry-max-time\t"))
        #expect(sections[1].split(separator: "\n").map { $0.split(separator: "\t").first.map(String.init) ?? "" } == ["--pretty=all", "--pretty=colors", "--pretty=format", "--pretty=none"])
        #expect(sections[2].contains("--ssl=tls1.3"))
    }

    @Test(.enabled(if: ExternalServer.available("zsh"), "zsh is not installed; ./install.sh --dev installs it"))
    func zshCompletesOptionsAndValues() throws {
        let home = try TemporaryDirectory.make(prefix: "af-zsh")
        let bin = home + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: AF.binary, toPath: bin + "/af")
        let driver = home + "/complete.zsh"
        // zpty drives an interactive zsh: type the words, press Tab, read what zsh lists.
        try """
        zmodload zsh/zpty
        zpty z env -i HOME=\(home) PATH="\(bin):/usr/bin:/bin" TERM=dumb zsh -f -i
        zpty -w z "fpath=(\(Self.root)/completions \\$fpath); autoload -U compinit; compinit -u -D; PS1='READY> '; zstyle ':completion:*' list-prompt ''; setopt nobeep"
        sleep 1
        while zpty -r -t z chunk; do :; done
        zpty -w -n z "$1"$'\\t'
        sleep 1
        out=''
        while zpty -r -t z chunk; do out+=$chunk; done
        print -r -- "$out"
        zpty -d z
        """.write(toFile: driver, atomically: false, encoding: .utf8)
        let (options, _) = try run("zsh", ["-f", driver, "af --re"])
        #expect(options.contains("--retry "), "\(options)")
        #expect(options.contains("--retry-max-time"))
        let (values, _) = try run("zsh", ["-f", driver, "af --pretty="])
        #expect(values.contains("all") && values.contains("colors") && values.contains("format") && values.contains("none"), "\(values)")
    }

    @Test(.enabled(if: ExternalServer.available("groff"), "groff is not installed; ./install.sh --dev installs it"))
    func manPageRendersWithoutWarnings() throws {
        let (output, status) = try run("sh", ["-c", "groff -ww -man -Tutf8 '\(Self.root)/man/af.1' 2>&1 >/dev/null"])
        #expect(status == 0)
        #expect(output.isEmpty, "groff warned: \(output)")
    }
}

@Suite struct InstallTests {
    @Test func installsIntoAPrefixAndUninstalls() throws {
        let root = ShellCompletionTests.root
        // A prefix with a space, as a home directory may have: every path is quoted.
        let prefix = try TemporaryDirectory.make(prefix: "af-prefix") + "/my tools"
        let install = Process()
        install.executableURL = URL(fileURLWithPath: root + "/install.sh")
        install.arguments = ["--no-deps", "--binary", AF.binary, "--prefix", prefix]
        let output = Pipe()
        install.standardOutput = output
        install.standardError = output
        try install.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        install.waitUntilExit()
        #expect(install.terminationStatus == 0, "\(text)")
        let files = ["bin/af", "share/man/man1/af.1", "share/bash-completion/completions/af", "share/zsh/site-functions/_af", "share/fish/vendor_completions.d/af.fish"]
        for file in files {
            #expect(FileManager.default.fileExists(atPath: prefix + "/" + file), "\(file) was not installed")
            #expect(text.contains("installed \(prefix)/\(file)"), "install.sh did not say it installed \(file)")
        }
        #expect(FileManager.default.isExecutableFile(atPath: prefix + "/bin/af"))
        // The lines it suggests for ~/.zshrc and the shell work as pasted.
        #expect(text.contains("add 'fpath=(\"\(prefix)/share/zsh/site-functions\" $fpath)' to ~/.zshrc"), "\(text)")
        #expect(text.contains("export PATH=\"\(prefix)/bin:$PATH\""), "\(text)")
        let again = Process()
        again.executableURL = install.executableURL
        again.arguments = install.arguments
        again.standardOutput = FileHandle.nullDevice
        try again.run()
        again.waitUntilExit()
        #expect(again.terminationStatus == 0, "install.sh must be idempotent")
        let uninstall = Process()
        uninstall.executableURL = install.executableURL
        uninstall.arguments = ["--uninstall", "--prefix", prefix]
        uninstall.standardOutput = FileHandle.nullDevice
        try uninstall.run()
        uninstall.waitUntilExit()
        #expect(uninstall.terminationStatus == 0)
        for file in files { #expect(!FileManager.default.fileExists(atPath: prefix + "/" + file), "\(file) was not removed") }
    }
}
