import CFileCalls
#if canImport(Glibc)
import Glibc
#endif

/// Gives a finished file its name without ever replacing a file of that name.
///
/// A hard link under the new name, then the old name removed: the kernel refuses the link
/// when the name exists, however late another program made it. Where the file system makes
/// no hard links (FAT and exFAT memory cards and sticks, some FUSE and network file systems,
/// which answer `EPERM`, `EOPNOTSUPP` or `ENOSYS`), a rename that refuses to replace
/// (`RENAME_NOREPLACE`); where the file system does not take that flag either, a rename
/// after a check, which another program writing the same name at that moment could beat —
/// the one race left, and only on such file systems.
package struct FilePlacing: Sendable {
    /// `link(2)`: 0 or the `errno`.
    var link: @Sendable (String, String) -> Int32
    /// `renameat2(2)` with `RENAME_NOREPLACE`: 0 or the `errno`.
    var renameWithoutReplacing: @Sendable (String, String) -> Int32

    /// The system's calls.
    package static let system = FilePlacing(
        link: { from, to in Glibc.link(from, to) == 0 ? 0 : errno },
        renameWithoutReplacing: { from, to in af_rename_noreplace(from, to) == 0 ? 0 : errno }
    )

    /// Calls that stand in for a file system's (tests: one without hard links).
    package init(link: @escaping @Sendable (String, String) -> Int32, renameWithoutReplacing: @escaping @Sendable (String, String) -> Int32) {
        self.link = link
        self.renameWithoutReplacing = renameWithoutReplacing
    }

    /// Moves `source` to `destination` unless something is there: 0, `EEXIST` when something
    /// is (`source` then stays), or the `errno` that stopped it.
    package func place(_ source: String, at destination: String) -> Int32 {
        let linked = link(source, destination)
        if linked == 0 {
            unlink(source)
            return 0
        }
        guard [EPERM, EOPNOTSUPP, ENOSYS].contains(linked) else { return linked }
        let renamed = renameWithoutReplacing(source, destination)
        guard renamed == EINVAL || renamed == ENOSYS else { return renamed }
        if FileIO.exists(destination) { return EEXIST }
        return rename(source, destination) == 0 ? 0 : errno
    }
}
