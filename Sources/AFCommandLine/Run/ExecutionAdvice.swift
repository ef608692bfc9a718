import AFEngine

/// What an error line adds to the engine's account of a failure: what this command line,
/// its environment and its files make likely, and what to do. Each piece is empty unless it
/// applies; `advice` puts them in order.
extension Execution {
    /// Everything to add to `message`, the account of `error` ending `response`.
    func advice(for error: AFError, response: Response, message: String) -> String {
        ExitMapping.redirectHint(for: error, head: response.head, follow: settings.follow)
            + (Self.isResumable(error) ? resumeHint() : "") + notRetriedHint(error, retries: response.retries)
            + priorKnowledgeHint(error) + addressFamilyHint(error, response: response) + authenticationHint(error, response: response) + methodAsURLHint(error) + passwordCutHint(error)
            + proxyCredentialsHint(error) + proxyVariableHint(error) + caBundleVariableHint(error) + settings.configNote(for: message)
    }

    /// A 401: Digest when the challenge asks for it and af sent Basic or nothing; a token when
    /// it asks for one alone and `-a` sent Basic credentials (a token given without `-A
    /// bearer`), or Basic credentials when it asks for those alone and af sent a token;
    /// credentials af sent that the command line does not show (a session's, the netrc's)
    /// named as the ones refused; else, when none were given, what the challenge asks for.
    fileprivate func authenticationHint(_ error: AFError, response: Response) -> String {
        guard case .responseValidationFailed(401, _) = error.underlyingError, let head = response.head else { return "" }
        let schemes = Set(head.headers.values(for: .wwwAuthenticate).flatMap(Self.challengeSchemes))
        let given = settings.auth != nil || settings.authCmd != nil || built.url.user != nil
            || built.description.headers.contains(.authorization)
        if schemes.contains("digest"), settings.authType != .digest {
            return "; the server asks for Digest authentication: -A digest -a USER:PASSWORD"
        }
        // (Not when a redirect to another origin dropped them: the 401 is then to none sent.)
        if settings.auth != nil, settings.authType != .digest, !response.redirects.contains(where: { !$0.dropped.isEmpty }) {
            let sentToken = settings.authType == .bearer
            if !sentToken, schemes == ["bearer"] {
                return "; the server asks for a token, and -a sent Basic credentials: -A bearer -a TOKEN"
            }
            if sentToken, schemes == ["basic"] {
                return "; the server asks for Basic credentials, and -A bearer sent a token: -a USER:PASSWORD without -A bearer"
            }
        }
        // Credentials nothing on the command line shows were sent, and refused: the session's.
        if let session = built.session, session.auth != nil, settings.auth == nil, settings.authCmd == nil, built.url.user == nil,
           !built.givenHeaders.contains(where: { $0.name == .authorization }) {
            return "; af sent the credentials the session '\(Quote.argument(session.path))' keeps: give -a USER:PASSWORD to replace them"
        }
        guard !given else { return "" }
        if let netrc, let host = try? HTTPURL(parsing: response.finalURL).host, let entry = netrc.credentials(for: host) {
            return "; af sent the credentials '\(Quote.argument(Netrc.path(environment: environment)))' holds for \(host)\(Self.misnamedNote(entry)): correct them there, or give -a USER:PASSWORD (--ignore-netrc sends none)"
        }
        if schemes.contains("basic") { return "; the server asks for credentials: -a USER:PASSWORD" }
        if schemes.contains("bearer") { return "; the server asks for a token: -A bearer -a TOKEN" }
        return ""
    }

    /// What a netrc entry's words from other formats did (`passwd s3cret` for `password
    /// s3cret`): the format does not know them, so they and their values were skipped.
    static func misnamedNote(_ entry: Netrc.Entry) -> String {
        guard !entry.misnamed.isEmpty else { return "" }
        let words = entry.misnamed.map { "'\(Quote.argument($0))'" }
        let meant = entry.misnamed.compactMap { Netrc.misnamedKeywords[$0.lowercased()] }
        let (verb, noun) = words.count == 1 ? ("is", "a netrc word") : ("are", "netrc words")
        return ", whose entry's \(words.joined(separator: " and ")) \(verb) not \(noun), so af read no value from \(words.count == 1 ? "it" : "them")"
            + " (write \(meant.joined(separator: " and ")))"
    }

    /// The schemes a `WWW-Authenticate` value offers, in lower case: `Basic realm="a",
    /// Digest realm="b", nonce="c"` offers basic and digest (a piece without `=` before its
    /// first blank starts a challenge).
    static func challengeSchemes(_ value: String) -> [String] {
        value.split(separator: ",").compactMap { piece in
            let word = piece.drop { $0 == " " || $0 == "\t" }.prefix { $0 != " " && $0 != "\t" }
            guard !word.isEmpty, !word.contains("=") else { return nil }
            return word.lowercased()
        }
    }

    /// `-4` or `-6` with a host name that could not be reached (the one asked for, or a
    /// redirect's): the other family's addresses, which af alone would have tried
    /// (`localhost` is `::1` and `127.0.0.1`), were left out.
    fileprivate func addressFamilyHint(_ error: AFError, response: Response) -> String {
        guard settings.ipVersion != .any, settings.unixSocket == nil, case .transport(let failure) = error.underlyingError,
              [.connectionRefused, .dnsFailure, .connectTimeout].contains(failure.kind), failure.cause == nil,
              let host = try? HTTPURL(parsing: response.finalURL).host, URLBuilder.addressFamily(of: host) == nil
        else { return "" }
        let (flag, family) = settings.ipVersion == .v6 ? ("-6", "IPv6") : ("-4", "IPv4")
        return " (with \(flag) af tried only the \(family) addresses of \(host); try without \(flag))"
    }

    /// HTTP/2 forced on a cleartext connection to a server that speaks only HTTP/1.1 ends in a
    /// reset or an empty reply (the server closes on the preface), which alone do not say why.
    /// Broken framing from a server that does speak HTTP/2 gets no such hint.
    fileprivate func priorKnowledgeHint(_ error: AFError) -> String {
        guard settings.httpVersion == .http2PriorKnowledge, case .transport(let failure) = error.underlyingError,
              [.connectionReset, .sendFailed].contains(failure.kind), failure.cause == nil,
              built.url.scheme == "http"
        else { return "" }
        return "; the server may not speak HTTP/2 without TLS: try without --http-version=2-prior-knowledge"
    }

    /// A proxy that failed and that no option named came from a variable a user may not know
    /// is set in this shell (or a CI job's environment): name it, and the ways around it.
    fileprivate func proxyVariableHint(_ error: AFError) -> String {
        let scheme = built.url.scheme
        guard !settings.namesProxy(forScheme: scheme), case .transport(let failure) = error.underlyingError, failure.message.containsBytes(of: "the proxy"),
              let (name, _) = environment.proxyVariable(forScheme: scheme) else { return "" }
        // libcurl takes `*` for every host only as the whole list: `no_proxy=" *"` or
        // `localhost,*` send the rest through the proxy.
        let list = environment.derived.proxies.noProxy ?? ""
        let starAmongOthers = list != "*" && NoProxyList.entries(list).contains("*")
        let way = starAmongOthers ? "or set no_proxy to '*' alone (a '*' with anything else beside it matches no host)" : "or list the host in no_proxy"
        return " (the proxy is set by \(name) in the environment; unset it, \(way), to connect directly)"
    }

    /// A certificate that did not verify against a CA bundle the environment named in place
    /// of the system's roots (a corporate CA in REQUESTS_CA_BUNDLE, left set for a site
    /// outside): the advice to give --verify=CA.pem alone would not say why a public site
    /// failed.
    fileprivate func caBundleVariableHint(_ error: AFError) -> String {
        guard settings.verify == .on, case .transport(let failure) = error.underlyingError,
              case .untrustedCertificate(_, let problem)? = failure.cause, problem == .unknownIssuer || problem == .issuerNotSent,
              let (variable, path) = environment.derived.caBundle
        else { return "" }
        // Many systems set these variables to the system's own bundle (Nix, container images):
        // then they changed nothing. Said only where libcurl names its defaults to compare.
        let defaults = CurlRuntime.defaultCALocations
        guard defaults.file != nil || defaults.directory != nil else { return "" }
        let named = FileIO.canonicalPath(path)
        if [defaults.file, defaults.directory].contains(where: { $0.map(FileIO.canonicalPath) == named }) { return "" }
        return " (af trusts only the CA certificates of \(variable)='\(Quote.argument(path))', set in the environment, "
            + "instead of the system's: unset it to trust the system's)"
    }

    /// `af get` (or `af post`) with nothing after it, or `af help`: a lone positional is the
    /// URL (SPEC §1), so the word became a host name that does not resolve. Only when the word
    /// stands alone on the command line and no method came before it: `af get http:///get`
    /// names the host `get` too, but no word there was read as the URL.
    fileprivate func methodAsURLHint(_ error: AFError) -> String {
        guard case .transport(let failure) = error.underlyingError, failure.kind == .dnsFailure,
              !built.methodWasExplicit, built.url.port == nil, built.url.path == "/" else { return "" }
        let host = built.url.host.lowercased()
        guard environment.arguments.contains(where: { $0.lowercased() == host }) else { return "" }
        switch host {
        case "help": return "; a lone word is read as the URL: af --help shows how to use af"
        case "version": return "; a lone word is read as the URL: af --version shows af's version"
        default:
            guard HTTPMethod.standard.contains(HTTPMethod(rawValue: host.uppercased())) else { return "" }
            return "; a lone word is read as the URL: give the URL after the method (af \(host) URL)"
        }
    }

    /// A host that did not resolve, named `USER:DIGITS` in a URL argument whose `#`, `?` or
    /// `/` after the digits comes before an `@`: a password that begins with digits and holds
    /// that character (`http://bob:12#34@host/`) ended the URL's host part there, so the user
    /// was taken for the host and the digits for a port. Such a URL parses, so it is sent, and
    /// the failure named only `bob`; the password is not shown.
    fileprivate func passwordCutHint(_ error: AFError) -> String {
        guard case .transport(let failure) = error.underlyingError, failure.kind == .dnsFailure, built.url.user == nil,
              let port = built.url.port else { return "" }
        let authority = "\(built.url.host):\(port)"
        for argument in environment.arguments {
            guard let offset = argument.utf8Offset(of: "://"),
                  String(decoding: argument.utf8.dropFirst(offset + 3).urlAuthority, as: UTF8.self).lowercased() == authority.lowercased(),
                  let password = URLBuilder.passwordCutShort(argument),
                  // A query's `name=value` (`http://api:8080?to=a@b.org`) or a path's `/@user`
                  // is no password cut short.
                  !password.cut.isEmpty,
                  password.character != "?" || !password.cut.contains(where: { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "&") })
            else { continue }
            let character = password.character
            return "; if the URL is '\(MessageQuote.url(password.shown))' with a password that holds a '\(character)', that '\(character)' ended its host part "
                + "and '\(MessageQuote.capped(password.user))' was taken for the host: write it \(password.encoded) (or give the credentials with -a USER:PASSWORD)"
        }
        return ""
    }

    /// A proxy that asked for credentials (407 to the CONNECT of an https request, or as the
    /// answer to a plain http one with `--check-status`): how to give them, or, when the
    /// proxy's URL (`--proxy`'s or the variable's) held some, that it refused those.
    fileprivate func proxyCredentialsHint(_ error: AFError) -> String {
        let scheme = built.url.scheme
        let proxy = built.description.options.proxy.explicitProxy(forScheme: scheme) ?? environment.proxyVariable(forScheme: scheme)?.value
        switch error.underlyingError {
        case .transport(let failure):
            guard case .tunnelRefused(407)? = failure.cause else { return "" }
        case .responseValidationFailed(407, _):
            // The proxy's own answer, unless the request went around it (or there is none).
            guard let proxy, !proxy.isEmpty, built.description.options.proxy.bypassesProxy(forHost: built.url.host) != true else { return "" }
        default:
            return ""
        }
        let basic = "which af sends with Basic authentication (a proxy that asks for another scheme refuses them)"
        if let proxy, ProxyAddress.holdsCredentials(proxy) { return "; it refused the credentials in the proxy's URL, \(basic)" }
        return "; give the proxy's credentials in its URL (--proxy=\(scheme):http://USER:PASSWORD@HOST:PORT), \(basic)"
    }

    /// Why a failure `--retry` would have retried was not: the method is not idempotent, and a
    /// user who asked for retries would otherwise not know they were skipped.
    fileprivate func notRetriedHint(_ error: AFError, retries: Int) -> String {
        let method = built.description.method
        guard settings.retry > 0, !settings.retryAllMethods, retries == 0, !HTTPMethod.idempotent.contains(method) else { return "" }
        let policy = RetryPolicy(retryLimit: settings.retry, retryableStatuses: settings.retryOn ?? RetryPolicy.defaultRetryableStatuses)
        guard policy.isRetryable(error.underlyingError) else { return "" }
        return " (\(method.rawValue) is not retried without --retry-all-methods)"
    }

    /// Whether running again with `-c` can finish what `error` stopped.
    fileprivate static func isResumable(_ error: AFError) -> Bool {
        // A download kept as `.part` because its name was taken meanwhile says so itself.
        if case .output(let failure) = error, [.resumeRefused, .checksumMismatch, .destinationExists, .inUse].contains(failure.kind) { return false }
        return true
    }

    /// How to resume, when a partial download was left behind.
    fileprivate func resumeHint() -> String {
        guard let download, let part = download.partPath, let size = FileSystem.size(part), size > 0 else { return "" }
        // In a batch, the line is what runs again (in a batch of its own, or alone).
        let kept = "; the partial download is in '\(part)' (\(Format.bytes(size))): run the same \(batchLine == nil ? "command" : "line")"
        // A name the server gave (or a numbered one) is resumed only when -o names it.
        guard Self.resumedPath(settings: settings, url: built.url) + ".part" != part else { return kept + " with -c to resume" }
        let file = FileIO.name(of: String(part.dropLast(".part".count)))
        return kept + " with -c -o \(Quote.shellWord(file)) to resume"
    }
}
