import AFEngine

/// Pieces of `Content-Type` values.
enum MediaType {
    /// The media type without parameters, lower-cased.
    static func essence(_ value: String?) -> String {
        value.map { MIMEType.essence(of: $0) } ?? ""
    }

    /// The `charset` parameter, if any.
    static func charset(_ value: String?) -> String? {
        guard let value, value.containsByte(UInt8(ascii: ";")) else { return nil }
        for parameter in value.split(byte: UInt8(ascii: ";")).dropFirst() {
            let parts = parameter.split(byte: UInt8(ascii: "="), maxSplits: 1)
            if parts.count == 2, parts[0].trimmingCharacters(in: " \t").lowercased() == "charset" {
                return parts[1].trimmingCharacters(in: " \t\"")
            }
        }
        return nil
    }

    /// Whether a media type is JSON (`application/json`, `*+json`, `text/json`, NDJSON).
    static func isJSON(_ essence: String) -> Bool {
        essence == "application/json" || essence == "text/json" || essence.hasSuffix("+json")
            || essence == "application/x-ndjson" || essence == "application/ndjson" || essence == "application/jsonl"
            || essence == "application/json-seq"
    }

    /// Whether a media type is XML (`application/xml`, `text/xml`, `*+xml`).
    static func isXML(_ essence: String) -> Bool {
        essence == "application/xml" || essence == "text/xml" || essence.hasSuffix("+xml")
    }

    /// Whether a media type is certainly binary.
    static func isBinary(_ essence: String) -> Bool {
        binaryTypes.contains(essence) || binaryPrefixes.contains { essence.hasPrefix($0) && essence != "image/svg+xml" }
    }

    /// Built once: `isBinary` runs for every response printed.
    private static let binaryPrefixes = ["image/", "audio/", "video/", "font/"]
    private static let binaryTypes: Set<String> = [
        "application/octet-stream", "application/zip", "application/gzip", "application/pdf", "application/x-tar",
        "application/zstd", "application/x-bzip2", "application/x-xz", "application/wasm", "application/x-protobuf",
        "application/protobuf", "application/vnd.google.protobuf", "application/x-7z-compressed", "application/msgpack",
    ]
}
