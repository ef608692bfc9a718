/// What a retrier decided about a failed attempt.
public enum RetryResult: Sendable, Equatable {
    /// Try again now.
    case retry
    /// Try again after this many seconds.
    case retryWithDelay(Double)
    /// Try again now: the retrier renewed what the adapters send (a token), so this is not a
    /// failure tried again. It does not count in `Request.retryCount`, which retry limits
    /// read, but in `Request.refreshCount`.
    case retryAfterRefresh
    /// Do not try again; let the next retrier decide, or fail with the error.
    case doNotRetry
    /// Do not try again, and fail with this error instead.
    case doNotRetryWithError(AFError)

    /// The delay when this is a retry.
    public var delay: Double? {
        switch self {
        case .retry, .retryAfterRefresh: return 0
        case .retryWithDelay(let delay): return delay
        case .doNotRetry, .doNotRetryWithError: return nil
        }
    }
}

/// Rewrites a request description before each attempt (authentication, compression,
/// resume ranges). Adapters may complete on any thread.
public protocol RequestAdapter: Sendable {
    /// Completes with the description to send for `request`, or an error that fails the attempt.
    func adapt(
        _ description: RequestDescription,
        for request: Request,
        completion: @escaping @Sendable (Result<RequestDescription, AFError>) -> Void
    )
}

/// Decides whether the request tries again. Every failure of a request (adapting,
/// building, transport, validation) comes here, and so does every response that passed
/// validation (a 503 the caller accepts may still be worth another attempt); the request
/// never decides itself.
public protocol RequestRetrier: Sendable {
    /// Completes with whether, and after what delay, `request` tries again after `error`.
    func retry(_ request: Request, dueTo error: AFError, completion: @escaping @Sendable (RetryResult) -> Void)
    /// Completes with whether `request` tries again after `response`, which passed
    /// validation (or had none). The default never retries.
    func retry(_ request: Request, after response: ResponseHead, completion: @escaping @Sendable (RetryResult) -> Void)
}

extension RequestRetrier {
    public func retry(_ request: Request, after response: ResponseHead, completion: @escaping @Sendable (RetryResult) -> Void) {
        completion(.doNotRetry)
    }
}

/// Both an adapter and a retrier.
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    public func adapt(
        _ description: RequestDescription,
        for request: Request,
        completion: @escaping @Sendable (Result<RequestDescription, AFError>) -> Void
    ) {
        completion(.success(description))
    }

    public func retry(_ request: Request, dueTo error: AFError, completion: @escaping @Sendable (RetryResult) -> Void) {
        completion(.doNotRetry)
    }
}

/// Chains adapters in order and asks retriers in order; the first retrier that answers
/// anything but `doNotRetry` wins.
public struct Interceptor: RequestInterceptor {
    /// Adapters, applied in order.
    public let adapters: [any RequestAdapter]
    /// Retriers, asked in order.
    public let retriers: [any RequestRetrier]

    /// Combines adapters and retriers.
    public init(adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = []) {
        self.adapters = adapters
        self.retriers = retriers
    }

    public func adapt(
        _ description: RequestDescription,
        for request: Request,
        completion: @escaping @Sendable (Result<RequestDescription, AFError>) -> Void
    ) {
        Self.adapt(description, for: request, using: adapters[...], completion: completion)
    }

    private static func adapt(
        _ description: RequestDescription,
        for request: Request,
        using pending: ArraySlice<any RequestAdapter>,
        completion: @escaping @Sendable (Result<RequestDescription, AFError>) -> Void
    ) {
        guard let adapter = pending.first else { return completion(.success(description)) }
        let rest = pending.dropFirst()
        adapter.adapt(description, for: request) { result in
            switch result {
            case .success(let adapted): adapt(adapted, for: request, using: rest, completion: completion)
            case .failure: completion(result)
            }
        }
    }

    public func retry(_ request: Request, dueTo error: AFError, completion: @escaping @Sendable (RetryResult) -> Void) {
        Self.firstAnswer(from: retriers[...], ask: { retrier, done in retrier.retry(request, dueTo: error, completion: done) }, completion: completion)
    }

    public func retry(_ request: Request, after response: ResponseHead, completion: @escaping @Sendable (RetryResult) -> Void) {
        Self.firstAnswer(from: retriers[...], ask: { retrier, done in retrier.retry(request, after: response, completion: done) }, completion: completion)
    }

    /// Asks the retriers in order; the first answer other than `doNotRetry` wins.
    private static func firstAnswer(
        from pending: ArraySlice<any RequestRetrier>,
        ask: @escaping @Sendable (any RequestRetrier, @escaping @Sendable (RetryResult) -> Void) -> Void,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        guard let retrier = pending.first else { return completion(.doNotRetry) }
        let rest = pending.dropFirst()
        ask(retrier) { result in
            if case .doNotRetry = result {
                firstAnswer(from: rest, ask: ask, completion: completion)
            } else {
                completion(result)
            }
        }
    }
}

/// An adapter made of a synchronous closure.
public struct Adapter: RequestAdapter {
    private let body: @Sendable (RequestDescription, Request) throws(AFError) -> RequestDescription

    /// Adapts with `body`; a thrown error fails the attempt.
    public init(_ body: @escaping @Sendable (RequestDescription, Request) throws(AFError) -> RequestDescription) {
        self.body = body
    }

    public func adapt(
        _ description: RequestDescription,
        for request: Request,
        completion: @escaping @Sendable (Result<RequestDescription, AFError>) -> Void
    ) {
        do {
            completion(.success(try body(description, request)))
        } catch {
            completion(.failure(error))
        }
    }
}
