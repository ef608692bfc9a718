/// Retries failed attempts with exponential backoff, like curl's retry option and Alamofire's
/// `RetryPolicy`.
///
/// The delay before retry *k* (1-based) is `delayScale × backoffBase^(k-1)`, capped by
/// `maxDelay`; with `jitter` it is drawn uniformly from zero to that value. A `Retry-After`
/// header on 429 and 503 sets the delay instead (still capped). When the next attempt could
/// not start before `maxTime` has passed since the request began, retrying stops at once.
public struct RetryPolicy: RequestRetrier {
    /// Statuses retried by default.
    public static let defaultRetryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]
    /// Transport failures worth another try.
    public static let retryableFailures: Set<TransportFailure.Kind> = [
        .dnsFailure, .connectionRefused, .connectionReset, .connectTimeout, .timeout, .truncatedBody,
    ]

    /// Retries allowed after the first attempt.
    public var retryLimit: Int
    /// Seconds before the first retry.
    public var delayScale: Double
    /// Factor applied to the delay for each further retry.
    public var backoffBase: Double
    /// Upper bound on any one delay, in seconds.
    public var maxDelay: Double
    /// Randomise delays between zero and the computed value.
    public var jitter: Bool
    /// Seconds after which no retry starts.
    public var maxTime: Double?
    /// Statuses that are retried.
    public var retryableStatuses: Set<Int>
    /// Methods that may be retried; nil for every method.
    public var retryableMethods: Set<HTTPMethod>?

    /// A policy retrying idempotent methods up to `retryLimit` times.
    public init(
        retryLimit: Int,
        delayScale: Double = 0.5,
        backoffBase: Double = 2,
        maxDelay: Double = 30,
        jitter: Bool = false,
        maxTime: Double? = nil,
        retryableStatuses: Set<Int> = RetryPolicy.defaultRetryableStatuses,
        retryableMethods: Set<HTTPMethod>? = HTTPMethod.idempotent
    ) {
        self.retryLimit = retryLimit
        self.delayScale = delayScale
        self.backoffBase = backoffBase
        self.maxDelay = maxDelay
        self.jitter = jitter
        self.maxTime = maxTime
        self.retryableStatuses = retryableStatuses
        self.retryableMethods = retryableMethods
    }

    public func retry(_ request: Request, dueTo error: AFError, completion: @escaping @Sendable (RetryResult) -> Void) {
        completion(decide(
            retryCount: request.retryCount,
            method: request.currentDescription.method,
            replayable: request.currentDescription.body.isReplayable,
            error: error,
            lastResponse: request.lastResponseHead,
            elapsed: request.elapsed
        ))
    }

    /// A response that passed validation is retried when its status is retryable, with the
    /// same limits, backoff and `Retry-After` as a failed one.
    public func retry(_ request: Request, after response: ResponseHead, completion: @escaping @Sendable (RetryResult) -> Void) {
        guard retryableStatuses.contains(response.status) else { return completion(.doNotRetry) }
        retry(request, dueTo: .responseValidationFailed(status: response.status, reason: response.displayReason), completion: completion)
    }

    /// The decision, as a pure function of what the request knows.
    public func decide(
        retryCount: Int,
        method: HTTPMethod,
        replayable: Bool,
        error: AFError,
        lastResponse: ResponseHead?,
        elapsed: Double
    ) -> RetryResult {
        guard retryCount < retryLimit, replayable, isRetryable(error) else { return .doNotRetry }
        if let retryableMethods, !retryableMethods.contains(method) { return .doNotRetry }
        var delay = delay(forRetry: retryCount + 1)
        if case .responseValidationFailed(let status, _) = error, status == 429 || status == 503,
           let value = lastResponse?.headers.value(for: .retryAfter), let seconds = Self.retryAfterSeconds(value)
        {
            delay = min(seconds, maxDelay)
        }
        if let maxTime, elapsed + delay >= maxTime { return .doNotRetry }
        return .retryWithDelay(delay)
    }

    /// Whether a failure of this kind is worth another attempt.
    public func isRetryable(_ error: AFError) -> Bool {
        switch error {
        case .responseValidationFailed(let status, _): return retryableStatuses.contains(status)
        case .transport(let failure):
            // No socket to be had: nothing was sent, and the transfers holding descriptors
            // usually free them within the delay.
            if case .outOfDescriptors? = failure.cause { return true }
            return Self.retryableFailures.contains(failure.kind)
        default: return false
        }
    }

    /// The backoff delay before retry `k` (1-based), before `Retry-After`.
    public func delay(forRetry k: Int) -> Double {
        var value = delayScale
        for _ in 1..<max(k, 1) { value *= backoffBase }
        value = min(value, maxDelay)
        if jitter { value = Double.random(in: 0...max(value, 0)) }
        return value
    }

    /// Seconds from a `Retry-After` value: delta-seconds or an HTTP date. Digits past what
    /// an `Int` holds are a very long wait (capped by the caller like any other), not a
    /// value to ignore: ignored, the server's "not for a long while" became the next retry
    /// at the default delay.
    public static func retryAfterSeconds(_ value: String) -> Double? {
        let trimmed = value.trimmingCharacters(in: " \t")
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return Double(Int(trimmed) ?? Int.max)
        }
        if let seconds = Int(trimmed), seconds >= 0 { return Double(seconds) }
        guard let date = HTTPDate.parse(trimmed) else { return nil }
        return Double(max(0, date - HTTPDate.now()))
    }
}
