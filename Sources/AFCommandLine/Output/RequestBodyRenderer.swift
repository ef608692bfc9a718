import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Renders the request body for the `B` section.
struct RequestBodyRenderer: Sendable {
    /// Files up to this size are shown when they are text.
    static let inlineLimit = 64 * 1024

    var style: BodyStyle

    /// The body as shown, or nil when there is none.
    func render(_ origin: BodyOrigin, contentType: String?) -> String? {
        switch origin {
        case .none:
            return nil
        case .text(let text):
            return show(Array(text.utf8), contentType: contentType)
        case .file(let path):
            return file(path, label: "'\(path)'", contentType: contentType)
        case .standardInput(let path):
            guard let path else { return note("[standard input, streamed as it is read]") }
            return file(path, label: "standard input", contentType: contentType)
        case .multipart(let form):
            var out = ""
            for (index, part) in form.parts.enumerated() {
                out += String(decoding: form.head(of: part, first: index == 0), as: UTF8.self)
                switch part.content {
                case .bytes(let bytes):
                    out += Self.isText(bytes) ? String(decoding: bytes, as: UTF8.self) : note("[\(Format.bytes(Int64(bytes.count))) of binary data]")
                case .file(let path):
                    out += note(Self.size(of: path).map { "[contents of '\(path)': \(Format.bytes($0))]" } ?? "[contents of '\(path)', streamed as it is read]")
                }
            }
            out += String(decoding: form.tail, as: UTF8.self)
            return style.escapes ? TerminalText.escaped(out.replacingAll("\r\n", with: "\n")) : out
        }
    }

    private func file(_ path: String, label: String, contentType: String?) -> String {
        // A pipe or a device is read once, by the transfer: showing it would consume it.
        guard let size = Self.size(of: path) else { return note("[contents of \(label), streamed as it is read]") }
        if size <= Self.inlineLimit, let bytes = try? FileReading.bytes(atPath: path, item: label), Self.isText(bytes) {
            return show(bytes, contentType: contentType)
        }
        return note("[contents of \(label): \(Format.bytes(size))]")
    }

    private func show(_ bytes: [UInt8], contentType: String?) -> String {
        guard Self.isText(bytes) else { return note("[\(Format.bytes(Int64(bytes.count))) of binary data]") }
        let essence = MediaType.essence(contentType)
        if style.format || style.theme != nil, MediaType.isJSON(essence) {
            var formatter = JSONFormatter(style: JSONFormatter.Style(indent: style.indent, theme: style.theme, sortKeys: style.sortKeys, colorsOnly: !style.format))
            var out: [UInt8] = []
            do {
                try formatter.feed(bytes, into: &out)
                try formatter.finish(into: &out)
                return String(decoding: out, as: UTF8.self)
            } catch {}
        }
        let text = String(decoding: bytes, as: UTF8.self)
        return style.escapes ? TerminalText.escaped(text) : text
    }

    private func note(_ text: String) -> String {
        Theme.paint(text, style.theme?.note ?? "")
    }

    static func isText(_ bytes: [UInt8]) -> Bool {
        !bytes.contains(0) && String(validating: bytes, as: UTF8.self) != nil
    }

    /// The size of a regular file; nil for anything that can only be read once.
    static func size(of path: String) -> Int64? {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG ? Int64(info.st_size) : nil
    }
}
