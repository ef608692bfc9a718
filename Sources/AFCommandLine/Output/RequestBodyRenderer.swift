import AFEngine

/// Renders the request body for the `B` section.
///
/// For reading (a terminal, or colours on) text is shown, formatted when it is JSON, and
/// binary data becomes a one-line note, as HTTPie does. Into a pipe without colours the
/// section holds the body's exact bytes — multipart framing and file parts included — so
/// that `af -p B … > body.bin` saves what was sent.
struct RequestBodyRenderer: Sendable {
    /// Files larger than this are noted, not shown (the section is held in memory).
    static let inlineLimit = FileReading.valueLimit

    var style: BodyStyle

    /// The body as shown, or nil when there is none.
    func render(_ origin: BodyOrigin, contentType: String?) -> [UInt8]? {
        switch origin {
        case .none:
            return nil
        case .text(let text):
            return show(Array(text.utf8), contentType: contentType)
        case .file(let path):
            return file(path, label: "'\(path)'", contentType: contentType)
        case .heldFile(let path, .bytes(let bytes)):
            return contents(bytes, label: "'\(path)'", contentType: contentType)
        case .heldFile(let path, .file(let copy)):
            return file(copy, label: "'\(path)'", contentType: contentType)
        case .standardInput(nil):
            return note("[standard input, streamed as it is read]")
        case .standardInput(.bytes(let bytes)):
            return contents(bytes, label: "standard input", contentType: contentType)
        case .standardInput(.file(let path)):
            return file(path, label: "standard input", contentType: contentType)
        case .multipart(let form):
            // For reading, each piece is made safe for the terminal on its own: a note about
            // binary data is af's, and keeps its colour (escaped with the rest, it read
            // `\x1B[90m[contents of …]\x1B[0m`).
            var out: [UInt8] = []
            for (index, part) in form.parts.enumerated() {
                let head = form.head(of: part, first: index == 0)
                out += style.escapes ? readable(String(decoding: head, as: UTF8.self)) : head
                switch part.content {
                case .bytes(let bytes):
                    if !style.escapes {
                        out += bytes
                    } else {
                        out += Self.isText(bytes) ? readable(String(decoding: bytes, as: UTF8.self)) : note("[\(Format.bytes(Int64(bytes.count))) of binary data]")
                    }
                case .file(let path):
                    let label = StandardInputItems.isStandardInput(part, path: path) ? "standard input" : "'\(path)'"
                    out += file(path, label: label, contentType: part.contentType, formatting: false)
                }
            }
            out += style.escapes ? readable(String(decoding: form.tail, as: UTF8.self)) : form.tail
            return out
        }
    }

    /// Multipart text as shown for reading: its CRLF line ends as line breaks, and whatever
    /// a terminal would obey escaped.
    private func readable(_ text: String) -> [UInt8] {
        Array(TerminalText.escaped(text.replacingBytes(of: "\r\n", with: "\n")).utf8)
    }

    /// A file's contents as shown: exact bytes into a pipe, text (or a note for binary data)
    /// for reading. A pipe or device is read once, by the transfer: showing it would consume
    /// it, so it is noted.
    private func file(_ path: String, label: String, contentType: String?, formatting: Bool = true) -> [UInt8] {
        guard let size = FileIO.regularFileSize(path) else { return note("[contents of \(label), streamed as it is read]") }
        guard size <= Self.inlineLimit, let bytes = try? FileReading.bytes(atPath: path, item: label) else {
            return note("[contents of \(label): \(Format.bytes(size))]")
        }
        return contents(bytes, label: label, contentType: contentType, formatting: formatting)
    }

    /// The contents of `label` (a file, or standard input), as shown.
    private func contents(_ bytes: [UInt8], label: String, contentType: String?, formatting: Bool = true) -> [UInt8] {
        guard bytes.count <= Self.inlineLimit else { return note("[contents of \(label): \(Format.bytes(Int64(bytes.count)))]") }
        if !style.escapes { return bytes }
        guard Self.isText(bytes, contentType: contentType) else { return note("[contents of \(label): \(Format.bytes(Int64(bytes.count))) of binary data]") }
        return formatting ? show(bytes, contentType: contentType) : readable(Self.decoded(bytes, contentType: contentType))
    }

    private func show(_ bytes: [UInt8], contentType: String?) -> [UInt8] {
        guard !style.escapes || Self.isText(bytes, contentType: contentType) else { return note("[\(Format.bytes(Int64(bytes.count))) of binary data]") }
        let essence = MediaType.essence(contentType)
        if style.format || style.theme != nil, MediaType.isJSON(essence) {
            var formatter = JSONFormatter(style: JSONFormatter.Style(
                indent: style.indent, theme: style.theme, sortKeys: style.sortKeys, colorsOnly: !style.format, decodesEscapes: style.terminal
            ))
            var out: [UInt8] = []
            do {
                try formatter.feed(bytes, into: &out)
                try formatter.finish(into: &out)
                return out
            } catch {}
        }
        guard style.escapes else { return bytes }
        return Array(TerminalText.escaped(Self.decoded(bytes, contentType: contentType)).utf8)
    }

    /// The text of `bytes` in the charset `contentType` declares (UTF-8 when none).
    static func decoded(_ bytes: [UInt8], contentType: String?) -> String {
        guard let label = MediaType.charset(contentType), let decoder = CharsetDecoder(label: label) else {
            return String(decoding: bytes, as: UTF8.self)
        }
        return decoder.decode(bytes, final: true)
    }

    /// Text, not binary: no NUL, and valid in its declared charset (UTF-8 when none is).
    static func isText(_ bytes: [UInt8], contentType: String?) -> Bool {
        guard let label = MediaType.charset(contentType), !["utf-8", "utf8"].contains(label.lowercased()), CharsetDecoder.knows(label) else {
            return isText(bytes)
        }
        return !bytes.contains(0)
    }

    private func note(_ text: String) -> [UInt8] {
        Array(Theme.paint(text, style.theme?.note ?? "").utf8)
    }

    static func isText(_ bytes: [UInt8]) -> Bool {
        !bytes.contains(0) && String(validating: bytes, as: UTF8.self) != nil
    }
}
