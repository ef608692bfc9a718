#if canImport(Glibc)
import Glibc
#endif

/// `/answer/N`, the route the batch tests give their lines: each line's output names it.
extension TestServer {
    /// Answers `/answer/N?delay=S&size=B` with "answer N\n" after S seconds, padded with dots
    /// to B bytes.
    public func routeAnswers() {
        route("/answer/*") { request, _ in
            if let delay = request.queryValue("delay").flatMap(Double.init) { usleep(UInt32(delay * 1_000_000)) }
            let number = request.path.split(separator: "/").last.map(String.init) ?? "?"
            return .response(status: 200, headers: [("Content-Type", "text/plain")], body: Self.answer(number, size: request.queryValue("size").flatMap(Int.init)))
        }
    }

    /// The body of `/answer/N`: "answer N\n", or that many bytes with dots before the newline.
    public static func answer(_ number: String, size: Int?) -> [UInt8] {
        let text = Array("answer \(number)".utf8)
        guard let size, size > text.count + 1 else { return text + [0x0A] }
        return text + [UInt8](repeating: UInt8(ascii: "."), count: size - text.count - 1) + [0x0A]
    }
}
