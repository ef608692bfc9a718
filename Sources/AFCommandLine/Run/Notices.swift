@_spi(Locking) import AFEngine

/// Prints one line per scheduled retry: the attempt, the reason and the delay; or, for the
/// retry `--auth-cmd`'s authenticator asked for after a 401, that the command runs again
/// (it was counted as an attempt of `--retry`'s: "attempt 2 of 1" without it).
struct RetryNotice: EventMonitor {
    let stderr: OutputChannel
    let limit: Int
    /// `--auth-cmd`'s, whose refreshes tell its retries from the policy's.
    let authenticator: AuthenticationInterceptor?
    private let refreshesSeen = Protected(0)

    init(stderr: OutputChannel, limit: Int, authenticator: AuthenticationInterceptor?) {
        self.stderr = stderr
        self.limit = limit
        self.authenticator = authenticator
    }

    var interests: RequestEvent.Interests { .retryScheduled }

    func request(_ request: Request, didEmit event: RequestEvent) {
        guard case .retryScheduled(_, let reason, let delay) = event.kind else { return }
        // The authenticator decides before the policy, and counts the refresh it asked for.
        if let refreshes = authenticator?.refreshes, refreshesSeen.write({ seen -> Bool in
            defer { seen = refreshes }
            return refreshes > seen
        }) {
            stderr.writeNotice("\(reason): it refused the token; running --auth-cmd again for a new one")
            return
        }
        // The try about to start among the limit + 1 the policy allows (retries count across
        // redirect hops); the event's number counts the hops too ("attempt 3 of 2").
        stderr.writeNotice("retrying in \(Format.seconds(delay)) (attempt \(request.retryCount + 1) of \(limit + 1)): \(reason)")
    }
}

/// Says on standard error which credentials a cross-origin redirect dropped.
struct RedirectNotice: EventMonitor {
    let stderr: OutputChannel

    var interests: RequestEvent.Interests { .redirected }

    func request(_ request: Request, didEmit event: RequestEvent) {
        guard case .redirected(let record) = event.kind, !record.dropped.isEmpty else { return }
        stderr.writeNotice("redirect to \(record.to) leaves \(record.from.hasPrefix("https:") && record.to.hasPrefix("http:") ? "https" : "the origin"); not sending \(record.dropped.joined(separator: ", ")) there (--location-trusted keeps them)")
    }
}
