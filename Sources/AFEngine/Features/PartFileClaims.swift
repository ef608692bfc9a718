#if canImport(Glibc)
import Glibc
#endif

/// The files this process's downloads are writing: each one's `.part` file and the name it
/// will be renamed to.
///
/// Two downloads into one `.part` file (two batch lines naming the same output file, or a
/// program that starts two) would truncate and interleave each other's bytes, and the one
/// renamed second would find its file gone. One download's name can also be another's
/// `.part` file (a server names one `x.part` and another `x`): the first to finish would be
/// refused its name, which the other had made meanwhile. A download claims both files before
/// its request is sent (or, when the response names the file, before the first byte is
/// written); a claim of either by another download is refused until the first one finishes.
enum PartFileClaims {
    private static let claimed = Locked<Set<String>>([])

    /// Claims `paths` together for one download: the keys to release them with, or nil (and
    /// nothing claimed) when another download of this process holds any of them. A key is the
    /// path with its directory resolved (`./a.part`, `a.part` and `/cwd/a.part` are one file).
    static func claim(_ paths: [String]) -> [String]? {
        // A download's name and its `.part` file are in one directory: resolved once.
        var directories: [String: String] = [:]
        let keys = paths.map { canonical($0, resolving: &directories) }
        return claimed.withLock { set in
            guard keys.allSatisfy({ !set.contains($0) }) else { return nil }
            set.formUnion(keys)
            return keys
        }
    }

    /// Whether a download of this process holds `path`, as its `.part` file or its name.
    static func isClaimed(_ path: String) -> Bool {
        var directories: [String: String] = [:]
        let key = canonical(path, resolving: &directories)
        return claimed.withLock { $0.contains(key) }
    }

    /// Gives up what `claim(_:)` claimed.
    static func release(_ keys: [String]) {
        claimed.withLock { set in
            for key in keys { set.remove(key) }
        }
    }

    /// `path` with its directory resolved; `directories` keeps the directories resolved so
    /// far (each one a `realpath`, a system call per component), for the other paths of a claim.
    private static func canonical(_ path: String, resolving directories: inout [String: String]) -> String {
        let slash = path.utf8.lastIndex(of: UInt8(ascii: "/"))
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.utf8.index(after: $0)...]) } ?? path
        let resolved = directories[directory] ?? FileIO.resolvedPath(directory)
        guard let base = resolved else { return path }
        directories[directory] = base
        return base == "/" ? "/" + name : base + "/" + name
    }
}
