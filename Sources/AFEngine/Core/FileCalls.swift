import CFileCalls
#if canImport(Glibc)
import Glibc
#endif

/// The file-system calls whose failures decide what becomes of a finished file, in one
/// place so that tests can stand in for file systems this machine does not have (one
/// without hard links; a network one whose delayed write error comes at `fsync` or
/// `close`).
///
/// Placing: a hard link under the new name, then the old name removed — the kernel refuses
/// the link when the name exists, however late another program made it. Where the file
/// system makes no hard links (FAT and exFAT memory cards and sticks, some FUSE and network
/// file systems, which answer `EPERM`, `EOPNOTSUPP` or `ENOSYS`), a rename that refuses to
/// replace (`RENAME_NOREPLACE`); where the file system does not take that flag either, a
/// rename after a check, which another program writing the same name at that moment could
/// beat — the one race left, and only on such file systems.
package struct FileCalls: Sendable {
    /// `link(2)`: 0 or the `errno`.
    package var link: @Sendable (String, String) -> Int32
    /// `renameat2(2)` with `RENAME_NOREPLACE`: 0 or the `errno`.
    package var renameWithoutReplacing: @Sendable (String, String) -> Int32
    /// `fsync(2)`: 0 or the `errno`.
    package var sync: @Sendable (Int32) -> Int32
    /// `close(2)`: 0 or the `errno`; the descriptor is gone either way (Linux).
    package var close: @Sendable (Int32) -> Int32

    /// The system's calls.
    package static let system = FileCalls(
        link: { from, to in Glibc.link(from, to) == 0 ? 0 : errno },
        renameWithoutReplacing: { from, to in af_rename_noreplace(from, to) == 0 ? 0 : errno },
        sync: { fd in fsync(fd) == 0 ? 0 : errno },
        close: { fd in Glibc.close(fd) == 0 ? 0 : errno }
    )

    /// Calls that stand in for a file system's (tests).
    package init(
        link: @escaping @Sendable (String, String) -> Int32, renameWithoutReplacing: @escaping @Sendable (String, String) -> Int32,
        sync: @escaping @Sendable (Int32) -> Int32 = FileCalls.system.sync, close: @escaping @Sendable (Int32) -> Int32 = FileCalls.system.close
    ) {
        self.link = link
        self.renameWithoutReplacing = renameWithoutReplacing
        self.sync = sync
        self.close = close
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

    /// Closes a file that was written, first making it durable when `syncing`: 0, or the
    /// `errno` that says its bytes may not all be there. A network file system (NFS, SMB)
    /// may report a write that failed on the server (quota, a full disk) only here. A file
    /// system that cannot sync (`EINVAL`) is not a failure; an interrupted `close` has
    /// closed (Linux), so `EINTR` is not either.
    package func finish(_ fd: Int32, syncing: Bool) -> Int32 {
        var code: Int32 = 0
        if syncing {
            let synced = sync(fd)
            if synced != EINVAL { code = synced }
        }
        let closed = close(fd)
        if code == 0, closed != EINTR { code = closed }
        return code
    }
}
