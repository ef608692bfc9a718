import CFileCalls
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Small wrappers over POSIX file calls used while building bodies.
enum FileInfo {
    /// The size of a file whose length can be known before reading it, nil for one that
    /// must be read to its end to know (a pipe, `<(…)`, a device, a `/proc` file that says
    /// it is empty but is not, a `/sys` file that says it is a page long), or an
    /// `inputUnreadable` error naming the path.
    static func size(ofFileAt path: String) throws(AFError) -> Int64? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw .inputUnreadable(path: path, reason: POSIXFailure(code: errno).description)
        }
        guard (info.st_mode & S_IFMT) != S_IFDIR else {
            throw .inputUnreadable(path: path, reason: "it is a directory")
        }
        guard access(path, R_OK) == 0 else {
            throw .inputUnreadable(path: path, reason: POSIXFailure(code: errno).description)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG, !isGeneratedOnRead(path) else { return nil }
        if info.st_size == 0, hasContent(path) { return nil }
        return Int64(info.st_size)
    }

    /// File systems whose files are made as they are read, so that their size says nothing
    /// of what a read gives: sysfs reports a page (4096) for an 18-byte MAC address, procfs 0
    /// for `/proc/cpuinfo`, and so do debugfs, tracefs, configfs, securityfs and cgroup's.
    /// Sent with the size they report, such a file "shrank while it was being sent" (or
    /// `/proc`'s, taken as empty, was checked byte by byte).
    private static let generatedOnRead: Set<Int> = [
        0x6265_6572, // sysfs
        0x9FA0, // proc
        0x6462_6720, // debugfs
        0x7472_6163, // tracefs
        0x6265_6570, // configfs
        0x7363_6673, // securityfs
        0x0027_E0EB, // cgroup
        0x6367_7270, // cgroup2
    ]

    /// Whether the regular file at `path` is on a file system of `generatedOnRead`.
    private static func isGeneratedOnRead(_ path: String) -> Bool {
        let type = af_file_system_type(path)
        return type != -1 && generatedOnRead.contains(type)
    }

    /// Whether the file at `path` can be read again from its start: a regular file can, a
    /// pipe or a device cannot.
    static func isRereadable(_ path: String) -> Bool {
        FileIO.regularFileSize(path) != nil
    }

    /// Whether a regular file that reports size 0 yields bytes anyway (`/proc` files do).
    private static func hasContent(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var byte: UInt8 = 0
        return read(fd, &byte, 1) == 1
    }
}
