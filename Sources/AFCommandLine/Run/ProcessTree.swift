#if canImport(Glibc)
import Glibc
#endif

/// The processes below one, as `/proc` shows them (Linux): for stopping what a command
/// started when the command itself is stopped.
enum ProcessTree {
    /// Every descendant of `root` alive now: its children, theirs, and so on.
    static func descendants(of root: pid_t) -> [pid_t] {
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var children: [pid_t: [pid_t]] = [:]
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let pid = pid_t(name), let parent = parent(of: pid) else { continue }
            children[parent, default: []].append(pid)
        }
        var found: [pid_t] = []
        var pending = [root]
        while let next = pending.popLast() {
            let below = children[next] ?? []
            found += below
            pending += below
        }
        return found
    }

    /// The parent of `pid`: in `/proc/PID/stat` the field after the state, which follows the
    /// command name in parentheses (a name may hold spaces and parentheses itself, so the
    /// last `)` ends it).
    private static func parent(of pid: pid_t) -> pid_t? {
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0, let nameEnd = buffer[..<count].lastIndex(of: UInt8(ascii: ")")) else { return nil }
        let fields = buffer[(nameEnd + 1)..<count].split(separator: UInt8(ascii: " "))
        guard fields.count >= 2 else { return nil }
        return pid_t(String(decoding: fields[1], as: UTF8.self))
    }
}
