/// How a request follows redirects, done by the engine so that every hop is a recorded
/// attempt and an event, and credentials never leak to another origin.
public struct RedirectPolicy: Sendable {
    /// Statuses treated as redirects.
    public static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Follow redirects at all.
    public var follow: Bool
    /// Redirects allowed before the request fails.
    public var maxRedirects: Int
    /// Keep credentials on cross-origin redirects (never after https → http).
    public var trustedLocation: Bool
    /// Extra headers to treat as credentials.
    public var secretHeaders: [HTTPHeaders.Name]

    /// The headers that carry credentials, which a cross-origin redirect drops (with
    /// `secretHeaders`).
    public static let credentialHeaders: [HTTPHeaders.Name] = [.authorization, .cookie, .proxyAuthorization]

    /// By default redirects are not followed.
    public init(follow: Bool = false, maxRedirects: Int = 30, trustedLocation: Bool = false, secretHeaders: [HTTPHeaders.Name] = []) {
        self.follow = follow
        self.maxRedirects = maxRedirects
        self.trustedLocation = trustedLocation
        self.secretHeaders = secretHeaders
    }

    /// Whether the engine follows this response instead of handing it to the sink.
    public func shouldFollow(_ head: ResponseHead) -> Bool {
        follow && Self.isFollowable(head)
    }

    /// Whether `head` is a redirect that can be followed: a redirect status with a `Location`
    /// that is not empty. A redirect without one is the response itself, as curl and HTTPie
    /// take it (libcurl ignores an empty `Location`).
    public static func isFollowable(_ head: ResponseHead) -> Bool {
        guard redirectStatuses.contains(head.status), let location = head.headers.value(for: .location) else { return false }
        return !location.trimmingCharacters(in: " \t").isEmpty
    }

    /// The description of the next hop, and the record of the redirect.
    public func nextHop(
        after head: ResponseHead,
        from current: RequestDescription,
        redirectsSoFar: Int
    ) throws(AFError) -> (RequestDescription, RedirectRecord) {
        guard redirectsSoFar < maxRedirects else { throw .tooManyRedirects(limit: maxRedirects) }
        guard let location = head.headers.value(for: .location), !location.trimmingCharacters(in: " \t").isEmpty else {
            throw .redirectFailed(reason: "redirect \(head.status) has no Location (or an empty one)")
        }
        let source = try HTTPURL(parsing: current.url, pathAsIs: true)
        let target: HTTPURL
        do {
            target = try source.resolving(location)
        } catch {
            throw .redirectFailed(reason: "cannot follow redirect from \(MessageQuote.url(source.string)) to '\(MessageQuote.url(location))': \(error)")
        }
        var next = current
        next.url = target.removingCredentials().string
        var dropped: [String] = []
        let changesMethod = (head.status == 303 && current.method != .head)
            || ((head.status == 301 || head.status == 302) && current.method == .post)
        if changesMethod {
            next.method = .get
            next.body = .empty
            for name in [HTTPHeaders.Name.contentType, .contentLength, .contentEncoding, .transferEncoding] {
                next.headers.remove(name: name)
            }
        }
        if !changesMethod, !next.body.isEmpty, !next.body.isReplayable {
            throw .redirectFailed(reason: "the \(head.status) redirect to \(MessageQuote.url(next.url)) asks for the body again, but it was streamed and cannot be read twice")
        }
        // A Host header the user gave names the first host: sent to another one it would ask
        // that server for a site of the first (curl drops it there too, trusted location or
        // not). The URL's own host is sent instead.
        if source.host.lowercased() != target.host.lowercased() { next.headers.remove(name: .host) }
        let downgrade = source.scheme == "https" && target.scheme == "http"
        if !source.sameOrigin(as: target), !trustedLocation || downgrade {
            let secret = Self.credentialHeaders + secretHeaders
            for name in secret where next.headers.contains(name) {
                next.headers.remove(name: name)
                dropped.append(name.rawValue)
            }
            if next.challengeCredentials != nil {
                next.challengeCredentials = nil
                dropped.append("credentials")
            }
            if target.user != nil || target.password != nil { dropped.append("URL credentials") }
        } else if target.user != nil || target.password != nil, !next.headers.contains(.authorization), next.challengeCredentials == nil {
            // Credentials the Location names are sent there, as curl does: to the same origin,
            // or anywhere with a trusted location. The request's own come first: a server does
            // not choose whom the user is.
            next.headers.set(name: .authorization, value: Credentials(user: target.user ?? "", password: target.password ?? "", scheme: .basic).authorizationValue)
        }
        let record = RedirectRecord(status: head.status, from: source.string, to: next.url, method: next.method, dropped: dropped)
        return (next, record)
    }
}
