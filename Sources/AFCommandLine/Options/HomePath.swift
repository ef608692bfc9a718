#if canImport(Glibc)
import Glibc
#endif

/// A `~` at the start of a path, read as a shell reads it: `~` and `~/…` are the home
/// directory, `~NAME/…` that user's. A shell expands it only in a word of its own, so
/// `--session=~/s.json`, a request item's `@~/body.json` and a value in the config file or
/// on a line of a batch would otherwise name a directory called `~` in the working directory
/// (HTTPie expands the paths of its items the same way); `./~` still names that directory.
enum HomePath {
    /// `path` with a leading `~` or `~NAME` replaced by the home directory; unchanged when
    /// it has none, or names a user the system does not know.
    static func expand(_ path: String, home: String) -> String {
        let bytes = path.utf8
        guard bytes.first == UInt8(ascii: "~") else { return path }
        let nameEnd = bytes.firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
        let name = path[path.utf8.index(after: bytes.startIndex)..<nameEnd]
        let rest = path[nameEnd...]
        guard let directory = name.isEmpty ? home : userHome(String(name)) else { return path }
        // `/` as the home: `~/x` is `/x`, not `//x`.
        let base = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        if rest.isEmpty { return base }
        return (base == "/" ? "" : base) + rest
    }

    /// The home directory of the user called `name`, from the system's user database.
    private static func userHome(_ name: String) -> String? {
        guard !name.isEmpty, name.utf8.allSatisfy({ $0 != 0 }) else { return nil }
        var buffer = [CChar](repeating: 0, count: 16_384)
        // The entry's strings live in `buffer`: read them while it is held.
        let home: String? = buffer.withUnsafeMutableBufferPointer { storage in
            var entry = passwd()
            var result: UnsafeMutablePointer<passwd>?
            guard let base = storage.baseAddress, getpwnam_r(name, &entry, base, storage.count, &result) == 0,
                  result != nil, let directory = entry.pw_dir else { return nil }
            return String(cString: directory)
        }
        guard let home else { return nil }
        return home.isEmpty ? nil : home
    }
}
