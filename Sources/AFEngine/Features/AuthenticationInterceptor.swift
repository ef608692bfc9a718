/// Supplies bearer tokens, fetching a new one on demand (a command, a token endpoint).
public protocol TokenProvider: Sendable {
    /// Produces a token; called once at the start and again after a 401.
    func token(completion: @escaping @Sendable (Result<String, AFError>) -> Void)
}

/// Bearer authentication with refresh, like Alamofire's `AuthenticationInterceptor`: the
/// token is fetched before the first request, sent to its origin only, and refreshed once
/// when the server answers 401 — at most `maxRefreshes` times in the session's life, so a
/// broken token source cannot loop.
public final class AuthenticationInterceptor: RequestInterceptor {
    private struct State: Sendable {
        var token: String?
        var refreshes = 0
        /// Attempts already retried after a 401 (one refresh per 401).
        var retriedAttempts: Set<Int> = []
    }

    /// Where tokens come from.
    public let provider: any TokenProvider
    /// Where the token may go: scheme, host and port of the first request.
    public let origin: HTTPURL
    /// Refreshes allowed in the interceptor's life before a 401 is final.
    public let maxRefreshes: Int
    private let state = Protected(State())

    /// Sends tokens from `provider` to `origin` only.
    public init(provider: any TokenProvider, origin: HTTPURL, maxRefreshes: Int = 3) {
        self.provider = provider
        self.origin = origin
        self.maxRefreshes = maxRefreshes
    }

    /// Refreshes done so far.
    public var refreshes: Int { state.read { $0.refreshes } }

    public func adapt(
        _ description: RequestDescription,
        for request: Request,
        completion: @escaping @Sendable (Result<RequestDescription, AFError>) -> Void
    ) {
        guard let url = try? HTTPURL(parsing: description.url), url.sameOrigin(as: origin) else {
            return completion(.success(description))
        }
        if let token = state.read({ $0.token }) {
            return completion(.success(Self.authorized(description, token)))
        }
        provider.token { result in
            switch result {
            case .success(let token):
                self.state.write { $0.token = token }
                completion(.success(Self.authorized(description, token)))
            case .failure(let error):
                completion(.failure(error))
            }
        }
    }

    /// A 401 that passed validation gets the same treatment as one that failed it.
    public func retry(_ request: Request, after response: ResponseHead, completion: @escaping @Sendable (RetryResult) -> Void) {
        guard response.status == 401 else { return completion(.doNotRetry) }
        retry(request, dueTo: .responseValidationFailed(status: 401, reason: response.displayReason), completion: completion)
    }

    public func retry(_ request: Request, dueTo error: AFError, completion: @escaping @Sendable (RetryResult) -> Void) {
        guard case .responseValidationFailed(401, _) = error,
              let url = try? HTTPURL(parsing: request.currentDescription.url), url.sameOrigin(as: origin)
        else {
            return completion(.doNotRetry)
        }
        let attempt = request.attempts.count
        let allowed = state.write { state -> Bool in
            // A 401 right after a refresh means the new token is no better: do not loop.
            guard state.refreshes < maxRefreshes, !state.retriedAttempts.contains(attempt - 1) else { return false }
            state.refreshes += 1
            state.retriedAttempts.insert(attempt)
            state.token = nil
            return true
        }
        guard allowed else { return completion(.doNotRetry) }
        provider.token { result in
            switch result {
            case .success(let token):
                self.state.write { $0.token = token }
                completion(.retryAfterRefresh)
            case .failure(let failure):
                completion(.doNotRetryWithError(failure))
            }
        }
    }

    private static func authorized(_ description: RequestDescription, _ token: String) -> RequestDescription {
        var adapted = description
        adapted.headers.set(name: .authorization, value: "Bearer \(token)")
        return adapted
    }
}
