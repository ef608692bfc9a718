/// Media types guessed from file-name extensions.
package enum MIMEType {
    /// The media type for the extension of `path`, or nil when it is not known.
    package static func guess(forPath path: String) -> String? {
        let name = path.split(byte: UInt8(ascii: "/")).last.map(String.init) ?? path
        // The last dot byte: a dot before a combining mark is one Character with it.
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")), dot != name.startIndex else { return nil }
        return byExtension[name[name.utf8.index(after: dot)...].lowercased()]
    }

    /// The usual extension for a media type (without parameters), or nil.
    package static func fileExtension(for mediaType: String) -> String? {
        preferredExtension[essence(of: mediaType)]
    }

    /// The media type without parameters, trimmed and lower-cased (`Text/HTML; x=y` is
    /// `text/html`).
    package static func essence(of mediaType: String) -> String {
        // Most values are already an essence (`application/json`): returned as they are.
        let plain = mediaType.utf8.allSatisfy { byte in
            byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: ";") && !(byte >= 0x41 && byte <= 0x5A)
        }
        if plain { return mediaType }
        return mediaType.split(byte: UInt8(ascii: ";")).first.map { $0.trimmingCharacters(in: " \t").lowercased() } ?? ""
    }

    private static let byExtension: [String: String] = [
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "md": "text/markdown",
        "csv": "text/csv", "tsv": "text/tab-separated-values", "html": "text/html", "htm": "text/html",
        "css": "text/css", "js": "text/javascript", "mjs": "text/javascript", "xml": "application/xml",
        "json": "application/json", "geojson": "application/geo+json", "jsonld": "application/ld+json",
        "ndjson": "application/x-ndjson", "yaml": "application/yaml", "yml": "application/yaml",
        "toml": "application/toml", "pdf": "application/pdf", "zip": "application/zip",
        "gz": "application/gzip", "tgz": "application/gzip", "tar": "application/x-tar",
        "bz2": "application/x-bzip2", "xz": "application/x-xz", "zst": "application/zstd",
        "7z": "application/x-7z-compressed", "wasm": "application/wasm", "bin": "application/octet-stream",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
        "webp": "image/webp", "svg": "image/svg+xml", "ico": "image/vnd.microsoft.icon",
        "bmp": "image/bmp", "tif": "image/tiff", "tiff": "image/tiff", "avif": "image/avif",
        "mp3": "audio/mpeg", "wav": "audio/wav", "ogg": "audio/ogg", "flac": "audio/flac",
        "mp4": "video/mp4", "webm": "video/webm", "mov": "video/quicktime",
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
        "pem": "application/x-pem-file", "der": "application/pkix-cert", "crt": "application/pkix-cert",
        "sh": "application/x-sh", "py": "text/x-python", "swift": "text/x-swift", "c": "text/x-c",
        "proto": "text/plain",
    ]

    private static let preferredExtension: [String: String] = [
        "text/plain": "txt", "text/html": "html", "text/css": "css", "text/csv": "csv",
        "text/markdown": "md", "text/javascript": "js", "application/javascript": "js",
        "application/json": "json", "application/xml": "xml", "text/xml": "xml",
        "application/pdf": "pdf", "application/zip": "zip", "application/gzip": "gz",
        "application/x-tar": "tar", "application/yaml": "yaml", "application/x-ndjson": "ndjson",
        "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp",
        "image/svg+xml": "svg", "audio/mpeg": "mp3", "video/mp4": "mp4", "application/wasm": "wasm",
        "application/octet-stream": "bin",
    ]
}
