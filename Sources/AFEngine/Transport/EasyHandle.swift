internal import CCurl

/// Owns one libcurl easy handle and the C memory that must live as long as it.
///
/// Not thread-safe: a handle is configured by the thread that creates it and then used only
/// by the transfer driver's thread. With a pool, the libcurl handle comes from it and goes
/// back to it (reset) when this object is freed, which happens only after the driver has
/// taken the handle out of its multi handle and share.
final class EasyHandle {
    let raw: UnsafeMutableRawPointer
    private let pool: EasyHandlePool?
    /// The `curl_slist`s set on the handle, each in one block (`CurlLines.makeList()`).
    private var lists: [UnsafeMutableRawPointer] = []
    /// Filled by libcurl with a readable message when a transfer fails.
    let errorBuffer: UnsafeMutablePointer<CChar>

    init(pool: EasyHandlePool? = nil) throws(AFError) {
        CurlRuntime.ensureInitialized()
        guard let handle = pool?.take() ?? curl_easy_init() else {
            throw .transport(TransportFailure(kind: .other, message: "libcurl could not create a transfer handle"))
        }
        raw = handle
        self.pool = pool
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        _ = afcurl_easy_setopt_ptr(raw, CURLOPT_ERRORBUFFER, errorBuffer)
    }

    deinit {
        // The handle lets go of the lists and the error buffer (reset or freed) before they go.
        if let pool { pool.give(raw) } else { curl_easy_cleanup(raw) }
        for list in lists { list.deallocate() }
        errorBuffer.deallocate()
    }

    /// The message libcurl left in the error buffer, if any.
    var errorMessage: String {
        String(cString: errorBuffer)
    }

    // MARK: Setting options

    func set(_ option: CURLoption, _ value: Int) throws(AFError) {
        try check(afcurl_easy_setopt_long(raw, option, value), option)
    }

    func set(_ option: CURLoption, _ value: Bool) throws(AFError) {
        try set(option, value ? 1 : 0)
    }

    func set(_ option: CURLoption, offset value: Int64) throws(AFError) {
        try check(afcurl_easy_setopt_off_t(raw, option, curl_off_t(value)), option)
    }

    /// Sets a string option that libcurl copies, so the Swift string may go away at once.
    /// Options whose memory libcurl only borrows (`CURLOPT_POSTFIELDS`, and the lists,
    /// buffers and callback data set with `pointer:` and `list:`) cannot come through here:
    /// `CURLOPT_COPYPOSTFIELDS` is the copying form of the first, `list:` keeps its list
    /// alive with the handle, and `pointer:` is for memory the caller owns for the handle's
    /// whole life.
    func set(_ option: CURLoption, copying value: String?) throws(AFError) {
        precondition(option != CURLOPT_POSTFIELDS, "libcurl does not copy CURLOPT_POSTFIELDS; use CURLOPT_COPYPOSTFIELDS")
        let code: CURLcode
        if let value {
            code = value.withCString { afcurl_easy_setopt_string(raw, option, $0) }
        } else {
            code = afcurl_easy_setopt_string(raw, option, nil)
        }
        try check(code, option)
    }

    /// Sets a pointer libcurl keeps without copying: the memory must stay valid as long as
    /// the handle may use it.
    func set(_ option: CURLoption, pointer: UnsafeMutableRawPointer?) throws(AFError) {
        try check(afcurl_easy_setopt_ptr(raw, option, pointer), option)
    }

    /// Builds a `curl_slist` from `lines`, keeps it alive for the handle's lifetime, and sets it.
    func set(_ option: CURLoption, list lines: [String]) throws(AFError) {
        guard !lines.isEmpty else { return }
        try set(option) { (list: inout CurlLines) in
            for line in lines { list.append(line) }
        }
    }

    /// Builds a `curl_slist` with `build`, keeps it alive for the handle's lifetime, and sets
    /// it (nothing is set when `build` adds no line).
    func set(_ option: CURLoption, build: (inout CurlLines) throws(AFError) -> Void) throws(AFError) {
        var lines = CurlLines()
        try build(&lines)
        guard let list = lines.makeList() else { return }
        lists.append(list)
        try check(afcurl_easy_setopt_slist(raw, option, list.assumingMemoryBound(to: curl_slist.self)), option)
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws(AFError) {
        guard code != CURLE_OK else { return }
        let reason = String(cString: curl_easy_strerror(code))
        // libcurl's refusal (a feature it was built without, an allocation), not the caller's
        // mistake: a transport failure with libcurl's code.
        throw .transport(TransportFailure(kind: .other, message: "libcurl refused option \(option.rawValue): \(reason)", curlCode: Int(code.rawValue)))
    }

    // MARK: Reading information

    func long(_ info: CURLINFO) -> Int {
        var value = 0
        return afcurl_easy_getinfo_long(raw, info, &value) == CURLE_OK ? value : 0
    }

    func offset(_ info: CURLINFO) -> Int64 {
        var value: curl_off_t = 0
        return afcurl_easy_getinfo_off_t(raw, info, &value) == CURLE_OK ? Int64(value) : 0
    }

    func string(_ info: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>?
        guard afcurl_easy_getinfo_string(raw, info, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    /// Seconds from a `*_TIME_T` info (libcurl reports microseconds).
    func seconds(_ info: CURLINFO) -> Double {
        Double(offset(info)) / 1_000_000
    }
}

/// The lines of a `curl_slist` being built. Their bytes are gathered in one buffer, and
/// `makeList()` lays the whole list out in one block — the nodes, then the NUL-terminated
/// lines they point to — which its owner frees at once. (`curl_slist_append` walks the list
/// to its end and allocates a node and a copy of the text for every line: two allocations
/// and two frees a header, for every request.)
struct CurlLines {
    private var bytes: [UInt8] = []
    /// Where each line starts in `bytes`: a line is not found by its NUL, since one that held
    /// a NUL of its own must not turn into two.
    private var starts: [Int] = []

    /// Appends `text` as a line.
    mutating func append(_ text: String) {
        append(text, "", "")
    }

    /// Appends the line `first` + `separator` + `second`.
    mutating func append(_ first: String, _ separator: StaticString, _ second: String) {
        // Room for a typical request's header lines at the first one.
        if starts.isEmpty {
            bytes.reserveCapacity(max(512, first.utf8.count + second.utf8.count + 4))
            starts.reserveCapacity(8)
        }
        starts.append(bytes.count)
        appendBytes(of: first)
        separator.withUTF8Buffer { bytes.append(contentsOf: $0) }
        appendBytes(of: second)
        bytes.append(0)
    }

    /// A native string's bytes are copied as one block (appending the UTF-8 view copies
    /// them one by one); a bridged one's through its view.
    private mutating func appendBytes(of text: String) {
        if text.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) == nil {
            bytes.append(contentsOf: text.utf8)
        }
    }

    /// The list in one block, nil when no line was added; release it with `deallocate()`.
    func makeList() -> UnsafeMutableRawPointer? {
        guard !starts.isEmpty else { return nil }
        let nodeBytes = starts.count * MemoryLayout<curl_slist>.stride
        let block = UnsafeMutableRawPointer.allocate(byteCount: nodeBytes + bytes.count, alignment: MemoryLayout<curl_slist>.alignment)
        let text = (block + nodeBytes).bindMemory(to: CChar.self, capacity: bytes.count)
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress { UnsafeMutableRawPointer(text).copyMemory(from: base, byteCount: source.count) }
        }
        let nodes = block.bindMemory(to: curl_slist.self, capacity: starts.count)
        for (index, start) in starts.enumerated() {
            let next = index + 1 < starts.count ? nodes + index + 1 : nil
            (nodes + index).initialize(to: curl_slist(data: text + start, next: next))
        }
        return block
    }
}
