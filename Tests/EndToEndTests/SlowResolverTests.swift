import AFTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A name server that never answers: af gives up at its connect timeout, and says that the
/// name did not resolve. It said "connecting to HOST:80 timed out; check the address", which
/// sent the user to a server that was never reached. Each case runs af in a mount namespace
/// of its own whose /etc/resolv.conf names the silent server, so it needs root and unshare;
/// one at a time, as the server has one address.
@Suite(.serialized, .enabled(if: SilentNameServer.available)) struct SlowResolverTests {
    @Test func aNameThatDoesNotResolveInTimeIsNamedAsSuch() throws {
        let server = try SilentNameServer()
        defer { server.close() }
        let direct = try server.run(["--connect-timeout=1", "http://slow.example.test/"])
        #expect(direct.status == 2, "\(direct.errors)")
        #expect(direct.errors == "af: error: resolving host 'slow.example.test' timed out after 1s; check the name and the DNS servers in /etc/resolv.conf, or raise --connect-timeout\n")
        // The total timeout, when it is the one that stops the lookup, is the one to raise.
        let total = try server.run(["--timeout=1", "http://slow.example.test/"])
        #expect(total.status == 2, "\(total.errors)")
        #expect(total.errors == "af: error: resolving host 'slow.example.test' timed out after 1s; check the name and the DNS servers in /etc/resolv.conf, or raise --timeout\n")
        // Through a proxy, libcurl looks up the proxy's name, not the host's.
        let proxied = try server.run(["--connect-timeout=1", "--proxy=http:http://user:secret@proxy.example.test:3128", "http://example.org/"])
        #expect(proxied.status == 2, "\(proxied.errors)")
        #expect(proxied.errors == "af: error: resolving the host of the proxy http://proxy.example.test:3128 timed out after 1s; check the name and the DNS servers in /etc/resolv.conf, or raise --connect-timeout\n")
    }

    /// The lookup runs on libcurl's resolver thread, which libcurl joined when the transfer
    /// ended before it had an answer: af gave up at its timeout but exited only when
    /// getaddrinfo did (here after 10 s, the resolver's timeout).
    @Test func aTimeoutStopsALookupAtOnce() throws {
        let server = try SilentNameServer()
        defer { server.close() }
        let started = Date()
        let result = try server.run(["--connect-timeout=1", "http://slow.example.test/"])
        #expect(result.status == 2, "\(result.errors)")
        #expect(Date().timeIntervalSince(started) < 5)
    }

    /// Ctrl-C during a lookup ended af only when the lookup did.
    @Test func anInterruptStopsALookupAtOnce() throws {
        let server = try SilentNameServer()
        defer { server.close() }
        let started = Date()
        let result = try server.shell("\"$0\" http://slow.example.test/ & pid=$!; sleep 1; kill -INT $pid; wait $pid")
        #expect(result.status == 130, "\(result.errors)")
        #expect(result.errors == "af: error: interrupted\n")
        #expect(Date().timeIntervalSince(started) < 5)
    }

    /// In a batch the join stalled every other transfer of the loop as well.
    @Test func aLookupThatTimesOutDoesNotStallABatch() throws {
        let server = try SilentNameServer()
        defer { server.close() }
        let web = try TestServer()
        let lines = try TemporaryDirectory.write("http://slow.example.test/ --timeout=1\n\(web.url("/delay/2"))\n\(web.url("/get"))\n", named: "lines.txt", in: server.directory)
        let started = Date()
        let result = try server.run(["batch", "--parallel=3", lines])
        #expect(result.status == 2, "\(result.errors)")
        #expect(result.errors.hasSuffix("af: error: 1 of 3 requests failed (line 1)\n"), "\(result.errors)")
        #expect(Date().timeIntervalSince(started) < 6)
    }
}

/// A UDP socket on port 53 of a loopback address that takes queries and never answers, and
/// a resolv.conf naming it.
struct SilentNameServer {
    static let address = "127.83.0.1"
    let descriptor: Int32
    let directory: String

    /// Whether this process can run one and af beside it (root, unshare, bind mounts).
    static let available: Bool = {
        guard getuid() == 0, let probe = try? SilentNameServer() else { return false }
        defer { probe.close() }
        return (try? AF.shell("unshare -m sh -c 'mount --bind \(probe.directory)/resolv.conf /etc/resolv.conf'").status) == 0
    }()

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw SilentNameServerError(reason: "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(53).bigEndian
        inet_pton(AF_INET, Self.address, &address.sin_addr)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            Glibc.close(fd)
            throw SilentNameServerError(reason: "bind: \(errno)")
        }
        descriptor = fd
        directory = try TemporaryDirectory.make(prefix: "af-resolver")
        _ = try TemporaryDirectory.write("nameserver \(Self.address)\noptions timeout:10 attempts:1\n", named: "resolv.conf", in: directory)
    }

    /// Runs af with this server as the only name server (killed after 20 seconds).
    func run(_ arguments: [String]) throws -> (status: Int32, errors: String) {
        try shell("exec timeout 20 \"$0\" \(arguments.map { "'\($0)'" }.joined(separator: " "))")
    }

    /// Runs `script` with this server as the only name server, with af's path in `$0`.
    func shell(_ script: String) throws -> (status: Int32, errors: String) {
        let quoted = script.replacingOccurrences(of: "'", with: "'\\''")
        return try AF.shell("exec unshare -m sh -c 'mount --bind \(directory)/resolv.conf /etc/resolv.conf && \(quoted)' '\(AF.binary)'")
    }

    func close() {
        Glibc.close(descriptor)
    }
}

struct SilentNameServerError: Error {
    let reason: String
}
