/// Reads the commonest URLs without libcurl's URL parser, which costs about 16,000
/// instructions a parse (it allocates a handle, normalises the host with formatted prints,
/// and hands every part back as a new C string) and runs for every line of a batch.
///
/// Only a URL that libcurl would leave exactly as written is read here; anything else is
/// left to libcurl (`nil`). A simple URL is
///
///     http[s]://HOST[:PORT][/PATH][?QUERY]
///
/// - the scheme in lower case;
/// - HOST made of lower-case letters, digits, `-` and `.`, with no empty label, starting
///   with a letter, or else an IPv4 address in its plain form (four decimal numbers up to 255
///   without leading zeros), which libcurl would not rewrite;
/// - PORT from 1 to 65535 without leading zeros;
/// - PATH and QUERY made of unreserved characters, sub-delimiters, `:` `@` `/` (and `?` in
///   the query) and `%` followed by two hexadecimal digits; no dot segment (`/.` starts
///   none in a simple path, so whether dot segments are kept cannot matter) and no empty
///   query.
///
/// User information, fragments, IPv6 literals, upper case in the scheme or host, other
/// characters and very long URLs all go to libcurl. The fuzz target `url` and the engine's
/// tests check that both readings agree wherever this one answers.
enum SimpleURL {
    static func parse(_ text: String) -> HTTPURL? {
        var bytes = text
        return bytes.withUTF8 { read($0, text: text) }
    }

    private static func read(_ bytes: UnsafeBufferPointer<UInt8>, text: String) -> HTTPURL? {
        let count = bytes.count
        guard count < 4096, count > 8, bytes[0] == ascii("h"), bytes[1] == ascii("t"), bytes[2] == ascii("t"),
              bytes[3] == ascii("p") else { return nil }
        var index = 4
        let https = bytes[4] == ascii("s")
        if https { index += 1 }
        guard index + 3 <= count, bytes[index] == ascii(":"), bytes[index + 1] == ascii("/"), bytes[index + 2] == ascii("/")
        else { return nil }
        index += 3

        // The host.
        let hostStart = index
        var label = 0
        var letters = false
        while index < count {
            let byte = bytes[index]
            if isLower(byte) || byte == ascii("-") {
                letters = true
            } else if byte == ascii(".") {
                guard label > 0 else { return nil }
                label = 0
                index += 1
                continue
            } else if !isDigit(byte) {
                break
            }
            label += 1
            index += 1
        }
        let hostEnd = index
        guard label > 0 else { return nil }  // no host, an empty label, or a trailing dot
        let host = UnsafeBufferPointer(rebasing: bytes[hostStart..<hostEnd])
        if isDigit(host[0]) {
            guard !letters, isPlainIPv4(host) else { return nil }
        }

        // The port.
        var port: Int?
        if index < count, bytes[index] == ascii(":") {
            index += 1
            let start = index
            var value = 0
            while index < count, isDigit(bytes[index]), index - start < 5 {
                value = value * 10 + Int(bytes[index] - ascii("0"))
                index += 1
            }
            guard index > start, bytes[start] != ascii("0"), value <= 65535 else { return nil }
            port = value
        }
        let authorityEnd = index

        // The path.
        let hasPath = index < count && bytes[index] == ascii("/")
        let pathStart = index
        if hasPath {
            while index < count, bytes[index] != ascii("?") {
                let byte = bytes[index]
                if byte == ascii("/") {
                    if index + 1 < count, bytes[index + 1] == ascii(".") { return nil }
                } else if !isPathByte(byte, bytes, index) {
                    return nil
                }
                index += 1
            }
        }
        let pathEnd = index

        // The query.
        var query: String?
        if index < count {
            guard bytes[index] == ascii("?"), index + 1 < count else { return nil }
            index += 1
            let start = index
            while index < count {
                let byte = bytes[index]
                guard byte == ascii("?") || byte == ascii("/") || isPathByte(byte, bytes, index) else { return nil }
                index += 1
            }
            query = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<count]), as: UTF8.self)
        }

        let path = hasPath ? String(decoding: UnsafeBufferPointer(rebasing: bytes[pathStart..<pathEnd]), as: UTF8.self) : "/"
        var string = text
        if !hasPath {
            // libcurl writes the root path a URL left out.
            string = String(decoding: UnsafeBufferPointer(rebasing: bytes[0..<authorityEnd]), as: UTF8.self)
            string += "/"
            string += String(decoding: UnsafeBufferPointer(rebasing: bytes[authorityEnd..<count]), as: UTF8.self)
        }
        return HTTPURL(
            scheme: https ? "https" : "http", host: String(decoding: host, as: UTF8.self), port: port,
            path: path, query: query, string: string
        )
    }

    /// Four decimal numbers up to 255 without leading zeros, which libcurl keeps as written
    /// (it rewrites other forms: `127.1`, `0x7f.0.0.1`, `017.0.0.1`, `2130706433`).
    private static func isPlainIPv4(_ host: UnsafeBufferPointer<UInt8>) -> Bool {
        var parts = 0
        var value = 0
        var digits = 0
        for byte in host {
            if byte == ascii(".") {
                parts += 1
                value = 0
                digits = 0
                continue
            }
            guard isDigit(byte), !(digits == 1 && value == 0) else { return false }
            value = value * 10 + Int(byte - ascii("0"))
            digits += 1
            guard value <= 255 else { return false }
        }
        return parts == 3
    }

    /// Unreserved, sub-delimiters, `:` and `@`, or `%` and two hexadecimal digits.
    private static func isPathByte(_ byte: UInt8, _ bytes: UnsafeBufferPointer<UInt8>, _ index: Int) -> Bool {
        switch byte {
        case ascii("a")...ascii("z"), ascii("A")...ascii("Z"), ascii("0")...ascii("9"):
            return true
        case ascii("-"), ascii("."), ascii("_"), ascii("~"), ascii("!"), ascii("$"), ascii("&"), ascii("'"),
             ascii("("), ascii(")"), ascii("*"), ascii("+"), ascii(","), ascii(";"), ascii("="), ascii(":"), ascii("@"):
            return true
        case ascii("%"):
            return index + 2 < bytes.count && isHex(bytes[index + 1]) && isHex(bytes[index + 2])
        default:
            return false
        }
    }

    private static func ascii(_ scalar: Unicode.Scalar) -> UInt8 { UInt8(ascii: scalar) }
    private static func isLower(_ byte: UInt8) -> Bool { byte >= 0x61 && byte <= 0x7A }
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
    private static func isHex(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66)
    }
}
