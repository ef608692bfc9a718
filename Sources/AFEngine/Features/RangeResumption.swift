/// A sink that can keep part of a body when an attempt fails, for the next attempt to ask
/// only for the rest (`DownloadResumer`).
public protocol ResumableBodySink: ResponseBodySink {
    /// Bytes of a successful body kept, from which the next attempt should continue (0: from
    /// the start).
    var partialBytes: Int64 { get }
    /// The kept body's validator (a strong `ETag` or `Last-Modified`) for `If-Range`.
    var rangeValidator: String? { get }
}

extension DownloadSink: ResumableBodySink {}

/// Before each attempt, asks for the rest of a body that earlier attempts (or runs) left
/// partial: `Range` from the bytes already kept, and `If-Range` once the server gave a
/// validator, so a changed resource starts over instead of being spliced.
public struct DownloadResumer: RequestAdapter {
    /// The sink whose body is resumed: a download, or any sink that keeps a partial body.
    public let sink: any ResumableBodySink

    /// Resumes into `sink`.
    public init(sink: any ResumableBodySink) {
        self.sink = sink
    }

    public func adapt(
        _ description: RequestDescription,
        for request: Request,
        completion: @escaping @Sendable (Result<RequestDescription, AFError>) -> Void
    ) {
        completion(.success(adapted(description)))
    }

    /// The description with range headers for what is already kept.
    public func adapted(_ description: RequestDescription) -> RequestDescription {
        let offset = sink.partialBytes
        guard offset > 0 else { return description }
        var adapted = description
        adapted.headers.set(name: .range, value: "bytes=\(offset)-")
        if let validator = sink.rangeValidator { adapted.headers.set(name: .ifRange, value: validator) }
        return adapted
    }
}

/// The range a resumed (206) answer announced, and the checks its body must pass: it goes on
/// after the `start` bytes already kept, no byte past its end is kept, and it must fill the
/// range — and the range the rest of the resource — or the attempt fails.
package struct ResumedBody: Sendable, Equatable {
    /// Bytes kept before this answer.
    package let start: Int64
    /// Where the body, added to them, ends.
    package let end: Int64
    /// The resource's length, when the server gave it.
    package let total: Int64?
    /// Bytes that came past `end`, not kept.
    package private(set) var overrun: Int64 = 0

    /// What a 206 answer does with a body `start` bytes of which are kept, from a resource of
    /// `resourceLength` bytes when the answer that began it said: continues it, or not.
    package enum Verdict: Sendable, Equatable {
        /// Its body goes on after the kept bytes.
        case continues(ResumedBody)
        /// Its range starts elsewhere (nil: no range could be read).
        case otherStart(Int64?)
        /// Its range is invalid (`DownloadSink.ResumedRange.invalid`).
        case invalid
        /// It is a range of a resource of another length: another resource.
        case otherResource(total: Int64, known: Int64)
    }

    /// The verdict on `head`, a 206, for a body `start` bytes of which are kept.
    package static func verdict(on head: ResponseHead, start: Int64, resourceLength: Int64?) -> Verdict {
        switch DownloadSink.resumedRange(head.headers.value(for: .contentRange), offset: start) {
        case .otherStart(let first):
            return .otherStart(first)
        case .invalid:
            return .invalid
        case .appendable(let end, let total):
            if let total, let known = resourceLength, total != known { return .otherResource(total: total, known: known) }
            return .continues(ResumedBody(start: start, end: end, total: total))
        }
    }

    private init(start: Int64, end: Int64, total: Int64?) {
        self.start = start
        self.end = end
        self.total = total
    }

    /// The part of `bytes` (arriving when `kept` bytes are kept) that lies within the range.
    package mutating func admit(_ bytes: UnsafeRawBufferPointer, kept: Int64) -> UnsafeRawBufferPointer {
        guard kept + Int64(bytes.count) > end else { return bytes }
        let admitted = Int(max(0, end - kept))
        overrun += Int64(bytes.count - admitted)
        return UnsafeRawBufferPointer(rebasing: bytes[..<admitted])
    }

    /// Why the body, ended with `kept` bytes kept, does not complete the resource: short of
    /// its range (a server that closed it early within a matching `Content-Length`), or a
    /// range short of the resource, each a truncated body (retried, and resumed from what
    /// came); past its range, a malformed one.
    package func problem(kept: Int64) -> AFError? {
        let range = "bytes \(start)-\(end - 1)"
        if overrun > 0 {
            return .transport(TransportFailure(
                kind: .malformedResponse,
                message: "the resumed body ran \(overrun) bytes past the range its Content-Range announced (\(range)); they were not kept",
                curlCode: 0
            ))
        }
        if kept == end {
            // Asked for everything from the offset on, given less: the body is not whole.
            guard let total, end < total else { return nil }
            return .transport(TransportFailure(
                kind: .truncatedBody,
                message: "the server resumed with \(range) of the resource's \(total) bytes, not all the rest",
                curlCode: 0
            ))
        }
        return .transport(TransportFailure(
            kind: .truncatedBody,
            message: "the resumed body ended \(end - kept) bytes short of the range its Content-Range announced (\(range))",
            curlCode: 0
        ))
    }
}

extension DownloadSink {
    /// A response's validator for `If-Range`: a strong `ETag`, else `Last-Modified`.
    package static func validator(of head: ResponseHead) -> String? {
        // Bytes: a combining mark after `W/` would make `hasPrefix` miss a weak validator.
        if let validator = head.headers.value(for: .etag), !validator.utf8.starts(with: "W/".utf8) { return validator }
        return head.headers.value(for: .lastModified)
    }

    /// `N` from `Content-Range: bytes */N`, the form a 416 response carries.
    static func unsatisfiedRangeTotal(_ value: String?) -> Int64? {
        guard let value, value.lowercased().hasPrefix("bytes */") else { return nil }
        return Int64(value.dropFirst(8).trimmingCharacters(in: " \t"))
    }

    /// What a 206 answer's `Content-Range` means for a download resumed at `offset`.
    package enum ResumedRange: Equatable {
        /// Its body goes on the end of the file, which then has `end` bytes; `total` is the
        /// resource's length when the server gave it.
        case appendable(end: Int64, total: Int64?)
        /// The range starts elsewhere (nil: no range could be read).
        case otherStart(Int64?)
        /// A range that ends before it starts, or at or past the length it gives (RFC 9110
        /// §14.4: invalid, its content ignored), or that no file could reach.
        case invalid
    }

    /// Reads `bytes FIRST-LAST/LENGTH` (LENGTH may be `*`): decimal digits only, so a sign, a
    /// space inside or a number beyond 64 bits reads as no range at all.
    package static func resumedRange(_ value: String?, offset: Int64) -> ResumedRange {
        guard let range = ByteRanges.contentRange(value) else { return .otherStart(nil) }
        guard range.first == offset else { return .otherStart(range.first) }
        guard range.last >= range.first, range.last < Int64.max, range.total.map({ $0 > range.last }) ?? true else { return .invalid }
        return .appendable(end: range.last + 1, total: range.total)
    }
}

/// `Range` and `Content-Range` values as resuming reads them: decimal digits only, so a
/// sign, a space inside or a number beyond 64 bits reads as no range at all.
package enum ByteRanges {
    /// N from a request's `Range: bytes=N-`, which asks for the rest of a body from byte N;
    /// nil for any other range.
    package static func restStart(_ value: String?) -> Int64? {
        guard let value else { return nil }
        let text = trimmed(value)
        let unit = Array("bytes=".utf8)
        guard text.count > unit.count + 1, startsWith(text, unit), text.last == UInt8(ascii: "-") else { return nil }
        return number(text.dropFirst(unit.count).dropLast())
    }

    /// FIRST, LAST and LENGTH (nil for `*`) of `bytes FIRST-LAST/LENGTH`.
    package static func contentRange(_ value: String?) -> (first: Int64, last: Int64, total: Int64?)? {
        guard let value else { return nil }
        var text = trimmed(value)
        let unit = Array("bytes ".utf8)
        guard text.count > unit.count, startsWith(text, unit) else { return nil }
        text = text.dropFirst(unit.count)
        guard let dash = text.firstIndex(of: UInt8(ascii: "-")), let slash = text.firstIndex(of: UInt8(ascii: "/")), dash < slash,
              let first = number(text[..<dash]), let last = number(text[text.index(after: dash)..<slash])
        else { return nil }
        let length = text[text.index(after: slash)...]
        if length.elementsEqual("*".utf8) { return (first, last, nil) }
        guard let total = number(length) else { return nil }
        return (first, last, total)
    }

    private static func trimmed(_ value: String) -> Substring.UTF8View.SubSequence {
        var text = value.utf8[...]
        while let first = text.first, first == 32 || first == 9 { text = text.dropFirst() }
        while let last = text.last, last == 32 || last == 9 { text = text.dropLast() }
        return text
    }

    /// Whether `text` starts with `unit`, letters in either case.
    private static func startsWith(_ text: Substring.UTF8View.SubSequence, _ unit: [UInt8]) -> Bool {
        text.count >= unit.count && zip(text.prefix(unit.count), unit).allSatisfy { $0 | 0x20 == $1 | 0x20 }
    }

    private static func number(_ digits: Substring.UTF8View.SubSequence) -> Int64? {
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int64(String(decoding: digits, as: UTF8.self))
    }
}
