internal import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// HTTP dates (IMF-fixdate and the two obsolete forms), parsed by libcurl.
public enum HTTPDate {
    /// Seconds since the epoch, or nil when `text` is not a date.
    public static func parse(_ text: String) -> Int? {
        let value = curl_getdate(text, nil)
        return value < 0 ? nil : Int(value)
    }

    /// The current time in seconds since the epoch.
    public static func now() -> Int {
        Int(time(nil))
    }
}
