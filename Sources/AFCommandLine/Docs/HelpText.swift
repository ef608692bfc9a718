import AFEngine
import CBuildInfo

/// `af --help` and `af --version`, generated from the option table.
public enum HelpText {
    static let synopsis = [
        "af [OPTIONS] [METHOD] URL [REQUEST_ITEM ...]",
        "af batch [OPTIONS] FILE|-   (one af command line per line of FILE)",
        "af pin HOST[:PORT] | af pin --file CERT.pem",
        "af --help | af --version",
    ]

    /// The request-item table shown by `--help` and the man page.
    static let requestItems: [(String, String)] = [
        ("Name:Value", "Request header (repeat to send twice); 'Name:' unsets a default, 'Name;' sends it empty"),
        ("Name:@file", "Header value read from a file"),
        ("name==value", "URL query parameter, percent-encoded; name==@file reads the value from a file"),
        ("name=value", "Body field: JSON string (form field with --form); name=@file uses the file's UTF-8 text"),
        ("name:=json", "Raw JSON field, validated and sent as written: n:=1 ok:=true tags:='[\"a\"]'; name:=@file"),
        ("name@file", "File upload, makes the body multipart/form-data; name@file;type=MIME sets its type"),
        ("@file", "The whole request body, streamed from the file; @- reads it from standard input"),
        ("ITEM@-", "Any item's file may be - for standard input, read by that one item: f@- a:=@- 'Token:@-'"),
    ]

    static let nestedJSON = "Nested JSON: user[name]=x user[tags][]=a list[0]=x []:=1 (escape separators and brackets with \\)"

    /// The full `--help` text: for a terminal `width` columns wide, each line wrapped to fit
    /// it (`fit`); with no width (into a pipe or file), one line per option or item, whole, for
    /// `grep`.
    public static func help(width: Int? = nil) -> String {
        let text = unwrappedHelp(exitStatusWidth: min(width ?? 100, 100))
        return width.map { fit(text, width: $0) } ?? text
    }

    /// Each line longer than `width` − 1 columns broken at spaces, its continuation lines
    /// indented to where its text starts: a table row's description column (after the run of
    /// spaces that ends the left column), else its own indentation. A word longer than the
    /// room is left whole on a line of its own.
    static func fit(_ text: String, width: Int) -> String {
        let room = max(width - 1, 20)
        var out = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            guard line.count > room else {
                out += line + "\n"
                continue
            }
            let indent = hangingIndent(of: line)
            // A hanging indent that leaves too little room falls back to the line's own.
            let hang = room - indent >= 20 ? indent : line.prefix { $0 == " " }.count
            var current = ""
            for word in line.dropFirst(hang).split(separator: " ", omittingEmptySubsequences: true) {
                if current.isEmpty {
                    current = String(line.prefix(hang)) + word
                } else if current.count + 1 + word.count <= room {
                    current += " " + word
                } else {
                    out += current + "\n"
                    current = String(repeating: " ", count: hang) + word
                }
            }
            out += current + "\n"
        }
        return String(out.dropLast())
    }

    /// Where a line's text starts: after the first run of two or more spaces that follows
    /// its first word (`  -t, --timeout=SECONDS    Seconds …`), else after its leading spaces.
    private static func hangingIndent(of line: Substring) -> Int {
        let characters = Array(line)
        let leading = characters.prefix { $0 == " " }.count
        var index = leading
        while index < characters.count {
            if characters[index] == " ", index + 1 < characters.count, characters[index + 1] == " " {
                var end = index
                while end < characters.count, characters[end] == " " { end += 1 }
                return end < characters.count ? end : leading
            }
            index += 1
        }
        return leading
    }

    private static func unwrappedHelp(exitStatusWidth: Int) -> String {
        var out = "af \(AFVersion.current) - a command-line HTTP client on libcurl\n\nUsage:\n"
        for line in synopsis { out += "  \(line)\n" }
        out += "\nMETHOD defaults to GET, or POST when there is a body. URL shorthands: example.org, :3000/path (localhost).\n"
        out += "\nRequest items:\n"
        for (syntax, meaning) in requestItems { out += "  " + pad(syntax, 14) + meaning + "\n" }
        out += "  " + nestedJSON + "\n"
        for group in OptionGroup.allCases {
            out += "\n\(group.rawValue):\n"
            for spec in OptionTable.all where spec.group == group {
                let short = spec.short.map { "-\($0), " } ?? "    "
                out += "  " + pad(short + spec.usage, 30) + spec.help + "\n"
            }
            out += "  Example: \(group.example)\n"
        }
        out += "\nExit status:\n"
        var line: [String] = []
        for entry in ExitStatus.table {
            let item = "\(entry.codes.map(String.init).joined(separator: "/")) \(entry.brief)"
            if 2 + (line + [item]).joined(separator: "   ").count > exitStatusWidth - 1 {
                out += "  " + line.joined(separator: "   ") + "\n"
                line = []
            }
            line.append(item)
        }
        out += "  " + line.joined(separator: "   ") + "\n"
        out += """

        Configuration: $XDG_CONFIG_HOME/af/config.json (or ~/.config/af, or
        $AF_CONFIG_DIR) holds {"default_options": ["--follow"]}; a --no- form undoes a
        default (--no-follow, and --no-proxy for an option with a value; --verify has
        none). See 'man af' for the details.

        """
        return out
    }

    /// The `--version` text: af, how it was built, and the libraries it runs on.
    public static var version: String {
        """
        af \(AFVersion.current)
        \(buildLine(commit: String(cString: af_build_commit()), date: String(cString: af_build_date()), swift: String(cString: af_build_swift())))
        libcurl \(CurlRuntime.curlVersion) (\(CurlRuntime.curlTLSBackend))
        \(CurlRuntime.openSSLVersion)
        zlib \(CurlRuntime.zlibVersionString)

        """
    }

    /// How af was built, as install.sh records it; a plain `swift build` records nothing,
    /// which "built from commit unknown on unknown with Swift unknown" said three times.
    static func buildLine(commit: String, date: String, swift: String) -> String {
        if commit == "unknown", date == "unknown", swift == "unknown" {
            return "built without build information (./install.sh records the commit, its date and the Swift version)"
        }
        return "built from commit \(commit) on \(date) with Swift \(swift)"
    }

    /// `text` and the spaces that take it to `width` columns: at least two, which is where
    /// `fit` sees the description column start.
    static func pad(_ text: String, _ width: Int) -> String {
        text.count > width - 2 ? text + "  " : text + String(repeating: " ", count: width - text.count)
    }
}
