internal import CCurl
#if canImport(Glibc)
import Glibc
#endif

extension Session {
    /// Adds cookies to the session's cookie engine; later requests send them where their
    /// domain, path and `secure` flag allow. A cookie that is not `isWellFormed` is left out.
    /// `cookies` are taken as oldest first: of cookies a request carries that libcurl ranks
    /// alike (paths, domains and names of one length each), the earlier in `cookies` is sent
    /// first, as RFC 6265 §5.4 orders them by creation.
    public func importCookies(_ cookies: [Cookie]) {
        let lines = cookies.filter(\.isWellFormed).map(\.netscapeBytes)
        let share = self.share
        driver.runExclusively {
            guard let easy = curl_easy_init() else { return }
            defer { curl_easy_cleanup(easy) }
            _ = afcurl_easy_setopt_ptr(easy, CURLOPT_SHARE, share.raw)
            _ = "".withCString { afcurl_easy_setopt_string(easy, CURLOPT_COOKIEFILE, $0) }
            // libcurl numbers cookies as they come and sends the newest of equals first (and
            // keeps a replaced cookie's number): the last added counts as the newest.
            for line in lines.reversed() {
                // A C string (a well-formed cookie has no NUL).
                _ = (line + [0]).withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) { afcurl_easy_setopt_string(easy, CURLOPT_COOKIELIST, $0.baseAddress) }
                }
            }
            _ = afcurl_easy_setopt_ptr(easy, CURLOPT_SHARE, nil)
        }
    }

    /// Every cookie the session's cookie engine holds now.
    public func exportCookies() -> [Cookie] {
        let result = Protected<[Cookie]>([])
        let share = self.share
        driver.runExclusively {
            guard let easy = curl_easy_init() else { return }
            defer { curl_easy_cleanup(easy) }
            _ = afcurl_easy_setopt_ptr(easy, CURLOPT_SHARE, share.raw)
            var list: UnsafeMutablePointer<curl_slist>?
            if afcurl_easy_getinfo_slist(easy, CURLINFO_COOKIELIST, &list) == CURLE_OK {
                var cookies: [Cookie] = []
                var node = list
                while let current = node {
                    if let data = current.pointee.data,
                       let cookie = Cookie(netscapeBytes: UnsafeRawBufferPointer(start: data, count: strlen(data))) {
                        cookies.append(cookie)
                    }
                    node = current.pointee.next
                }
                curl_slist_free_all(list)
                result.write { $0 = cookies }
            }
            _ = afcurl_easy_setopt_ptr(easy, CURLOPT_SHARE, nil)
        }
        return result.value
    }
}
