/// The size libcurl allows a request's head: it builds the request line and the header lines
/// in one buffer of at most 1 MiB (7.88), and past that fails the transfer as "out of memory"
/// before sending anything.
public enum RequestHeadLimit {
    /// The most bytes libcurl puts in a request head.
    public static let bytes = 1 << 20
    /// Room left for the lines libcurl adds itself (`Host`, cookies, authentication).
    static let libcurlLines = 4 << 10

    /// About how many bytes `description` takes in a request head: its request line (with
    /// the whole URL, as a proxy is sent it) and its header lines.
    public static func estimatedSize(of description: RequestDescription) -> Int {
        description.headers.reduce(description.method.rawValue.utf8.count + description.url.utf8.count + 12) { size, header in
            size + header.name.rawValue.utf8.count + header.value.utf8.count + 4
        }
    }

    /// Whether `description` with the lines libcurl adds would not fit.
    public static func isExceeded(by description: RequestDescription) -> Bool {
        estimatedSize(of: description) + libcurlLines > bytes
    }
}
