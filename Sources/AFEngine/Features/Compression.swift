/// Compresses request bodies with zlib deflate and sends `Content-Encoding: deflate` — only
/// when that makes the body smaller, unless `always`. The compressed form is made once and
/// reused by every attempt.
public final class DeflateCompressor: RequestAdapter {
    private struct Cached: Sendable {
        var source: String
        var body: RequestBody
        var compressed: Bool
    }

    private struct State: Sendable {
        var cached: Cached?
        var temporaryFiles: [String] = []
    }

    /// Compress even bodies that do not get smaller.
    public let always: Bool
    /// Where compressed copies of file bodies are written.
    public let temporaryDirectory: String
    private let state = Protected(State())

    /// A compressor writing temporary files under `temporaryDirectory`.
    public init(always: Bool, temporaryDirectory: String) {
        self.always = always
        self.temporaryDirectory = temporaryDirectory
    }

    /// Temporary files made so far; the caller removes them when the run ends.
    public var temporaryFiles: [String] { state.read { $0.temporaryFiles } }

    public func adapt(
        _ description: RequestDescription,
        for request: Request,
        completion: @escaping @Sendable (Result<RequestDescription, AFError>) -> Void
    ) {
        completion(Result { () throws(AFError) -> RequestDescription in try compress(description) })
    }

    /// The description with a compressed body, or unchanged when compression does not pay.
    public func compress(_ description: RequestDescription) throws(AFError) -> RequestDescription {
        guard !description.body.isEmpty, !description.headers.contains(.contentEncoding) else { return description }
        let source = Self.identity(of: description.body)
        var cached = state.read { $0.cached }
        if cached?.source != source {
            let originalSize = try description.body.contentLength()
            let (body, size, file) = try Deflate.compress(description.body, temporaryDirectory: temporaryDirectory)
            let pays = always || originalSize.map { size < $0 } ?? true
            cached = Cached(source: source, body: pays ? body : description.body, compressed: pays)
            state.write { state in
                state.cached = cached
                if let file { state.temporaryFiles.append(file) }
            }
        }
        guard let cached, cached.compressed else { return description }
        var adapted = description
        adapted.body = cached.body
        adapted.headers.add(name: .contentEncoding, value: "deflate")
        return adapted
    }

    private static func identity(of body: RequestBody) -> String {
        switch body {
        case .empty: return "empty"
        case .bytes(let bytes): return "bytes:\(bytes.count):\(bytes.hashValue)"
        case .file(let path): return "file:\(path)"
        case .multipart(let form): return "multipart:\(form.boundary)"
        case .stream(let fd): return "stream:\(fd)"
        }
    }
}
