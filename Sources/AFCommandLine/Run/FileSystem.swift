import AFEngine
#if canImport(Glibc)
import Glibc
#endif

/// File-system queries for the command line (the engine's `FileIO` does the work).
enum FileSystem {
    static func exists(_ path: String) -> Bool { FileIO.exists(path) }
    static func size(_ path: String) -> Int64? { FileIO.size(path) }

    static func remove(_ path: String) {
        _ = unlink(path)
    }
}
