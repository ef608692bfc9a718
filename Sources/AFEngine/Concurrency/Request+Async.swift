// The engine's async API. af's own release build leaves it out (Build/link-flags defines
// AF_NO_CONCURRENCY): the command line calls none of it, and without it the binary links
// neither Swift's concurrency runtime nor libdispatch, whose initializer runs at every start.
#if !AF_NO_CONCURRENCY

/// A response with its body held in memory: what `Request.serializingData()` returns.
public struct DataResponse: Sendable {
    /// The outcome: final head, every attempt with its metrics, redirects.
    public let response: Response
    /// The body of the final response.
    public let body: [UInt8]

    /// The final status code.
    public var status: Int? { response.status }
    /// The final response's headers.
    public var headers: HTTPHeaders { response.head?.headers ?? HTTPHeaders() }
    /// Every attempt's metrics, retries and redirect hops included.
    public var metrics: [TransferMetrics] { response.attempts.compactMap(\.metrics) }

    /// The body as JSON, each number and string kept exactly as sent.
    public func json() throws(JSONSyntaxError) -> JSONValue {
        try JSONValue.parse(body)
    }

#if !AF_NO_CODABLE
    /// The body decoded as `type` (`JSONValue.decode`): `JSONSyntaxError` when it is no
    /// JSON, `DecodingError` when it does not fit.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try json().decode(type)
    }
#endif
}

extension Request {
    /// Starts the request (if needed) and waits for its outcome without blocking a thread.
    /// Cancelling the waiting task cancels the request.
    public func serializingResponse() async -> Response {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Response, Never>) in
                onCompletion { response in continuation.resume(returning: response) }
                resume()
            }
        } onCancel: {
            cancel(.explicitly)
        }
    }

    /// Starts the request and returns status, headers, body and metrics; throws what ended
    /// the request unsuccessfully (a validation failure included). The request must have
    /// been made with a `MemorySink` (the default) for the body to be kept.
    public func serializingData() async throws(AFError) -> DataResponse {
        let response = await serializingResponse()
        if let error = response.error { throw error }
        return DataResponse(response: response, body: (sink as? MemorySink)?.bytes ?? [])
    }

#if !AF_NO_CODABLE
    /// Starts the request and decodes its body as `type`: throws the `AFError` that ended
    /// the request, `JSONSyntaxError` for a body that is no JSON, or `DecodingError` for one
    /// that does not fit `type`.
    public func serializingDecodable<T: Decodable>(_ type: T.Type = T.self) async throws -> T {
        try await serializingData().decode(type)
    }
#endif
}

#endif
