import CFileCalls
#if canImport(Glibc)
import Glibc
#endif

/// What a `.part` file keeps of the resource it holds the start of, for a later run that
/// resumes it (`af -d -c` after an interruption): the validator to send in `If-Range`, so
/// that a resource that changed since starts over instead of having its rest spliced onto
/// the old start, and the resource's length, so that a range of one of another length is
/// refused. Kept in the file's extended attributes (`user.af.validator`, `user.af.length`),
/// which go with it when it is renamed; removed once the download is complete. A file
/// system without user attributes keeps nothing, and resuming works as before (a range
/// without `If-Range`, as curl and wget ask).
struct PartFileMarks: Sendable, Equatable {
    /// A strong `ETag` or a `Last-Modified` date.
    var validator: String?
    /// The whole resource's length in bytes.
    var length: Int64?

    private static let validatorName = "user.af.validator"
    private static let lengthName = "user.af.length"
    /// More than any validator a server sends; a longer attribute is not af's.
    private static let valueLimit = 1024

    /// Records the marks on the open file `fd`; with `replacing` (a `.part` that existed,
    /// truncated for another body), removes those it had where a mark is nil, so that it keeps
    /// none of the last body's. A file af has just created has none to remove.
    func write(to fd: Int32, replacing: Bool) {
        Self.set(validator, named: Self.validatorName, on: fd, replacing: replacing)
        Self.set(length.map(String.init), named: Self.lengthName, on: fd, replacing: replacing)
    }

    /// The marks recorded on the file at `path`; a value that is not one af writes (a header
    /// field may not hold a line break or a control character) is left out.
    static func read(path: String) -> PartFileMarks {
        let validator = get(validatorName, path: path).flatMap { value in
            value.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F } && !value.isEmpty ? value : nil
        }
        let length = get(lengthName, path: path).flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil }
        return PartFileMarks(validator: validator, length: length)
    }

    /// Removes the marks from the file at `path` (a complete download keeps none).
    static func remove(path: String) {
        _ = lremovexattr(path, validatorName)
        _ = lremovexattr(path, lengthName)
    }

    private static func set(_ value: String?, named name: String, on fd: Int32, replacing: Bool) {
        guard let value, value.utf8.count <= valueLimit else {
            if replacing { _ = fremovexattr(fd, name) }
            return
        }
        // Best effort: a file system without user attributes (ENOTSUP) keeps nothing.
        _ = value.utf8CString.withUnsafeBufferPointer { text in fsetxattr(fd, name, text.baseAddress, text.count - 1, 0) }
    }

    private static func get(_ name: String, path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: valueLimit)
        let count = lgetxattr(path, name, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return String(validating: buffer[0..<count], as: UTF8.self)
    }
}
