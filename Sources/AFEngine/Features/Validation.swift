/// Which response statuses end a request successfully.
public struct StatusValidation: Sendable, Equatable {
    /// Acceptable status ranges.
    public var acceptable: [ClosedRange<Int>]

    /// Accepts statuses in any of `acceptable`.
    public init(acceptable: [ClosedRange<Int>]) {
        self.acceptable = acceptable
    }

    /// 2xx only.
    public static let successful = StatusValidation(acceptable: [200...299])

    /// An error when `head`'s status is not acceptable.
    public func validate(_ head: ResponseHead) -> AFError? {
        guard !acceptable.contains(where: { $0.contains(head.status) }) else { return nil }
        return .responseValidationFailed(status: head.status, reason: head.displayReason)
    }
}
