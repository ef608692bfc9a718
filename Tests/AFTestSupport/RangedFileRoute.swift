extension TestServer {
    /// `/file/NAME`: `size` pattern bytes (`TestData.bytes`) with Range support and an ETag;
    /// with `drop`, the first request is cut after that many bytes; with `ignoreRange`, every
    /// request gets the whole file.
    public func serveRangedFile(size: Int, drop: Int? = nil, ignoreRange: Bool = false, disposition: String? = nil) {
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
            var head = start > 0 ? "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes \(start)-\(body.count - 1)/\(body.count)\r\n" : "HTTP/1.1 200 OK\r\n"
            head += "Content-Length: \(body.count - start)\r\nETag: \"v1\"\r\nContent-Type: application/octet-stream\r\n"
            if let disposition { head += "Content-Disposition: \(disposition)\r\n" }
            head += "\r\n"
            let cut = hit == 1 ? drop : nil
            let offset = start
            let headText = head
            return .custom { connection in
                connection.write(headText)
                if let cut {
                    connection.write(Array(body[offset..<cut]))
                    connection.close()
                } else {
                    connection.write(Array(body[offset...]))
                }
            }
        }
    }
}
