internal import CCurl
internal import COpenSSL
internal import CZlib
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One-time process setup for libcurl and OpenSSL, and the versions they report.
package enum CurlRuntime {
    /// Initialises OpenSSL without its exit-time cleanup (which races handle teardown when a
    /// CLI exits right after a transfer), then libcurl. Safe to call many times.
    static func ensureInitialized() {
        _ = initialized
    }

    private static let initialized: Bool = {
        _ = afssl_init_no_atexit()
        return curl_global_init(Int(CURL_GLOBAL_ALL)) == CURLE_OK
    }()

    /// Whether `prepareInBackground` started the setup on a thread of its own.
    private static let preparing = Atomic<Bool>(false)

    /// Starts the one-time setup on a thread of its own, so that it runs while the caller
    /// reads and checks its input: OpenSSL's takes about a millisecond (its configuration
    /// and providers), which `af batch` spent before checking its file, with the second
    /// processor idle. Whatever needs libcurl first waits for the setup to end
    /// (`ensureInitialized`, a once-only initialiser). Only where libcurl says its setup may
    /// run beside other threads (`CURL_VERSION_THREADSAFE`, 7.84 and later); call
    /// `awaitPreparation` before the process exits.
    package static func prepareInBackground() {
        guard let info = afcurl_version_info(), info.pointee.features & Int32(bitPattern: afcurl_feature_threadsafe()) != 0,
              preparing.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        let started = BackgroundWork.start {
            // SIGINT and SIGTERM stay with the other threads: a read the main thread is
            // blocked in (a body from a terminal) ends when one arrives.
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGINT)
            sigaddset(&signals, SIGTERM)
            pthread_sigmask(SIG_BLOCK, &signals, nil)
            ensureInitialized()
        }
        if started != 0 {
            preparing.store(false, ordering: .relaxed)
        }
    }

    /// Waits for a setup `prepareInBackground` started (at once when it ended, or none
    /// started): a process must not exit while that thread is inside OpenSSL or libcurl.
    package static func awaitPreparation() {
        if preparing.load(ordering: .relaxed) { ensureInitialized() }
    }

    /// The libcurl version string, such as `7.88.1`.
    package static var curlVersion: String {
        ensureInitialized()
        guard let info = afcurl_version_info(), let version = info.pointee.version else { return "unknown" }
        return String(cString: version)
    }

    /// The TLS library libcurl was built with, as libcurl names it (`OpenSSL/3.0.19`).
    package static var curlTLSBackend: String {
        ensureInitialized()
        guard let info = afcurl_version_info(), let ssl = info.pointee.ssl_version else { return "none" }
        return String(cString: ssl)
    }

    /// The OpenSSL version af is linked with.
    package static var openSSLVersion: String {
        guard let text = OpenSSL_version(OPENSSL_VERSION) else { return "unknown" }
        return String(cString: text)
    }

    /// The zlib version af is linked with.
    package static var zlibVersionString: String {
        guard let text = zlibVersion() else { return "unknown" }
        return String(cString: text)
    }

    /// The CA bundle file and directory libcurl trusts when a transfer names none (its
    /// build's defaults, `CURLINFO_CAINFO` and `CURLINFO_CAPATH`, which libcurl 7.84 and later
    /// report); nil for one it does not say.
    package static let defaultCALocations: (file: String?, directory: String?) = {
        ensureInitialized()
        guard let handle = curl_easy_init() else { return (nil, nil) }
        defer { curl_easy_cleanup(handle) }
        // By number: headers older than 7.84 do not declare them, and such a libcurl answers
        // CURLE_UNKNOWN_OPTION.
        func text(_ number: UInt32) -> String? {
            var value: UnsafeMutablePointer<CChar>?
            guard afcurl_easy_getinfo_string(handle, CURLINFO(rawValue: UInt32(CURLINFO_STRING) + number), &value) == CURLE_OK, let value else { return nil }
            return String(cString: value)
        }
        return (text(61), text(62))
    }()

    /// libcurl's version as one number (0x075801 for 7.88.1); nil when it does not say.
    package static let versionNumber: UInt32? = {
        // Version information needs no setup (`prepareInBackground` may still be running it).
        afcurl_version_info()?.pointee.version_num
    }()

    /// Whether this libcurl reads its content-decoding switch as each body chunk arrives (7.x
    /// does; the client-writer rework of 8.x sets decoding up with the head), so that af can
    /// take a gzip body over once the head is complete. Where it cannot be sure, af still
    /// tries, but passes through bytes that libcurl already decoded.
    package static let decodingSwitchIsLive = versionNumber.map { $0 < 0x080000 } ?? false

    /// Whether this libcurl can reuse a cleartext HTTP/2 connection made with prior
    /// knowledge: 7.x could not (a second request on it failed in the HTTP/2 framing layer;
    /// fixed in 8.0.0, curl pull request 10643).
    package static let reusesPriorKnowledgeConnections = versionNumber.map { $0 >= 0x080000 } ?? false

    /// The content codings this libcurl can decode, in preference order.
    package static let supportedContentEncodings: [String] = {
        // libcurl's version information needs no setup: a request's headers are built
        // while the setup runs (`prepareInBackground`).
        guard let info = afcurl_version_info() else { return [] }
        let features = info.pointee.features
        var codings: [String] = []
        if features & CURL_VERSION_LIBZ != 0 { codings += ["gzip", "deflate"] }
        if features & CURL_VERSION_BROTLI != 0 { codings.append("br") }
        if features & CURL_VERSION_ZSTD != 0 { codings.append("zstd") }
        return codings
    }()

    /// `supportedContentEncodings` as an `Accept-Encoding` value (made once, not per request).
    package static let acceptEncodingValue = supportedContentEncodings.joined(separator: ", ")

    /// What may appear in an `Accept-Encoding` that libcurl is asked to decode, or in a
    /// `Content-Encoding` it decodes: its codings with the aliases it knows (`x-gzip`, and
    /// `none` for identity).
    static let decodableEncodings: [[UInt8]] = {
        var names = supportedContentEncodings + ["identity", "none", "*"]
        if supportedContentEncodings.contains("gzip") { names.append("x-gzip") }
        return names.map { Array($0.utf8) }
    }()

    /// Whether libcurl can decode every coding an `Accept-Encoding` (or `Content-Encoding`)
    /// value names: each comma-separated piece up to its parameters (`;q=…`), without
    /// surrounding spaces and tabs, compared without regard to case. Empty pieces
    /// (`gzip,,br`) are skipped; a piece with nothing before `;` names no coding and fails.
    /// Reads the bytes in place: it runs for every request that sends the header, and for
    /// every response with a `Content-Encoding`.
    package static func decodesEveryCoding(in value: String) -> Bool {
        // af's own default value, sent with nearly every request, is known to pass.
        if value == acceptEncodingValue { return true }
        var value = value
        return value.withUTF8 { bytes -> Bool in
            var start = 0
            while start < bytes.count {
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: ",") { end += 1 }
                defer { start = end + 1 }
                guard end > start else { continue }
                var high = start
                while high < end, bytes[high] != UInt8(ascii: ";") { high += 1 }
                var low = start
                while low < high, bytes[low] == 0x20 || bytes[low] == 0x09 { low += 1 }
                while high > low, bytes[high - 1] == 0x20 || bytes[high - 1] == 0x09 { high -= 1 }
                let coding = UnsafeBufferPointer(rebasing: bytes[low..<high])
                guard decodableEncodings.contains(where: { known in
                    known.count == coding.count && zip(known, coding).allSatisfy { $0 == ($1 | (($1 &- 0x41) < 26 ? 0x20 : 0)) }
                }) else { return false }
            }
            return true
        }
    }
}
