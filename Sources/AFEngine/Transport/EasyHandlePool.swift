internal import CCurl

/// Idle libcurl easy handles of one transfer driver, reset and ready for the next transfer.
///
/// A handle keeps its TLS session cache across `curl_easy_reset`, so a transfer that takes a
/// handle from the pool can resume a TLS session that an earlier transfer of the driver
/// negotiated, wherever the transfer's trust settings allow resumption (see
/// `Transfer.configureTLS`). libcurl looks a session up by host, port and TLS configuration
/// (verification, CA file, client certificate, ciphers, versions), so a session is only ever
/// resumed under the settings it was verified with. Reuse also spares creating and freeing a
/// handle per transfer.
///
/// Handles are given back only when they are in no multi handle and carry no share handle.
final class EasyHandlePool: Sendable {
    /// Idle handles kept at most; more are freed. A burst larger than this still works, it
    /// just gives the extra handles back to libcurl afterwards.
    static let capacity = 64

    /// A libcurl handle that no thread is using.
    private struct Handle: @unchecked Sendable {
        let raw: UnsafeMutableRawPointer
    }

    private struct Idle: Sendable {
        var handles: [Handle] = []
    }

    private let idle = Protected(Idle())

    deinit {
        for handle in idle.value.handles { curl_easy_cleanup(handle.raw) }
    }

    /// An idle handle, or nil when there is none (the caller makes a new one).
    func take() -> UnsafeMutableRawPointer? {
        idle.write { $0.handles.popLast() }?.raw
    }

    /// Resets `handle` (options, callbacks and authentication state go; its TLS session
    /// cache stays) and keeps it for the next transfer, or frees it when the pool is full.
    ///
    /// libcurl 7.88 refuses a new receive-buffer size while a handle still holds the buffer
    /// of its last transfer (it keeps it after some HTTP/2 streams); such a handle could not
    /// take the size the next transfer asks for, so it is freed rather than kept.
    func give(_ handle: UnsafeMutableRawPointer) {
        // libcurl 7.88's reset drops, without freeing, the list of cookie files its last
        // transfer named (`CURLOPT_COOKIEFILE ""` for the cookie engine): cleared first.
        _ = afcurl_easy_setopt_string(handle, CURLOPT_COOKIEFILE, nil)
        curl_easy_reset(handle)
        guard afcurl_easy_setopt_long(handle, CURLOPT_BUFFERSIZE, 0) == CURLE_OK else {
            curl_easy_cleanup(handle)
            return
        }
        let kept = idle.write { state -> Bool in
            guard state.handles.count < Self.capacity else { return false }
            state.handles.append(Handle(raw: handle))
            return true
        }
        if !kept { curl_easy_cleanup(handle) }
    }
}
