import AFTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An endless pipe or a hostile server could fill the file system of af's temporary files
/// (TMPDIR, often a tmpfs in memory), breaking every other program there until af gave up
/// with "no space left on device". af stops while 1 % of it is still free. Each case runs
/// against a tmpfs of 8 MiB of its own, so it needs root and a kernel that lets it mount one.
@Suite(.enabled(if: SmallFileSystem.available)) struct TemporaryRoomEndToEndTests {
    static let refusal = "its file system is nearly full (af leaves 1 % of it free, up to 256 MiB)"

    @Test func anEndlessPipeIsNotSpooledUntilTheFileSystemIsFull() throws {
        let server = try TestServer()
        let room = try SmallFileSystem()
        defer { room.remove() }
        let (status, errors) = try AF.shell("yes 2>/dev/null | TMPDIR='\(room.path)' '\(AF.binary)' post '\(server.url("/post"))'")
        #expect(status == 9, "\(errors)")
        #expect(errors.hasPrefix("af: error: cannot spool standard input to \(room.path)/af-stdin-"), "\(errors)")
        #expect(errors.hasSuffix(": \(Self.refusal); set TMPDIR to a roomier directory\n"), "\(errors)")
        #expect(server.requests.isEmpty, "nothing was sent")
        #expect(room.used == 0, "the spooled copy was removed")
    }

    /// A later line's output waits in a temporary file while an earlier line runs.
    @Test func aBatchLineWhoseOutputCannotWaitFailsAlone() throws {
        let server = try TestServer()
        let room = try SmallFileSystem()
        defer { room.remove() }
        let directory = try TemporaryDirectory.make(prefix: "af-room-batch")
        let file = try TemporaryDirectory.write("\(server.url("/delay/1"))\n\(server.url("/bytes/20000000"))\n\(server.url("/get"))\n", named: "lines.txt", in: directory)
        let result = AF.run(["batch", "--parallel=3", file], environment: ["TMPDIR": room.path], timeout: 60)
        #expect(result.status == 9, "\(result.err)")
        #expect(result.err == """
            af: line 2: error: cannot write to a temporary file: \(Self.refusal); set TMPDIR to a directory with room
            af: error: 1 of 3 requests failed (line 2)

            """)
        // Lines 1 and 3 are printed whole, and nothing of line 2.
        #expect(result.out.hasPrefix("{\"delayed\": 1.0}{\"method\": \"GET\", \"target\": \"/get\""), "\(result.out.prefix(200))")
        #expect(result.stdout.count < 4096)
    }
}

/// A tmpfs of 8 MiB mounted on a new directory, for as long as a test needs it.
struct SmallFileSystem {
    let path: String

    /// Whether this process may mount one (root, and a kernel or container that allows it).
    static let available: Bool = {
        guard getuid() == 0, let probe = try? SmallFileSystem() else { return false }
        probe.remove()
        return true
    }()

    init() throws {
        path = try TemporaryDirectory.make(prefix: "af-tmpfs")
        let (status, errors) = try AF.shell("mount -t tmpfs -o size=8m tmpfs '\(path)'")
        guard status == 0 else { throw SmallFileSystemError(reason: errors) }
    }

    /// Bytes in use on it.
    var used: Int64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return -1 }
        return Int64(info.f_blocks - info.f_bfree) * Int64(info.f_frsize)
    }

    func remove() {
        _ = try? AF.shell("umount '\(path)'")
        rmdir(path)
    }
}

struct SmallFileSystemError: Error {
    let reason: String
}
