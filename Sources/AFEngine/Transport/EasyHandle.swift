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
    private var lists: [UnsafeMutablePointer<curl_slist>] = []
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
        for list in lists { curl_slist_free_all(list) }
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
        try set(option) { (list: inout CurlLines) throws(AFError) in
            for line in lines { try list.append(line) }
        }
    }

    /// Builds a `curl_slist` with `build`, keeps it alive for the handle's lifetime, and sets
    /// it (nothing is set when `build` adds no line).
    func set(_ option: CURLoption, build: (inout CurlLines) throws(AFError) -> Void) throws(AFError) {
        var lines = CurlLines()
        do {
            try build(&lines)
        } catch {
            if let list = lines.list { curl_slist_free_all(list) }
            throw error
        }
        guard let list = lines.list else { return }
        lists.append(list)
        try check(afcurl_easy_setopt_slist(raw, option, list), option)
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

/// The lines of a `curl_slist` being built: each is put together in one reused buffer from
/// its pieces (libcurl copies it), so no string is made per line.
struct CurlLines {
    private(set) var list: UnsafeMutablePointer<curl_slist>?
    private var line: [UInt8] = []

    /// Appends `text` as a line.
    mutating func append(_ text: String) throws(AFError) {
        try append(text, "", "")
    }

    /// Appends the line `first` + `separator` + `second`.
    mutating func append(_ first: String, _ separator: StaticString, _ second: String) throws(AFError) {
        line.removeAll(keepingCapacity: true)
        // Room for a typical header line at the first one, so the buffer is made once.
        line.reserveCapacity(max(256, first.utf8.count + second.utf8.count + 4))
        line.append(contentsOf: first.utf8)
        separator.withUTF8Buffer { line.append(contentsOf: $0) }
        line.append(contentsOf: second.utf8)
        line.append(0)
        let appended = line.withUnsafeBufferPointer { bytes -> UnsafeMutablePointer<curl_slist>? in
            guard let base = bytes.baseAddress else { return nil }
            return UnsafeRawPointer(base).withMemoryRebound(to: CChar.self, capacity: bytes.count) { curl_slist_append(list, $0) }
        }
        guard let appended else {
            throw .invalidRequest(reason: "out of memory building a header list")
        }
        list = appended
    }
}
