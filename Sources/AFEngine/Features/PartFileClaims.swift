#if canImport(Glibc)
import Glibc
#endif

/// The `.part` files this process's downloads are writing.
///
/// Two downloads into one `.part` file (two batch lines naming the same output file, or a
/// program that starts two) would truncate and interleave each other's bytes, and the one
/// renamed second would find its file gone. A download claims its `.part` file before its
/// request is sent (or, when the response names the file, before the first byte is
/// written); a second claim of the same file is refused until the first download finishes.
enum PartFileClaims {
    private static let claimed = Locked<Set<String>>([])

    /// Claims `part` for one download: the key to release it with, or nil when another
    /// download of this process holds it. The key is the path with its directory resolved
    /// (`./a.part`, `a.part` and `/cwd/a.part` are one file).
    static func claim(_ part: String) -> String? {
        let key = canonical(part)
        let taken = claimed.withLock { set in !set.insert(key).inserted }
        return taken ? nil : key
    }

    /// Whether a download of this process holds `part`.
    static func isClaimed(_ part: String) -> Bool {
        let key = canonical(part)
        return claimed.withLock { $0.contains(key) }
    }

    /// Gives up a claim `claim(_:)` made.
    static func release(_ key: String) {
        claimed.withLock { _ = $0.remove(key) }
    }

    private static func canonical(_ path: String) -> String {
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.utf8.index(after: $0)...]) } ?? path
        guard let base = FileIO.resolvedPath(directory) else { return path }
        return base == "/" ? "/" + name : base + "/" + name
    }
}
