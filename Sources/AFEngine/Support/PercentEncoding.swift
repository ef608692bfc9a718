/// Names and values in a URL's query or a form body: every byte but RFC 3986's unreserved
/// characters (`A–Z a–z 0–9 - . _ ~`) percent-encoded, so that any text (`&`, `=`, `+`,
/// `é`, a space) arrives as written. The command line's query items (`q==swift lang`) and
/// form fields use it, as a program does through `RequestDescription.appendQuery` and
/// `setFormBody`.
public enum PercentEncoding {
    /// `text` with every byte but the unreserved characters as `%XX` (upper-case hex).
    public static func component(_ text: String) -> String {
        encoded(text, spaceAsPlus: false)
    }

    /// `component`, with a space as `+` (`application/x-www-form-urlencoded`).
    public static func formComponent(_ text: String) -> String {
        encoded(text, spaceAsPlus: true)
    }

    /// `name=value&…` for a URL's query, each side as `component`.
    public static func query(_ items: [(name: String, value: String)]) -> String {
        items.map { "\(component($0.name))=\(component($0.value))" }.joined(separator: "&")
    }

    /// `name=value&…` for a form body, each side as `formComponent`.
    public static func form(_ fields: [(name: String, value: String)]) -> String {
        fields.map { "\(formComponent($0.name))=\(formComponent($0.value))" }.joined(separator: "&")
    }

    /// `url` with an encoded `query` added to the query it has (after `?`, or `&` unless it
    /// ends with one), before any `#fragment`.
    public static func appendingQuery(_ query: String, to url: String) -> String {
        guard !query.isEmpty else { return url }
        let fragmentStart = url.utf8.firstIndex(of: UInt8(ascii: "#"))
        let base = fragmentStart.map { String(url[..<$0]) } ?? url
        let fragment = fragmentStart.map { String(url[$0...]) } ?? ""
        let joiner = base.utf8.contains(UInt8(ascii: "?")) ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
        return base + joiner + query + fragment
    }

    private static func encoded(_ text: String, spaceAsPlus: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            case UInt8(ascii: " ") where spaceAsPlus:
                out.append(UInt8(ascii: "+"))
            default:
                out.append(UInt8(ascii: "%"))
                Hex.append(byte, to: &out, uppercase: true)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension RequestDescription {
    /// Adds `items` to the URL's query, each name and value percent-encoded
    /// (`PercentEncoding.query`): `[("q", "swift lang")]` makes `?q=swift%20lang`.
    public mutating func appendQuery(_ items: [(name: String, value: String)]) {
        url = PercentEncoding.appendingQuery(PercentEncoding.query(items), to: url)
    }

    /// Sends `fields` as an `application/x-www-form-urlencoded` body (`PercentEncoding.form`),
    /// with that `Content-Type` unless the headers name a type.
    public mutating func setFormBody(_ fields: [(name: String, value: String)]) {
        body = .bytes(Array(PercentEncoding.form(fields).utf8))
        if !headers.contains(.contentType) { headers.add(name: .contentType, value: "application/x-www-form-urlencoded") }
    }
}
