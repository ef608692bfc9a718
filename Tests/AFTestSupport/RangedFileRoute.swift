extension TestServer {
    /// `/file/NAME`: `size` pattern bytes (`TestData.bytes`) with Range support and an ETag;
    /// with `drop`, the first request is cut after that many bytes; with `ignoreRange`, every
    /// request gets the whole file; `answer` says how a range is answered.
    public func serveRangedFile(size: Int, drop: Int? = nil, ignoreRange: Bool = false, disposition: String? = nil, answer: RangeAnswer = .honest) {
        let body = TestData.bytes(count: size)
        route("/file/*") { request, hit in
            var start = 0
            if !ignoreRange, let range = request.header("Range"), range.hasPrefix("bytes="),
               let value = Int(range.dropFirst(6).split(separator: "-").first ?? "")
            {
                if value >= body.count {
                    return .response(status: 416, headers: [("Content-Range", "bytes */\(body.count)")])
                }
                start = value
            }
            var end = body.count
            var contentRange = "bytes \(start)-\(body.count - 1)/\(body.count)"
            if start > 0 {
                switch answer {
                case .honest: break
                case .shortBody(let bytes): end = min(body.count, start + bytes)
                case .longBody(let announced): contentRange = "bytes \(start)-\(start + announced - 1)/\(body.count)"
                case .contentRange(let value): contentRange = value
                }
            }
            var head = start > 0 ? "HTTP/1.1 206 Partial Content\r\nContent-Range: \(contentRange)\r\n" : "HTTP/1.1 200 OK\r\n"
            head += "Content-Length: \(end - start)\r\nETag: \"v1\"\r\nContent-Type: application/octet-stream\r\n"
            if let disposition { head += "Content-Disposition: \(disposition)\r\n" }
            head += "\r\n"
            let cut = hit == 1 ? drop : nil
            let offset = start
            let last = end
            let headText = head
            return .custom { connection in
                connection.write(headText)
                if let cut {
                    connection.write(Array(body[offset..<cut]))
                    connection.close()
                } else {
                    connection.write(Array(body[offset..<last]))
                }
            }
        }
    }
}

/// How a ranged file answers a `Range` it honours: correctly, or as broken servers do.
public enum RangeAnswer: Sendable {
    case honest
    /// Only `bytes` of the rest (with a Content-Length to match), under a Content-Range that
    /// announces all of it.
    case shortBody(bytes: Int)
    /// All the rest, under a Content-Range that announces only `announcing` bytes of it.
    case longBody(announcing: Int)
    /// This Content-Range value, with all the rest.
    case contentRange(String)
}
