import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// Where the finished outputs of `af batch` that wait for an earlier line are kept: one after
/// another in a few shared, unlinked temporary files, each output a stretch of one of them.
///
/// A file of its own for each waiting output cost the file system a new file (an inode and
/// its journal entry) for most of them, and new blocks for every write, since a reused file
/// grew until it was emptied. Here a file is written from its start again as soon as no
/// stretch of it waits, over blocks it already has; a new file is made only when the one
/// being written has reached `fileLimit` and every other still holds a waiting output, so
/// there are as many files as the waiting outputs fill, usually one.
///
/// Guarded by `OrderedOutput`'s lock, except the writing of an output into its stretch; reads
/// and writes use offsets (`pwrite`, `sendfile`), never a file's position.
struct SpoolLog: Sendable {
    /// A waiting output: where in which file.
    struct Region: Sendable {
        fileprivate let file: Int
        let offset: Int64
        let count: Int64
    }

    /// A stretch set aside for one output, and the descriptor it is written through.
    struct Reservation: Sendable {
        let region: Region
        let fd: Int32
    }

    private struct File: Sendable {
        let fd: Int32
        /// Where the next output goes.
        var end: Int64 = 0
        /// How many of its stretches wait to be printed.
        var waiting = 0
        /// Keeps it from filling its file system.
        var room = TemporaryRoom()
    }

    /// Past this size a file takes no more outputs until none of its own waits.
    static let fileLimit: Int64 = 4 << 20

    private var files: [File] = []
    /// The file written last.
    private var current = 0

    /// A stretch set aside for an output of `count` bytes, or nil when no file could be had
    /// or its file system has no room to spare: the caller then keeps the output in memory.
    /// The bytes are written with `write(_:to:)` outside the caller's lock (a lane printing
    /// earlier outputs needs that lock meanwhile); a failed write gives the stretch back
    /// with `release`.
    mutating func reserve(_ count: Int, makeFile: () -> Int32?) -> Reservation? {
        let index: Int
        if current < files.count, files[current].end < Self.fileLimit {
            index = current
        } else if let drained = files.firstIndex(where: { $0.waiting == 0 }) {
            index = drained
        } else if let fd = makeFile() {
            files.append(File(fd: fd))
            index = files.count - 1
        } else {
            return nil
        }
        current = index
        let fd = files[index].fd
        guard files[index].room.admits(count, to: fd) else { return nil }
        let offset = files[index].end
        files[index].end += Int64(count)
        files[index].waiting += 1
        return Reservation(region: Region(file: index, offset: offset, count: Int64(count)), fd: fd)
    }

    /// Writes an output into the stretch set aside for it; false when writing failed.
    static func write(_ bytes: [UInt8], to reservation: Reservation) -> Bool {
        bytes.withUnsafeBytes { FileIO.writeAll(reservation.fd, $0, at: reservation.region.offset) } == 0
    }

    /// The descriptor holding `region`.
    func descriptor(of region: Region) -> Int32 {
        files[region.file].fd
    }

    /// `region` has been printed (or dropped); once none of its file's stretches waits, the
    /// file is written from its start again.
    mutating func release(_ region: Region) {
        files[region.file].waiting -= 1
        if files[region.file].waiting == 0 { files[region.file].end = 0 }
    }

    /// Closes every file (the end of the run).
    func close() {
        for file in files { Glibc.close(file.fd) }
    }
}
