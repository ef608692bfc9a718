#if canImport(Glibc)
import Glibc
#endif

/// Keeps af's temporary files from filling the file system they are on.
///
/// Temporary files hold what af cannot keep in memory: a body from a pipe, to be sent again;
/// a response that a retry may replace; the later outputs of a batch. An endless pipe or a
/// hostile server can make any of them as large as the disk, and a full file system (often
/// memory, where `/tmp` is a tmpfs) breaks every other program on the machine until af
/// gives up and removes the file. So af stops short of it: it leaves `reserve` free, 1 % of
/// the file system and at most 256 MiB.
///
/// A writer keeps one of these per file and asks it before each write. It looks at the file
/// system (`fstatvfs`) only now and then: never after more than 16 MiB, and sooner as the
/// room left shrinks, so no write between two looks can reach into the reserve.
package struct TemporaryRoom: Sendable {
    /// Bytes that may still be written before the next look.
    private var unchecked = 0

    package init() {}

    /// The most a writer goes between two looks.
    static let checkInterval = 16 << 20
    /// The most the reserve is.
    /// (`POSIXFailure.description` says so for `FileIO.reserveReached`.)
    static let largestReserve: Int64 = 256 << 20

    /// What a file system of `size` bytes keeps free.
    package static func reserve(ofFileSystemSize size: Int64) -> Int64 {
        min(size / 100, largestReserve)
    }

    /// Whether `count` more bytes may go to `fd`: false when they would leave its file
    /// system less than its reserve. A file system that does not say its size (a pseudo file
    /// system) is not looked at again.
    package mutating func admits(_ count: Int, to fd: Int32) -> Bool {
        unchecked -= count
        if unchecked >= 0 { return true }
        var info = statvfs()
        guard fstatvfs(fd, &info) == 0, info.f_blocks > 0, info.f_frsize > 0 else {
            unchecked = .max
            return true
        }
        let unit = Int64(info.f_frsize)
        let (size, sizeOverflow) = Int64(info.f_blocks).multipliedReportingOverflow(by: unit)
        let (free, freeOverflow) = Int64(info.f_bavail).multipliedReportingOverflow(by: unit)
        guard !sizeOverflow, !freeOverflow else {
            unchecked = Self.checkInterval
            return true
        }
        let spare = free - Self.reserve(ofFileSystemSize: size) - Int64(count)
        guard spare >= 0 else {
            unchecked = 0
            return false
        }
        unchecked = Int(min(spare / 2, Int64(Self.checkInterval)))
        return true
    }
}

extension FileIO {
    /// What `writeAll(_:_:keeping:)` returns when the bytes would have eaten into the room
    /// af leaves on a file system (`TemporaryRoom`): not an `errno` value (those are positive).
    package static let reserveReached: Int32 = -28

    /// Writes every byte to a temporary file, unless that would leave its file system less
    /// free than `room` keeps; returns 0, `reserveReached`, or the `errno` that stopped it.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, keeping room: inout TemporaryRoom) -> Int32 {
        guard room.admits(bytes.count, to: fd) else { return reserveReached }
        return writeAll(fd, bytes)
    }
}
