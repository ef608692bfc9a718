internal import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// HTTP dates (IMF-fixdate and the two obsolete forms), parsed by libcurl.
package enum HTTPDate {
    /// Seconds since the epoch, or nil when `text` is not a date.
    package static func parse(_ text: String) -> Int? {
        let value = curl_getdate(text, nil)
        return value < 0 ? nil : Int(value)
    }

    /// The current time in seconds since the epoch.
    package static func now() -> Int {
        Int(time(nil))
    }

    /// An IMF-fixdate such as `Sun, 06 Nov 1994 08:49:37 GMT`.
    package static func format(_ seconds: Int) -> String {
        var value = time_t(seconds)
        var parts = tm()
        gmtime_r(&value, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ number: Int32) -> String { number < 10 ? "0\(number)" : "\(number)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
