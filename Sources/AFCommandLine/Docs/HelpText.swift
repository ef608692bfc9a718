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
        ("name=value", "Body field: JSON string (form field with --form); name=@file uses the file's text"),
        ("name:=json", "Raw JSON field, validated and sent as written: n:=1 ok:=true tags:='[\"a\"]'; name:=@file"),
        ("name@file", "File upload, makes the body multipart/form-data; name@file;type=MIME sets its type"),
        ("@file", "The whole request body, streamed from the file"),
    ]

    static let nestedJSON = "Nested JSON: user[name]=x user[tags][]=a list[0]=x []:=1 (escape separators and brackets with \\)"

    /// The full `--help` text.
    public static func help(width: Int = 100) -> String {
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
        out += """

        Exit status:
          0 success   1 network or protocol failure   2 timeout   3/4/5 3xx/4xx/5xx with --check-status
          6 too many redirects   7 TLS failure   8 pinning failure   9 output or download failure
          64 usage error   66 unreadable input file   130 interrupted   143 terminated

        Configuration: $XDG_CONFIG_HOME/af/config.json (or ~/.config/af, or $AF_CONFIG_DIR) holds
        {"default_options": ["--follow"]}; every flag has a --no- form to undo a default.
        See 'man af' for the details.

        """
        return out
    }

    /// The `--version` text: af, how it was built, and the libraries it runs on.
    public static var version: String {
        """
        af \(AFVersion.current)
        built from commit \(String(cString: af_build_commit())) on \(String(cString: af_build_date())) with Swift \(String(cString: af_build_swift()))
        libcurl \(CurlRuntime.curlVersion) (\(CurlRuntime.curlTLSBackend))
        \(CurlRuntime.openSSLVersion)
        zlib \(CurlRuntime.zlibVersionString)

        """
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + "  " : text + String(repeating: " ", count: width - text.count)
    }
}
