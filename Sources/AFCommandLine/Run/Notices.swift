import AFEngine

/// Prints one line per scheduled retry: the attempt, the reason and the delay; or, for the
/// attempt made again after `--auth-cmd`'s authenticator renewed the token on a 401 (a
/// refresh, not among `--retry`'s attempts), that the command runs again.
struct RetryNotice: EventMonitor {
    let stderr: OutputChannel
    let limit: Int

    var interests: RequestEvent.Interests { .retryScheduled }

    func request(_ request: Request, didEmit event: RequestEvent) {
        guard case .retryScheduled(_, let reason, let delay, let refreshed) = event.kind else { return }
        if refreshed {
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
