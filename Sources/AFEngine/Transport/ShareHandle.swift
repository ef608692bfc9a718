internal import CCurl

/// A libcurl share handle holding one session's cookies and, unless the session shares
/// another's thread and multi handle, its DNS cache (sessions that share a multi handle use
/// its DNS cache together, as they use its connections).
///
/// Only the driver thread (or the caller of `TransferDriver.runExclusively`) uses it, so it
/// needs no lock callbacks. It is freed with its session; libcurl refuses to free a share
/// still attached to an easy handle, and then it is kept rather than freed under a transfer.
final class ShareHandle: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer

    /// A share handle for cookies, and for the DNS cache when `holdsDNS`.
    init(holdsDNS: Bool) {
        CurlRuntime.ensureInitialized()
        guard let share = curl_share_init() else { fatalError("libcurl could not allocate a share handle") }
        _ = afcurl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue))
        if holdsDNS { _ = afcurl_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_DNS.rawValue)) }
        raw = share
    }

    deinit {
        _ = curl_share_cleanup(raw)
    }
}
