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
        // Any type naming JSON, as HTTPie formats them: application/json, text/json, *+json,
        // the ndjson and jsonl kin, and also application/x-json, text/x-json or
        // application/json-patch (a body that is not JSON is shown as it came).
        essence.containsBytes(of: "json")
    }

    /// Whether a body of this type may be JSON its type does not name, which its first
    /// byte decides (`{` or `[`): untyped bodies, text (PHP's default `text/html` often carries
    /// JSON), and JavaScript types.
    static func mayBeJSON(_ essence: String) -> Bool {
        essence.isEmpty || essence.hasPrefix("text/") || essence.containsBytes(of: "javascript")
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
