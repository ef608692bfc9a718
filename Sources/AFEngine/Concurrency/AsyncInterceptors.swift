// The engine's async API. af's own release build leaves it out (Build/link-flags defines
// AF_NO_CONCURRENCY): the command line calls none of it, and without it the binary links
// neither Swift's concurrency runtime nor libdispatch, whose initializer runs at every start.
#if !AF_NO_CONCURRENCY

/// An adapter written as an `async` function: fetch a token, sign a request, read a
/// credential store. It runs in its own task; the request waits for it.
///
/// ```swift
/// let signing = AsyncAdapter { description, _ in
///     var signed = description
///     signed.headers.set(name: "Authorization", value: "Bearer \(try await tokens.current())")
///     return signed
/// }
/// ```
/// A thrown `AFError` fails the attempt with that error; any other error fails it with
/// `AFError.adaptationFailed`, whose reason describes the error.
public struct AsyncAdapter: RequestAdapter {
    private let body: @Sendable (RequestDescription, Request) async throws -> RequestDescription

    /// Adapts with `body`.
    public init(_ body: @escaping @Sendable (RequestDescription, Request) async throws -> RequestDescription) {
        self.body = body
    }

    public func adapt(
        _ description: RequestDescription,
        for request: Request,
        completion: @escaping @Sendable (Result<RequestDescription, AFError>) -> Void
    ) {
        let body = body
        Task {
            do {
                completion(.success(try await body(description, request)))
            } catch let error as AFError {
                completion(.failure(error))
            } catch {
                completion(.failure(.adaptationFailed(reason: String(describing: error))))
            }
        }
    }
}

/// A retrier written as `async` functions: one for failures and, optionally, one for
/// responses that passed validation (a 503 worth another attempt). Each runs in its own task.
///
/// ```swift
/// let breaker = AsyncRetrier { request, error in
///     await circuit.allowsRetry(after: error) ? .retryWithDelay(1) : .doNotRetry
/// }
/// ```
public struct AsyncRetrier: RequestRetrier {
    private let failure: @Sendable (Request, AFError) async -> RetryResult
    private let response: (@Sendable (Request, ResponseHead) async -> RetryResult)?

    /// Decides after failures with `failure` and, when given, after responses with `response`.
    public init(
        _ failure: @escaping @Sendable (Request, AFError) async -> RetryResult,
        afterResponse response: (@Sendable (Request, ResponseHead) async -> RetryResult)? = nil
    ) {
        self.failure = failure
        self.response = response
    }

    public func retry(_ request: Request, dueTo error: AFError, completion: @escaping @Sendable (RetryResult) -> Void) {
        let failure = failure
        Task { completion(await failure(request, error)) }
    }

    public func retry(_ request: Request, after head: ResponseHead, completion: @escaping @Sendable (RetryResult) -> Void) {
        guard let response else { return completion(.doNotRetry) }
        Task { completion(await response(request, head)) }
    }
}

#endif
