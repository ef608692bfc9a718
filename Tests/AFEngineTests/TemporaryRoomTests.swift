@testable import AFEngine
import AFTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Temporary files leave part of their file system free (`TemporaryRoom`).
@Suite struct TemporaryRoomTests {
    @Test func theReserveIsOnePercentUpTo256MiB() {
        #expect(TemporaryRoom.reserve(ofFileSystemSize: 8 << 20) == (8 << 20) / 100)
        #expect(TemporaryRoom.reserve(ofFileSystemSize: 10_000_000_000) == 100_000_000)
        #expect(TemporaryRoom.reserve(ofFileSystemSize: 1 << 40) == 256 << 20)
    }

    /// Against the file system the tests' temporary directory is on: a write that would take
    /// it past its reserve is refused (and not made), smaller ones go on, before and after.
    @Test func aWriteIntoTheReserveIsRefusedAndNotMade() throws {
        let directory = try TemporaryDirectory.make(prefix: "af-room")
        let fd = try #require(try? FileIO.makeUnnamedFile(in: directory, prefix: "room").get())
        defer { close(fd) }
        var info = statvfs()
        #expect(fstatvfs(fd, &info) == 0)
        let unit = Int64(info.f_frsize)
        let free = Int64(info.f_bavail) * unit
        let reserve = TemporaryRoom.reserve(ofFileSystemSize: Int64(info.f_blocks) * unit)
        try #require(free > reserve, "the tests' file system is nearly full")
        var room = TemporaryRoom()
        let byte: [UInt8] = [1]
        #expect(byte.withUnsafeBytes { FileIO.writeAll(fd, $0, keeping: &room) } == 0)
        // The refusal comes before the write: this buffer is never read.
        let tooMany = UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: 16), count: Int(free - reserve) + (1 << 20))
        #expect(FileIO.writeAll(fd, tooMany, keeping: &room) == FileIO.reserveReached)
        #expect(room.admits(byte.count, to: fd) && byte.withUnsafeBytes { FileIO.writeAll(fd, $0, at: 1) } == 0)
        #expect(lseek(fd, 0, SEEK_END) == 2)
        #expect(POSIXFailure(code: FileIO.reserveReached).description == "its file system is nearly full (af leaves 1 % of it free, up to 256 MiB)")
    }
}
