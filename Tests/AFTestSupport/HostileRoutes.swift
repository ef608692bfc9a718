import Foundation

/// Replies a hostile or broken server gives, under `/hostile/NAME`:
///
/// | name | reply |
/// |---|---|
/// | `short-gzip` | gzip body cut in half, no Content-Length, connection closed |
/// | `short-gzip-length` | gzip body cut in half, Content-Length of the whole |
/// | `gzip-garbage` | a whole gzip body followed by garbage bytes |
/// | `short-deflate` | zlib deflate cut in half, in chunks that end properly |
/// | `short-raw-deflate` | raw deflate cut in half, with a Content-Length of what is sent |
/// | `raw-deflate` | a whole JSON body in raw deflate (no zlib wrapper) |
/// | `gzip-twice` | a JSON body gzipped twice, with a `Content-Encoding: gzip` header for each |
/// | `deflate-garbage` | a whole deflate body followed by garbage bytes |
/// | `long-header` | one header line of 1 MB |
/// | `huge-head` | 2,000 headers of 200 bytes (400 kB of head) |
/// | `empty-location` | 302 with an empty Location |
/// | `status-101`, `status-999` | that status with a small body |
/// | `deep-json?n=N` | N nested arrays, balanced |
/// | `bad-status` | an invalid status line |
/// | `two-lengths` | two different Content-Length headers |
/// | `huge-length` | a Content-Length past 2^63, two bytes of body, connection closed |
/// | `hex-length` | `Content-Length: 0x2` (libcurl reads 0) and two bytes of body |
/// | `negative-length` | `Content-Length: -5` (libcurl refuses it before af reads it) |
/// | `ftp-redirect`, `file-redirect` | redirects to ftp:// and file:// |
/// | `short-416?size=N` | 416 with Content-Range bytes */N |
/// | `invalid-utf8-json` | JSON with invalid UTF-8 in a string |
/// | `bad-gzip`, `bad-br`, `bad-zstd` | a body that is not what its Content-Encoding says |
/// | `continue-storm?n=N` | N interim `100 Continue` heads, then 200 |
/// | `not-an-encoding?coding=C` | a JSON body, not encoded, labelled `Content-Encoding: C` |
/// | `early-hints` | `103 Early Hints` with a `Link`, then 200 with a JSON body |
/// | `trickle` | 100 promised bytes, one every 0.5 s |
/// | `lying-charset` | Latin-1 bytes labelled UTF-16 |
/// | `two-members` | a gzip body of two members (valid: RFC 1952) |
/// | `header-flood` | 100,000 header lines |
/// | `trailer-flood` | a chunked body, then up to 1,000,000 trailer lines |
/// | `trailers` | a chunked JSON body, then two trailer fields |
/// | `long-trailer` | a chunked body, then one trailer field of 5,000 bytes |
/// | `status-in-trailers` | a chunked body, then a status line and a field as trailers |
/// | `long-number?mb=N` | a JSON body that is one number of N MB |
/// | `controls?mb=N&type=T` | N MB of control characters (ESC, BEL, C1 CSI) as `text/plain` or type T |
/// | `loop` | a redirect to itself |
/// | `h2-early-hints` | HTTP/2 with prior knowledge: `103` with a `link`, then `200` |
/// | `h2-trailers` | HTTP/2 with prior knowledge: `200`, a body, then a trailer `x-checksum` |
/// | `h2-goaway-after-7` | HTTP/2 (a TLS server offering h2, routed like the above): answers 7 streams of a connection; at the eighth, `GOAWAY` naming the seventh, and no answer to it or any later one, then it closes (as nginx does after its requests per connection) |
/// | `h2-short-gzip` | HTTP/2 with prior knowledge (routed like the next): a gzip body cut in half, in a stream that ends properly |
/// | `h2-reset-mid-body` | HTTP/2 with prior knowledge (routed like the next): `200`, part of a body, then `RST_STREAM` with INTERNAL_ERROR |
/// | `h2-refuse-stream` | HTTP/2 with prior knowledge (routed like the next): `SETTINGS`, then `RST_STREAM` with REFUSED_STREAM for the first stream, on every connection |
/// | `h2-continuation-flood` | HTTP/2 with prior knowledge (a client's `PRI *` preface, which a test routes here with a catch-all route): a HEADERS frame, then CONTINUATION frames without end |
public enum HostileRoutes {
    /// An HTTP/2 frame: 3-byte length, type, flags, 4-byte stream id (up to 255 here), payload.
    static func h2Frame(_ type: UInt8, flags: UInt8, stream: Int, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(payload.count >> 16), UInt8((payload.count >> 8) & 0xFF), UInt8(payload.count & 0xFF), type, flags,
         UInt8((stream >> 24) & 0x7F), UInt8((stream >> 16) & 0xFF), UInt8((stream >> 8) & 0xFF), UInt8(stream & 0xFF)] + payload
    }

    public static func reply(_ name: String, _ request: ServerRequest) -> Reply {
        let json = Array(BuiltinRoutes.sampleJSON.utf8)
        switch name {
        case "short-gzip":
            let body = Deflate.compress(json, gzip: true)
            return .raw(Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nConnection: close\r\n\r\n".utf8) + body.prefix(body.count / 2), close: true)
        case "short-gzip-length":
            let body = Deflate.compress(json, gzip: true)
            return .raw(Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body.prefix(body.count / 2), close: true)
        case "short-deflate":
            let body = Deflate.compress(json, gzip: false)
            let cut = body.prefix(body.count / 2)
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: deflate\r\nTransfer-Encoding: chunked\r\n\r\n\(String(cut.count, radix: 16))\r\n"
            return .raw(Array(head.utf8) + cut + Array("\r\n0\r\n\r\n".utf8), close: true)
        case "short-raw-deflate":
            let body = Deflate.compress(json, gzip: false, raw: true)
            let cut = body.prefix(body.count / 2)
            return .response(status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", "deflate")], body: Array(cut))
        case "raw-deflate":
            return .response(status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", "deflate")], body: Deflate.compress(json, gzip: false, raw: true))
        case "gzip-twice":
            return .response(status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip"), ("Content-Encoding", "gzip")],
                             body: Deflate.compress(Deflate.compress(json, gzip: true), gzip: true))
        case "deflate-garbage":
            let body = Deflate.compress(json, gzip: false) + Array("GARBAGE-AFTER-THE-STREAM".utf8)
            return .response(status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", "deflate")], body: body)
        case "gzip-garbage":
            let body = Deflate.compress(json, gzip: true) + Array("GARBAGE-AFTER-THE-STREAM".utf8)
            return .response(status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")], body: body)
        case "long-header":
            return .response(status: 200, headers: [("X-Long", String(repeating: "a", count: 1 << 20))], body: Array("ok\n".utf8))
        case "huge-head":
            return .response(status: 200, headers: (0..<2000).map { ("X-Filler-\($0)", String(repeating: "b", count: 200)) }, body: Array("ok\n".utf8))
        case "empty-location":
            return .raw(Array("HTTP/1.1 302 Found\r\nLocation: \r\nContent-Length: 0\r\n\r\n".utf8), close: true)
        case "status-101":
            return .raw(Array("HTTP/1.1 101 Switching Protocols\r\nContent-Length: 2\r\n\r\nhi".utf8), close: true)
        case "status-999":
            return .raw(Array("HTTP/1.1 999 Odd\r\nContent-Length: 2\r\n\r\nhi".utf8), close: true)
        case "deep-json":
            let depth = Int(request.queryValue("n") ?? "10000") ?? 10000
            let open = request.queryValue("kind") == "object" ? "{\"a\":" : "["
            let close = request.queryValue("kind") == "object" ? "}" : "]"
            var body = [UInt8]()
            body.reserveCapacity(depth * (open.utf8.count + 1) + 1)
            for _ in 0..<depth { body += Array(open.utf8) }
            if request.queryValue("kind") == "object" { body += Array("1".utf8) }
            if request.queryValue("balanced") != "no" { for _ in 0..<depth { body += Array(close.utf8) } }
            return .response(status: 200, headers: [("Content-Type", "application/json")], body: body)
        case "bad-status":
            return .raw(Array("HTTP/1.1 twohundred OK\r\nContent-Length: 2\r\n\r\nhi".utf8), close: true)
        case "two-lengths":
            return .raw(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\nhello".utf8), close: true)
        case "hex-length":
            return .raw(Array("HTTP/1.1 200 OK\r\nContent-Length: 0x2\r\n\r\nok".utf8), close: true)
        case "negative-length":
            return .raw(Array("HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\nhello".utf8), close: true)
        case "huge-length":
            return .raw(Array("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\nok".utf8), close: true)
        case "ftp-redirect":
            return .response(status: 302, headers: [("Location", "ftp://127.0.0.1/x")])
        case "file-redirect":
            return .response(status: 302, headers: [("Location", "file:///etc/passwd")])
        case "short-416":
            return .response(status: 416, headers: [("Content-Range", "bytes */\(request.queryValue("size") ?? "16384")")])
        case "invalid-utf8-json":
            return .response(status: 200, headers: [("Content-Type", "application/json")], body: Array("{\"a\": \"".utf8) + [0xC3, 0x28, 0xFF] + Array("\"}".utf8))
        case "bad-gzip", "bad-br", "bad-zstd":
            let encoding = String(name.dropFirst(4))
            return .response(status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", encoding)],
                             body: Array("this is not \(encoding) data at all, just text that claims to be".utf8))
        case "continue-storm":
            let count = Int(request.queryValue("n") ?? "1000") ?? 1000
            let interim = String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: count)
            return .raw(Array((interim + "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n").utf8), close: true)
        case "not-an-encoding":
            return .response(status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", request.queryValue("coding") ?? "utf-8")], body: Array("{\"a\":1}".utf8))
        case "trailers":
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum, Server-Timing\r\n\r\n"
            return .raw(Array((head + "8\r\n{\"a\": 1}\r\n0\r\nX-Checksum: abc\r\nServer-Timing: db;dur=53\r\n\r\n").utf8), close: true)
        case "long-trailer":
            let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            return .raw(Array((head + "3\r\nok\n\r\n0\r\nX-Long: " + String(repeating: "v", count: 5_000) + "\r\n\r\n").utf8), close: true)
        case "status-in-trailers":
            return .raw(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nok\n\r\n0\r\nHTTP/1.1 200 OK\r\nX-Fake: 1\r\n\r\n".utf8), close: true)
        case "early-hints":
            let hints = "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload; as=style\r\n\r\n"
            return .raw(Array((hints + "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{\"a\": 1}").utf8), close: true)
        case "trickle":
            return .custom { connection in
                guard connection.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nContent-Type: text/plain\r\n\r\n") else { return }
                for _ in 0..<100 {
                    Thread.sleep(forTimeInterval: 0.5)
                    guard connection.write("x") else { return }
                }
            }
        case "two-members":
            let body = Deflate.compress(Array("{\"part\": ".utf8), gzip: true) + Deflate.compress(Array("1}".utf8), gzip: true)
            return .response(status: 200, headers: [("Content-Type", "application/json"), ("Content-Encoding", "gzip")], body: body)
        case "header-flood":
            return .custom { connection in
                guard connection.write("HTTP/1.1 200 OK\r\n") else { return }
                var block = ""
                for index in 0..<100_000 {
                    block += "X-\(index): v\r\n"
                    if block.utf8.count > 60_000 {
                        guard connection.write(block) else { return }
                        block = ""
                    }
                }
                connection.write(block + "Content-Length: 3\r\n\r\nok\n")
            }
        case "controls":
            let size = (request.queryValue("mb").flatMap(Int.init) ?? 1) << 20
            let type = request.queryValue("type") ?? "text/plain; charset=utf-8"
            // ESC, BEL and U+009B (CSI in C1): every byte or pair one a terminal would obey.
            let pattern: [UInt8] = [0x1B, 0x07, 0xC2, 0x9B]
            let body = (0..<size).map { pattern[$0 % 4] }
            return .response(status: 200, headers: [("Content-Type", type)], body: body)
        case "long-number":
            let size = (request.queryValue("mb").flatMap(Int.init) ?? 1) << 20
            return .custom { connection in
                guard connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(size)\r\n\r\n1") else { return }
                let block = String(repeating: "0", count: 1 << 16)
                var left = size - 1
                while left > 0 {
                    guard connection.write(String(block.prefix(left))) else { return }
                    left -= min(left, block.utf8.count)
                }
            }
        case "trailer-flood":
            return .custom { connection in
                guard connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nok\n\r\n0\r\n") else { return }
                let block = String(repeating: "X-T: v\r\n", count: 8_000)
                for _ in 0..<125 {
                    guard connection.write(block) else { return }
                }
                connection.write("\r\n")
            }
        case "h2-continuation-flood":
            return .custom { connection in
                // An empty SETTINGS, then stream 1's HEADERS (0x88: ":status: 200" from the
                // static table) without END_HEADERS, then CONTINUATION frames of literal headers.
                guard connection.write(h2Frame(4, flags: 0, stream: 0, []) + h2Frame(1, flags: 0, stream: 1, [0x88])) else { return }
                var block: [UInt8] = []
                for index in 0..<100 {
                    let name = Array("x-\(index)".utf8)
                    block += [0x00, UInt8(name.count)] + name + [0x01, UInt8(ascii: "v")]
                }
                for _ in 0..<100_000 {
                    guard connection.write(h2Frame(9, flags: 0, stream: 1, block)) else { return }
                }
            }
        case "h2-early-hints":
            return .custom { connection in
                // SETTINGS; a HEADERS frame of ":status: 103" (a literal with the static
                // table's name 8) and a literal link header; then ":status: 200" (0x88) and a
                // DATA frame that ends the stream.
                let link = Array("link".utf8), value = Array("</style.css>; rel=preload".utf8)
                let hints: [UInt8] = [0x08, 3] + Array("103".utf8) + [0x00, UInt8(link.count)] + link + [UInt8(value.count)] + value
                _ = connection.write(h2Frame(4, flags: 0, stream: 0, []) + h2Frame(1, flags: 4, stream: 1, hints)
                                     + h2Frame(1, flags: 4, stream: 1, [0x88]) + h2Frame(0, flags: 1, stream: 1, Array("ok\n".utf8)))
                Thread.sleep(forTimeInterval: 0.3)
            }
        case "h2-goaway-after-7":
            return .custom { connection in
                // The rest of the client's preface, then its frames: SETTINGS are acknowledged,
                // each request (a HEADERS frame, ended by END_HEADERS here or in a
                // CONTINUATION) is answered with 200 and a body naming its stream.
                guard connection.read(exactly: 6) != nil else { return }
                _ = connection.write(h2Frame(4, flags: 0, stream: 0, []))
                var answered: [Int] = []
                var deadline = Date.distantFuture
                while Date() < deadline, let head = connection.read(exactly: 9) {
                    let length = Int(head[0]) << 16 | Int(head[1]) << 8 | Int(head[2])
                    let (kind, flags) = (head[3], head[4])
                    let stream = (Int(head[5] & 0x7F) << 24) | Int(head[6]) << 16 | Int(head[7]) << 8 | Int(head[8])
                    guard connection.read(exactly: length) != nil else { return }
                    if kind == 4, flags & 1 == 0 { _ = connection.write(h2Frame(4, flags: 1, stream: 0, [])) }
                    guard kind == 1 || kind == 9, flags & 4 != 0, deadline == .distantFuture else { continue }
                    if answered.count < 7 {
                        answered.append(stream)
                        let body = Array("stream \(stream)\n".utf8), size = Array("\(body.count)".utf8)
                        let fields: [UInt8] = [0x88, 0x00, 14] + Array("content-length".utf8) + [UInt8(size.count)] + size
                        _ = connection.write(h2Frame(1, flags: 4, stream: stream, fields) + h2Frame(0, flags: 1, stream: stream, body))
                    } else {
                        // The eighth request: GOAWAY naming the last stream taken (NO_ERROR);
                        // this one and any after it are left unanswered.
                        let last = answered.last ?? 0
                        _ = connection.write(h2Frame(7, flags: 0, stream: 0, [UInt8((last >> 24) & 0x7F), UInt8((last >> 16) & 0xFF), UInt8((last >> 8) & 0xFF), UInt8(last & 0xFF), 0, 0, 0, 0]))
                        deadline = Date().addingTimeInterval(0.3)
                    }
                }
                connection.close()
            }
        case "h2-trailers":
            return .custom { connection in
                // SETTINGS; HEADERS (END_HEADERS) of ":status: 200"; a DATA frame; then a
                // HEADERS frame that ends the stream with a literal x-checksum field.
                let name = Array("x-checksum".utf8), value = Array("abc".utf8)
                let trailer: [UInt8] = [0x00, UInt8(name.count)] + name + [UInt8(value.count)] + value
                _ = connection.write(h2Frame(4, flags: 0, stream: 0, []) + h2Frame(1, flags: 4, stream: 1, [0x88])
                                     + h2Frame(0, flags: 0, stream: 1, Array("ok\n".utf8)) + h2Frame(1, flags: 5, stream: 1, trailer))
                Thread.sleep(forTimeInterval: 0.3)
            }
        case "h2-short-gzip":
            return .custom { connection in
                // SETTINGS; HEADERS (END_HEADERS) of ":status: 200" and a literal
                // content-encoding: gzip; then half the gzip data in a DATA frame that ends the
                // stream, as a compressing proxy that failed would send it.
                let coding = Array("content-encoding".utf8), gzip = Array("gzip".utf8)
                let head: [UInt8] = [0x88, 0x00, UInt8(coding.count)] + coding + [UInt8(gzip.count)] + gzip
                let body = Deflate.compress(json, gzip: true)
                _ = connection.write(h2Frame(4, flags: 0, stream: 0, []) + h2Frame(1, flags: 4, stream: 1, head)
                                     + h2Frame(0, flags: 1, stream: 1, Array(body.prefix(body.count / 2))))
                Thread.sleep(forTimeInterval: 0.3)
            }
        case "h2-reset-mid-body":
            return .custom { connection in
                // SETTINGS; HEADERS (END_HEADERS) of ":status: 200"; a DATA frame that does not
                // end the stream; then RST_STREAM with INTERNAL_ERROR (2), as a server that
                // fails while it sends the body does.
                _ = connection.write(h2Frame(4, flags: 0, stream: 0, []) + h2Frame(1, flags: 4, stream: 1, [0x88])
                                     + h2Frame(0, flags: 0, stream: 1, Array("partial body\n".utf8)))
                Thread.sleep(forTimeInterval: 0.1)
                _ = connection.write(h2Frame(3, flags: 0, stream: 1, [0, 0, 0, 2]))
                Thread.sleep(forTimeInterval: 0.3)
            }
        case "h2-refuse-stream":
            return .custom { connection in
                // SETTINGS, then RST_STREAM with REFUSED_STREAM (7) for the client's first
                // stream, as a server that takes no new streams does.
                _ = connection.write(h2Frame(4, flags: 0, stream: 0, []) + h2Frame(3, flags: 0, stream: 1, [0, 0, 0, 7]))
                Thread.sleep(forTimeInterval: 0.2)
            }
        case "loop":
            return .response(status: 302, headers: [("Location", "/hostile/loop")])
        case "lying-charset":
            return .response(status: 200, headers: [("Content-Type", "text/plain; charset=utf-16")], body: [0x63, 0x61, 0x66, 0xE9, 0x0A])
        default:
            return .json("{\"error\": \"no such hostile route\"}", status: 404)
        }
    }
}
