#if canImport(Glibc)
import Glibc
#endif

/// A `no_proxy` list read as libcurl reads it, to tell whether a request went to its host or
/// to the proxy (libcurl decides, and does not say which it did).
///
/// libcurl's rules, as 7.88 and 8.x apply them (checked against libcurl 7.88.1 through the
/// curl tool): the list `*` (exactly, no blanks) sends every request around the proxy;
/// otherwise entries are separated by commas and blanks. A host name matches an entry that
/// is the name or a domain above it, in any case, a leading or trailing dot on the entry (and
/// a trailing dot on the host) left out: `.example.org` and `example.org.` match
/// `www.example.org`. An entry with a port (`example.org:8080`), or a `*` in a longer list,
/// matches nothing. An address (`10.1.2.3`, `[::1]`) matches only an address of its family,
/// exactly or within the entry's `ADDRESS/BITS` range (`10.0.0.0/8`; no bits, or 0, means the
/// address itself); libcurl before 7.86 compared an address as it compares names, and read
/// no ranges.
package enum NoProxyList {
    /// Whether `list` sends a request for `host` (as a URL holds it: an IPv6 address in
    /// brackets) around any proxy; nil where libcurl's reading is not certain (before 7.86,
    /// a host name with a trailing dot or a tab in the list; an IPv6 range that does not end
    /// on a byte). `readsRanges` is whether libcurl is 7.86 or later.
    package static func sendsAround(_ list: String, host: String, readsRanges: Bool) -> Bool? {
        if list == "*" { return true }
        let isBracketed = host.hasPrefix("[") && host.hasSuffix("]")
        let bare = isBracketed ? String(host.dropFirst().dropLast()) : host
        let family: Int32? = isBracketed ? AF_INET6 : (Self.address(bare, family: AF_INET) != nil ? AF_INET : nil)
        if !readsRanges && list.utf8.contains(UInt8(ascii: "\t")) {
            // Older libcurl split the list at commas and spaces only.
            return nil
        }
        let candidate = IDNA.comparable(bare.hasSuffix(".") ? String(bare.dropLast()) : bare)
        var unsure = false
        for entry in Self.entries(list) {
            if let family, readsRanges {
                switch Self.matches(address: bare, family: family, entry: entry) {
                case true?: return true
                case nil: unsure = true
                case false?: break
                }
                continue
            }
            // A name (or, before 7.86, an address read as one), compared as text: an entry
            // with a port or a range matches no name, as in libcurl.
            guard !bare.hasSuffix(".") || readsRanges else {
                // 7.86 and later leave a host name's trailing dot out (7.88.1 does);
                // older libcurl may not have.
                unsure = true
                continue
            }
            var name = entry
            if name.hasPrefix(".") { name = name.dropFirst() }
            if name.hasSuffix(".") {
                // 7.86 and later leave a trailing dot out; older libcurl kept it, and then
                // matched no host.
                guard readsRanges else { continue }
                name = name.dropLast()
            }
            let wanted = IDNA.comparable(String(name))
            if wanted.isEmpty { continue }
            if candidate == wanted || candidate.hasSuffix("." + wanted) { return true }
        }
        return unsure ? nil : false
    }

    /// The entries of a list: separated by commas, spaces and tabs.
    package static func entries(_ list: String) -> [Substring] {
        list.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" })
    }

    /// Whether `address` (of `family`) lies in `entry`'s `ADDRESS[/BITS]`; false for an entry
    /// that is not an address of that family, nil for an IPv6 range libcurl reads in its
    /// own way (bits that do not end on a byte).
    private static func matches(address: String, family: Int32, entry: Substring) -> Bool? {
        var text = entry
        var bits = 0
        if let slash = entry.firstIndex(of: "/") {
            text = entry[..<slash]
            // libcurl reads the bits with atoi: the digits that lead, none being 0.
            let digits = entry[entry.index(after: slash)...].prefix { $0.isASCII && $0.isNumber }
            bits = digits.count > 4 ? Int.max : Int(digits) ?? 0
        }
        let width = family == AF_INET ? 32 : 128
        if bits == 0 { bits = width }
        guard bits <= width, let host = Self.address(address, family: family), let network = Self.address(String(text), family: family) else { return false }
        if family == AF_INET6, !bits.isMultiple(of: 8) { return nil }
        let whole = bits / 8
        if host.prefix(whole) != network.prefix(whole) { return false }
        let rest = bits % 8
        guard rest > 0 else { return true }
        let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - rest))
        return host[whole] & mask == network[whole] & mask
    }

    /// The bytes of a numeric address of `family`, in network order; nil when `text` is not one.
    static func address(_ text: String, family: Int32) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: family == AF_INET ? 4 : 16)
        let parsed = bytes.withUnsafeMutableBytes { buffer in inet_pton(family, text, buffer.baseAddress) }
        return parsed == 1 ? bytes : nil
    }
}
