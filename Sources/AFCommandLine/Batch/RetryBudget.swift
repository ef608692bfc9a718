@_spi(Locking) import AFEngine

/// The retries a whole `af batch` run may make: `percent` of the requests started so far,
/// plus a floor of 10, so that a failing server is not hit requests × retries times.
final class RetryBudget: Sendable {
    private struct State: Sendable {
        var started = 0
        var spent = 0
        var refused = 0
    }

    /// Retries always allowed, whatever the number of requests.
    static let floor = 10
    let percent: Int
    private let state = Protected(State())

    init(percent: Int) {
        self.percent = percent
    }

    /// Counts a request the batch started.
    func noteStarted() {
        state.write { $0.started += 1 }
    }

    /// Takes one retry from the budget; false (and counted) when it is spent.
    func take() -> Bool {
        state.write { state -> Bool in
            let allowed = Self.floor + state.started * percent / 100
            guard state.spent < allowed else {
                state.refused += 1
                return false
            }
            state.spent += 1
            return true
        }
    }

    /// Retries made, and retries refused because the budget was spent.
    var usage: (spent: Int, refused: Int) {
        state.read { ($0.spent, $0.refused) }
    }
}

/// A retrier that retries only while the batch's budget allows it.
struct BudgetedRetrier: RequestRetrier {
    let policy: any RequestRetrier
    let budget: RetryBudget

    init(_ policy: any RequestRetrier, budget: RetryBudget) {
        self.policy = policy
        self.budget = budget
    }

    func retry(_ request: Request, dueTo error: AFError, completion: @escaping @Sendable (RetryResult) -> Void) {
        let budget = budget
        policy.retry(request, dueTo: error) { result in completion(Self.charge(result, to: budget)) }
    }

    func retry(_ request: Request, after response: ResponseHead, completion: @escaping @Sendable (RetryResult) -> Void) {
        let budget = budget
        policy.retry(request, after: response) { result in completion(Self.charge(result, to: budget)) }
    }

    /// A retry only while the budget lasts; renewed credentials are no retry of a failure.
    private static func charge(_ result: RetryResult, to budget: RetryBudget) -> RetryResult {
        result.delay != nil && result != .retryAfterRefresh && !budget.take() ? .doNotRetry : result
    }
}
