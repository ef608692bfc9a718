import COpenSSL
import CZlib
import Foundation

/// The routes every test server answers, modelled on httpbin.
///
/// | path | reply |
/// |---|---|
/// | `/echo`, `/get`, `/post`, `/anything*` | JSON describing the request as received |
/// | `/status/N` | status N (`?retry_after=S` adds Retry-After) |
/// | `/delay/S` | waits S seconds, then 200 |
/// | `/bytes/N` | N pattern bytes; honours `Range` and `If-Range`, ETag `"bytes-N"` |
/// | `/redirect/N`, `/redirect-to?url=U&status=S` | redirect chains |
/// | `/headers?count=N` | N extra headers |
/// | `/json`, `/gzip[?as=CODING]`, `/deflate`, `/bomb?mb=N` | JSON, compressed JSON (labelled CODING), a gzip bomb |
/// | `/stream/N`, `/sse` | chunked NDJSON lines and server-sent events, paced |
/// | `/drop`, `/stall`, `/wrong-length`, `/bad-chunk`, `/no-response`, `/garbage` | faults |
/// | `/cookies/set?k=v`, `/cookies` | set and show cookies |
/// | `/basic-auth/U/P`, `/digest-auth/U/P`, `/bearer` | authentication challenges |
/// | `/download/NAME` | attachment with `Content-Disposition: filename="NAME"` |
/// | `/text/utf8`, `/text/latin1`, `/binary`, `/escape`, `/xssi`, `/html`, `/xml` | output cases |
/// | `/large-json?mb=N`, `/large-markup?mb=N&type=xml\|html` | large documents for the benchmarks |
/// | `/hostile/NAME` | broken and hostile replies (see `HostileRoutes`) |
public enum BuiltinRoutes {
    public static func reply(to request: ServerRequest, hit: Int) -> Reply {
        let path = request.path
        let parts = path.split(separator: "/").map(String.init)
        switch parts.first ?? "" {
        case "echo", "get", "post", "put", "patch", "delete", "anything": return .json(echo(request))
        case "status": return status(Int(parts.dropFirst().first ?? "") ?? 200, request)
        case "delay": return delay(Double(parts.dropFirst().first ?? "") ?? 1, request)
        case "bytes": return bytes(Int(parts.dropFirst().first ?? "") ?? 1024, request)
        case "redirect": return redirect(Int(parts.dropFirst().first ?? "") ?? 1)
        case "redirect-to":
            return .response(status: Int(request.queryValue("status") ?? "302") ?? 302, headers: [("Location", request.queryValue("url") ?? "/get")])
        case "headers": return manyHeaders(Int(request.queryValue("count") ?? "10") ?? 10)
        case "json": return .json(sampleJSON)
        case "discard": return .json("{\"received\": \(request.discardedBytes + request.body.count)}")
        case "large-json": return largeJSON(megabytes: Int(request.queryValue("mb") ?? "25") ?? 25)
        case "large-markup": return largeMarkup(megabytes: Int(request.queryValue("mb") ?? "7") ?? 7, html: request.queryValue("type") == "html")
        case "gzip": return compressed(Array(sampleJSON.utf8), gzip: true, coding: request.queryValue("as"))
        case "deflate": return compressed(Array(sampleJSON.utf8), gzip: false)
        case "bomb": return compressed([UInt8](repeating: 0, count: (Int(request.queryValue("mb") ?? "64") ?? 64) << 20), gzip: true)
        case "stream": return ndjson(Int(parts.dropFirst().first ?? "") ?? 3, interval: Double(request.queryValue("interval") ?? "0.05") ?? 0.05)
        case "sse": return serverSentEvents(Int(request.queryValue("count") ?? "3") ?? 3)
        case "drop": return drop()
        case "stall": return stall()
        case "wrong-length": return .raw(Array("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly fifty bytes of the promised hundred.........".utf8), close: true)
        case "bad-chunk": return .raw(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n".utf8), close: true)
        case "no-response": return .custom { $0.close() }
        case "garbage": return .raw(Array("this is not http\r\n\r\n".utf8), close: true)
        case "cookies": return cookies(request, set: parts.count > 1 && parts[1] == "set")
        case "basic-auth": return basicAuth(request, user: parts.count > 1 ? parts[1] : "user", password: parts.count > 2 ? parts[2] : "pass")
        case "digest-auth": return DigestChallenge.reply(request, user: parts.count > 1 ? parts[1] : "user", password: parts.count > 2 ? parts[2] : "pass")
        case "bearer": return bearer(request)
        case "download": return download(parts.dropFirst().joined(separator: "/"), request)
        case "text": return text(parts.count > 1 ? parts[1] : "utf8")
        case "binary": return .response(status: 200, headers: [("Content-Type", "application/octet-stream")], body: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52])
        case "escape": return .text("before\u{1b}]0;pwned\u{07}\u{1b}[31mred\u{1b}[0m after\n", headers: [("X-Evil", "a\u{1b}[2Jb")])
        case "xssi": return .json(")]}',\n{\"a\": [1, 2]}")
        case "hostile": return HostileRoutes.reply(parts.count > 1 ? parts[1] : "", request)
        case "xml": return .text(sampleXML, type: request.queryValue("type") ?? "application/xml")
        case "html": return .text("<!doctype html><title>af</title><p>hello</p>\n", type: "text/html; charset=utf-8")
        default: return .json("{\"error\": \"not found\", \"path\": \(JSONText.string(path))}", status: 404)
        }
    }

    /// The JSON body of `/echo`: method, target, headers in order, body as text and base64.
    public static func echo(_ request: ServerRequest) -> String {
        let headers = request.headers.map { "[\(JSONText.string($0.name)), \(JSONText.string($0.value))]" }.joined(separator: ", ")
        let text = String(validating: request.body, as: UTF8.self)
        return """
        {"method": \(JSONText.string(request.method)), "target": \(JSONText.string(request.target)), \
        "headers": [\(headers)], "body": \(text.map(JSONText.string) ?? "null"), \
        "body_base64": \(JSONText.string(Data(request.body).base64EncodedString())), "body_length": \(request.body.count), \
        "chunked": \(request.chunked)}
        """
    }

    /// XML with a declaration, an internal DTD with nested entities (never expanded), a
    /// comment, attributes, text, an empty element and CDATA.
    public static let sampleXML = """
    <?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><root a="1"><!-- note --><item id='x'>text &b; here</item><empty/><nested><deep>1</deep></nested><![CDATA[<raw>]]></root>
    """

    public static let sampleJSON = """
    {"name":"af","version":1.10,"big":123456789012345678901234567890,"tiny":1e-7,"list":[1,2,{"nested":true}],"escaped":"\\u00e9\\n","empty":{},"none":null}
    """

    /// A minified JSON array of about `megabytes` MB: objects with big and decimal numbers,
    /// escapes and nesting, the same every time.
    public static func largeJSONBody(megabytes: Int) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "[")]
        var index = 0
        let target = megabytes * 1_000_000
        while out.count < target {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            let record = "{\"id\":\(index),\"big\":\(index + 1)123456789012345678901,\"ratio\":0.\(index % 997)0,\"name\":\"item \\u00e9 \(index)\\n\",\"tags\":[\"a\",\"b\",{\"deep\":[true,false,null]}],\"ok\":true}"
            out.append(contentsOf: record.utf8)
            index += 1
        }
        out.append(UInt8(ascii: "]"))
        return out
    }

    nonisolated(unsafe) private static var largeJSONCache: [Int: [UInt8]] = [:]
    private static let largeJSONLock = NSLock()

    static func largeJSON(megabytes: Int) -> Reply {
        let body = largeJSONLock.withLock { () -> [UInt8] in
            if let cached = largeJSONCache[megabytes] { return cached }
            let made = largeJSONBody(megabytes: megabytes)
            largeJSONCache[megabytes] = made
            return made
        }
        return .response(status: 200, headers: [("Content-Type", "application/json")], body: body)
    }

    /// An XML document (nested elements, attributes, text, empty elements, comments) or an
    /// HTML page (the same, in `div`s and links) of about `megabytes` MB, without whitespace
    /// between tags.
    static func largeMarkup(megabytes: Int, html: Bool) -> Reply {
        var out: [UInt8] = Array((html ? "<!DOCTYPE html>\n<html><head><title>large</title></head><body>" : "<?xml version=\"1.0\"?>\n<records>").utf8)
        let target = megabytes * 1_000_000
        var index = 0
        while out.count < target {
            let record = html
                ? "<div class=\"item\" id=\"i\(index)\"><a href=\"/p/\(index)?q=1&amp;r=2\">Link \(index)</a> <span data-v='\(index)'>text \u{e9} \(index)</span><!-- \(index) --></div>\n"
                : "<record id=\"\(index)\"><name>item \u{e9} \(index)</name><value unit='ms'>\(index % 997)</value><empty/><!-- \(index) --></record>"
            out.append(contentsOf: record.utf8)
            index += 1
        }
        out.append(contentsOf: (html ? "</body></html>\n" : "</records>\n").utf8)
        return .response(status: 200, headers: [("Content-Type", html ? "text/html; charset=utf-8" : "application/xml")], body: out)
    }

    static func status(_ code: Int, _ request: ServerRequest) -> Reply {
        var headers: [(String, String)] = [("Content-Type", "application/json")]
        if let retryAfter = request.queryValue("retry_after") { headers.append(("Retry-After", retryAfter)) }
        if let location = request.queryValue("location") { headers.append(("Location", location)) }
        return .response(status: code, headers: headers, body: Array("{\"status\": \(code)}".utf8))
    }

    static func delay(_ seconds: Double, _ request: ServerRequest) -> Reply {
        Thread.sleep(forTimeInterval: seconds)
        return .json("{\"delayed\": \(seconds)}")
    }

    /// `/bytes/N`, with byte ranges. `?type=` sets the Content-Type.
    static func bytes(_ count: Int, _ request: ServerRequest) -> Reply {
        let etag = "\"bytes-\(count)\""
        var start = 0
        var status = 200
        if let range = request.header("Range"), range.hasPrefix("bytes="),
           request.header("If-Range").map({ $0 == etag }) ?? true
        {
            let spec = range.dropFirst(6).split(separator: "-", omittingEmptySubsequences: false)
            if let first = spec.first, let value = Int(first) {
                if value >= count {
                    return .response(status: 416, headers: [("Content-Range", "bytes */\(count)")])
                }
                start = value
                status = 206
            }
        }
        var headers: [(String, String)] = [
            ("Content-Type", request.queryValue("type") ?? "application/octet-stream"),
            ("Content-Length", "\(count - start)"), ("ETag", etag), ("Accept-Ranges", "bytes"),
        ]
        if status == 206 { headers.append(("Content-Range", "bytes \(start)-\(count - 1)/\(count)")) }
        let head = "HTTP/1.1 \(status) \(status == 206 ? "Partial Content" : "OK")\r\n" + headers.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
        let isHead = request.method == "HEAD"
        let offset = start
        return .custom { connection in
            guard connection.write(head), !isHead else { return }
            TestData.stream(count: count - offset, offset: offset) { connection.write($0) }
        }
    }

    static func redirect(_ remaining: Int) -> Reply {
        .response(status: 302, headers: [("Location", remaining > 1 ? "/redirect/\(remaining - 1)" : "/get")])
    }

    static func manyHeaders(_ count: Int) -> Reply {
        .response(status: 200, headers: (0..<count).map { ("X-Header-\($0)", "value \($0)") } + [("Content-Type", "text/plain")], body: Array("ok\n".utf8))
    }

    static func compressed(_ body: [UInt8], gzip: Bool, coding: String? = nil) -> Reply {
        .response(status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", coding ?? (gzip ? "gzip" : "deflate"))], body: Deflate.compress(body, gzip: gzip))
    }

    static func ndjson(_ count: Int, interval: Double) -> Reply {
        .custom { connection in
            connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n")
            for index in 0..<count {
                let line = "{\"index\":\(index),\"items\":[\(index),\"x\"]}\n"
                guard connection.write(String(line.utf8.count, radix: 16) + "\r\n" + line + "\r\n") else { return }
                Thread.sleep(forTimeInterval: interval)
            }
            connection.write("0\r\n\r\n")
        }
    }

    static func serverSentEvents(_ count: Int) -> Reply {
        .custom { connection in
            connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
            for index in 0..<count {
                let event = "event: tick\ndata: {\"n\": \(index)}\n\n"
                guard connection.write(String(event.utf8.count, radix: 16) + "\r\n" + event + "\r\n") else { return }
                Thread.sleep(forTimeInterval: 0.05)
            }
            connection.write("0\r\n\r\n")
        }
    }

    static func drop() -> Reply {
        .custom { connection in
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: text/plain\r\n\r\n")
            connection.write([UInt8](repeating: 65, count: 100))
            connection.close()
        }
    }

    static func stall() -> Reply {
        .custom { connection in
            connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: text/plain\r\n\r\n")
            for _ in 0..<600 {
                Thread.sleep(forTimeInterval: 0.1)
                if !connection.write([]) { return }
            }
            connection.close()
        }
    }

    static func cookies(_ request: ServerRequest, set: Bool) -> Reply {
        if set {
            let cookies = request.queryItems.map { ("Set-Cookie", "\($0.0)=\($0.1); Path=/") }
            return .response(status: 200, headers: cookies + [("Content-Type", "application/json")], body: Array("{}".utf8))
        }
        let cookie = request.header("Cookie") ?? ""
        return .json("{\"cookie\": \(JSONText.string(cookie))}")
    }

    static func basicAuth(_ request: ServerRequest, user: String, password: String) -> Reply {
        let expected = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        guard request.header("Authorization") == expected else {
            return .response(status: 401, headers: [("WWW-Authenticate", "Basic realm=\"af\"")], body: Array("{\"authenticated\": false}".utf8))
        }
        return .json("{\"authenticated\": true, \"user\": \(JSONText.string(user))}")
    }

    static func bearer(_ request: ServerRequest) -> Reply {
        guard let header = request.header("Authorization"), header.hasPrefix("Bearer ") else {
            return .response(status: 401, headers: [("WWW-Authenticate", "Bearer")], body: Array("{\"authenticated\": false}".utf8))
        }
        return .json("{\"authenticated\": true, \"token\": \(JSONText.string(String(header.dropFirst(7))))}")
    }

    static func download(_ name: String, _ request: ServerRequest) -> Reply {
        let body = Array("contents of \(name)\n".utf8)
        return .response(status: 200, headers: [("Content-Type", "text/plain"), ("Content-Disposition", "attachment; filename=\"\(name)\"")], body: body)
    }

    static func text(_ kind: String) -> Reply {
        switch kind {
        case "latin1":
            return .response(status: 200, headers: [("Content-Type", "text/plain; charset=iso-8859-1")], body: [0x63, 0x61, 0x66, 0xE9, 0x0A])
        default:
            return .text("héllo wörld ✓\n")
        }
    }
}

/// zlib compression for compressed replies.
public enum Deflate {
    /// Compresses `bytes` as gzip, zlib-wrapped deflate, or (`raw`) deflate without the zlib
    /// wrapper, as some servers send it.
    public static func compress(_ bytes: [UInt8], gzip: Bool, raw: Bool = false) -> [UInt8] {
        var stream = z_stream()
        let windowBits: Int32 = gzip ? 31 : raw ? -15 : 15
        guard deflateInit2_(&stream, 9, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return [] }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(bytes.count))) + 64)
        var input = bytes
        let produced = input.withUnsafeMutableBufferPointer { inputBuffer -> Int in
            output.withUnsafeMutableBufferPointer { outputBuffer -> Int in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = UInt32(inputBuffer.count)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = UInt32(outputBuffer.count)
                _ = CZlib.deflate(&stream, Z_FINISH)
                return outputBuffer.count - Int(stream.avail_out)
            }
        }
        return Array(output.prefix(produced))
    }

    /// Inflates zlib-wrapped deflate data (what `-x` sends).
    public static func inflate(_ bytes: [UInt8]) -> [UInt8]? {
        var stream = z_stream()
        guard inflateInit_(&stream, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        var input = bytes
        var result: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        let ok = input.withUnsafeMutableBufferPointer { inputBuffer -> Bool in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = UInt32(inputBuffer.count)
            while true {
                let status = chunk.withUnsafeMutableBufferPointer { outputBuffer -> Int32 in
                    stream.next_out = outputBuffer.baseAddress
                    stream.avail_out = UInt32(outputBuffer.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                result += chunk.prefix(chunk.count - Int(stream.avail_out))
                if status == Z_STREAM_END { return true }
                if status != Z_OK { return false }
            }
        }
        return ok ? result : nil
    }
}

/// Digest authentication (RFC 7616, MD5, qop=auth) for `/digest-auth/U/P`.
enum DigestChallenge {
    static let nonce = "af0123456789abcdef"
    static let realm = "af-test"

    static func reply(_ request: ServerRequest, user: String, password: String) -> Reply {
        let challenge = ("WWW-Authenticate", "Digest realm=\"\(realm)\", qop=\"auth\", nonce=\"\(nonce)\", algorithm=MD5")
        guard let header = request.header("Authorization"), header.hasPrefix("Digest ") else {
            return .response(status: 401, headers: [challenge], body: Array("{\"authenticated\": false}".utf8))
        }
        let fields = parse(String(header.dropFirst(7)))
        let ha1 = md5("\(user):\(realm):\(password)")
        let ha2 = md5("\(request.method):\(fields["uri"] ?? "")")
        let expected = md5("\(ha1):\(fields["nonce"] ?? ""):\(fields["nc"] ?? ""):\(fields["cnonce"] ?? ""):\(fields["qop"] ?? ""):\(ha2)")
        guard fields["username"] == user, fields["response"] == expected else {
            return .response(status: 401, headers: [challenge], body: Array("{\"authenticated\": false}".utf8))
        }
        return .json("{\"authenticated\": true, \"user\": \(JSONText.string(user))}")
    }

    static func parse(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        var rest = Substring(text)
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let key = String(rest[..<equals]).trimmingCharacters(in: .whitespaces)
            rest = rest[rest.index(after: equals)...]
            if rest.first == "\"" {
                rest = rest.dropFirst()
                let end = rest.firstIndex(of: "\"") ?? rest.endIndex
                fields[key] = String(rest[..<end])
                rest = end < rest.endIndex ? rest[rest.index(after: end)...] : ""
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                fields[key] = String(rest[..<end]).trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
        }
        return fields
    }

    static func md5(_ text: String) -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { EVP_Digest($0.baseAddress, $0.count, &digest, &length, EVP_md5(), nil) }
        return digest.prefix(Int(length)).map { String(format: "%02x", $0) }.joined()
    }
}
