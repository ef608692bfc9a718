import AFEngine

/// A download (`-d`, `-o`) asks for the body unencoded (`Accept-Encoding: identity`), so the
/// file holds the resource's own bytes. A server that compresses everything sends it gzipped
/// anyway, and the saved `report.json` was gzip data, exit 0, without a word. af keeps the
/// bytes as sent, as curl and wget do (a `.tar.gz` served with `Content-Encoding: gzip`, a
/// common misconfiguration, must not be saved as a tar), and says so, with the command that
/// decodes them.
enum EncodedDownload {
    /// The warning for a body saved as `path` (or written to a stream, `path` being its name
    /// as the summary gives it) that came with `head`'s content codings; nil when it came
    /// unencoded, or when the file is itself compressed by that coding (`x.tar.gz` sent with
    /// `gzip`, a `Content-Type` of `application/gzip`).
    static func warning(savedAs path: String, toStream: Bool, head: ResponseHead?) -> String? {
        guard let head, head.headers.contains(.contentEncoding) else { return nil }
        let codings = head.headers.values(for: .contentEncoding)
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: " \t").lowercased() }
            .filter { !$0.isEmpty && $0 != "identity" }
        guard let first = codings.first else { return nil }
        let mediaType = MediaType.essence(head.headers.value(for: .contentType))
        if codings.count == 1, let file = Self.files[first] {
            let name = path.lowercased()
            if file.extensions.contains(where: { name.hasSuffix($0) }) || file.mediaTypes.contains(mediaType) { return nil }
        }
        let shown = Quote.argument(path)
        let what = toStream ? shown : "'\(shown)'"
        let way = codings.count == 1 ? Self.files[first]?.decoder : nil
        let decode = way.map { !toStream ? " (\($0) \(Quote.shellWord(path)) decodes it)" : " (pipe it to \($0))" } ?? ""
        return "warning: the server sent the body \(codings.joined(separator: ", "))-encoded (Content-Encoding: \(codings.joined(separator: ", "))) "
            + "though af asked for it unencoded; \(what) \(toStream ? "got" : "holds") it as sent\(decode)"
    }

    /// What a file compressed by a coding is called, and the command that decodes one.
    private struct CompressedFile {
        let extensions: [String]
        let mediaTypes: [String]
        let decoder: String?
    }

    private static let files: [String: CompressedFile] = {
        let gzip = CompressedFile(extensions: [".gz", ".tgz", ".gzip", ".svgz"], mediaTypes: ["application/gzip", "application/x-gzip"], decoder: "gzip -dc")
        return [
            "gzip": gzip,
            "x-gzip": gzip,
            "br": CompressedFile(extensions: [".br"], mediaTypes: ["application/x-brotli"], decoder: "brotli -dc"),
            "zstd": CompressedFile(extensions: [".zst", ".zstd", ".tzst"], mediaTypes: ["application/zstd"], decoder: "zstd -dc"),
            "deflate": CompressedFile(extensions: [".zz"], mediaTypes: ["application/zlib"], decoder: nil),
            "compress": CompressedFile(extensions: [".z"], mediaTypes: ["application/x-compress"], decoder: "gzip -dc"),
        ]
    }()
}
