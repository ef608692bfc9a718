internal import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// Turns a libcurl result code into an `AFError` that names the host and the failure class.
enum CurlErrorMapping {
    /// Why no socket can be opened now, when it is a shortage of descriptors (`EMFILE` for
    /// this process, with its limit; `ENFILE` for the whole system), or nil.
    static func descriptorShortage() -> (code: Int32, limit: Int?)? {
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let code = errno
        if probe >= 0 {
            close(probe)
            return nil
        }
        guard code == EMFILE || code == ENFILE else { return nil }
        var limit = rlimit()
        let known = code == EMFILE && getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 && limit.rlim_cur != rlim_t.max
        return (code, known ? Int(limit.rlim_cur) : nil)
    }

    /// The time limit a connection (with its TLS handshake) runs out of: the connect timeout,
    /// or the total timeout when that is shorter or the only one (`total`), since libcurl
    /// stops at whichever comes first.
    static func connectLimit(_ options: TransferOptions) -> (limit: Double?, total: Bool) {
        switch (options.connectTimeout, options.timeout) {
        case (let connect?, let total?): return total <= connect ? (total, true) : (connect, false)
        case (let connect?, nil): return (connect, false)
        case (nil, let total?): return (total, true)
        case (nil, nil): return (nil, false)
        }
    }

    static func error(for code: CURLcode, transfer: Transfer) -> AFError {
        let easy = transfer.easy
        let url = transfer.url
        let authority = url.authority
        // Plain HTTP through a proxy: the proxy is the peer that answered (or did not), not
        // the host it was asked for, which the messages about the answer name besides.
        let forwardedBy = url.scheme == "http" ? proxyInUse(transfer) : nil
        let peer = forwardedBy.map { "the proxy \(MessageQuote.withoutCredentials($0)) for \(authority)" } ?? authority
        let detail = easy.errorMessage.isEmpty ? String(cString: curl_easy_strerror(code)) : easy.errorMessage
        let osError = Int32(easy.long(CURLINFO_OS_ERRNO))
        func failure(_ kind: TransportFailure.Kind, _ message: String, _ cause: TransportFailure.Cause? = nil) -> AFError {
            .transport(TransportFailure(kind: kind, message: message, curlCode: Int(code.rawValue), cause: cause))
        }
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST:
            // An address given for the host, but for another port (`TransferOptions.resolve`
            // with HOST:80:ADDR and a URL on 8080, or a redirect to https), is not used:
            // libcurl matches host and port.
            let host = url.host.lowercased()
            let otherPort = transfer.description.options.resolve.lazy.compactMap { entry -> Int? in
                let parts = entry.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
                guard parts.count == 3, (parts[0].first == "+" ? parts[0].dropFirst() : parts[0]).lowercased() == host,
                      let port = Int(parts[1]), port != url.effectivePort else { return nil }
                return port
            }.first
            if let otherPort {
                return failure(.dnsFailure, "cannot resolve host '\(url.host)'; the address given for it is for port \(otherPort), and this request is for port \(url.effectivePort)",
                               .addressForAnotherPort(given: otherPort, needed: "\(url.host):\(url.effectivePort)"))
            }
            return failure(.dnsFailure, "cannot resolve host '\(url.host)'; check the name and your network")
        case CURLE_COULDNT_RESOLVE_PROXY:
            // libcurl says "Could not resolve proxy: NAME"; the name is what matters.
            let marker = "resolve proxy: "
            // Otherwise libcurl could not read the proxy's URL, and quotes it, password and all.
            guard let start = detail.utf8Offset(of: marker) else {
                return failure(.proxy, "cannot resolve the proxy host: \(MessageQuote.withoutPasswords(in: detail, writing: "***"))")
            }
            let name = String(decoding: detail.utf8.dropFirst(start + marker.utf8.count), as: UTF8.self)
            return failure(.proxy, "cannot resolve the proxy host '\(MessageQuote.url(name))'; check the proxy's name and your network")
        case CURLE_COULDNT_CONNECT:
            if let socket = transfer.description.options.unixSocketPath {
                // connect(2) calls a path that is no socket (a regular file, a directory)
                // refused, which sends the user looking for a server that is not the problem.
                var info = stat()
                if osError == ECONNREFUSED, stat(socket, &info) == 0, (info.st_mode & S_IFMT) != S_IFSOCK {
                    return failure(.connectionRefused, "cannot connect to unix socket '\(socket)': it is not a socket")
                }
                return failure(.connectionRefused, "cannot connect to unix socket '\(socket)': \(osError != 0 ? POSIXFailure(code: osError).description : detail)")
            }
            let route = proxyRoute(transfer)
            if case .through(let proxy) = route {
                let reason = osError == ECONNREFUSED || osError == 0 ? "connection refused" : POSIXFailure(code: osError).description
                return failure(.connectionRefused, "cannot connect to the proxy \(MessageQuote.withoutCredentials(proxy)) for \(authority): \(reason); is the proxy running?")
            }
            // libcurl 7.88 keeps no errno when it cannot even open a socket; a process out of
            // descriptors would otherwise be told the server refused it.
            if osError == 0, let exhausted = descriptorShortage() {
                return failure(.other, "cannot open a socket to connect to \(authority): \(POSIXFailure(code: exhausted.code).description)",
                               .outOfDescriptors(limit: exhausted.limit))
            }
            if osError == ECONNREFUSED || osError == 0 {
                if case .undecided(let proxy) = route {
                    return failure(.connectionRefused, "connection refused by \(authority) or by the proxy \(MessageQuote.withoutCredentials(proxy)) (no_proxy decides which gets the request); is it running?")
                }
                return failure(.connectionRefused, "connection refused by \(authority); is the server running?")
            }
            if osError == EINVAL, let problem = linkLocalProblem(url) {
                return failure(.connectionRefused, "cannot connect to \(authority): \(problem)")
            }
            return failure(.connectionRefused, "cannot connect to \(authority): \(POSIXFailure(code: osError).description)")
        case CURLE_OPERATION_TIMEDOUT:
            let connected = easy.offset(CURLINFO_CONNECT_TIME_T) > 0
            let tlsPending = url.scheme == "https" && easy.offset(CURLINFO_APPCONNECT_TIME_T) == 0
            if !connected || tlsPending, transfer.head == nil, transfer.sentHead == nil {
                let (limit, total) = connectLimit(transfer.description.options)
                let after = limit.map { " after \(Format.seconds($0))" } ?? ""
                let within = limit.map { " within \(Format.seconds($0))" } ?? ""
                // The name never resolved: no address was tried, so "connecting" would send
                // the user to check a server that was never reached. libcurl resolves the
                // proxy's name when there is one, and says so only in its message.
                if !connected, detail.containsBytes(of: "Resolving timed out") {
                    let proxy = proxyInUse(transfer)
                    let name = proxy.map { "the host of the proxy \(MessageQuote.withoutCredentials($0))" } ?? "host '\(url.host)'"
                    return failure(.connectTimeout, "resolving \(name) timed out\(after)", .resolveTimedOut(limit: limit, total: total))
                }
                // The proxy took the connection but never answered the CONNECT that asks it
                // for a tunnel: its address is right, what listens there may not be a proxy.
                if detail.containsBytes(of: "Proxy CONNECT aborted due to timeout"), let proxy = proxyInUse(transfer) {
                    return failure(.connectTimeout, "the proxy \(MessageQuote.withoutCredentials(proxy)) took the connection but did not answer the CONNECT for \(authority)\(within)",
                                   .tunnelTimedOut(limit: limit, total: total))
                }
                // The tunnel is open (the handshake asked for its TLS context) but the host
                // at its end did not finish the handshake: not the proxy's connect.
                if tlsPending, transfer.handshakeStarted, let proxy = proxyInUse(transfer) {
                    return failure(.connectTimeout, "the TLS handshake with \(authority) through the proxy \(MessageQuote.withoutCredentials(proxy)) did not finish\(within)",
                                   .handshakeTimedOut(limit: limit, total: total))
                }
                // Not even the proxy answered: it was named as the host it was asked for.
                if !connected, let proxy = proxyInUse(transfer) {
                    return failure(.connectTimeout, "connecting to the proxy \(MessageQuote.withoutCredentials(proxy)) for \(authority) timed out\(after)",
                                   .connectTimedOut(limit: limit, total: total))
                }
                // Connected, but the handshake never finished: say so, not "connecting".
                // libcurl 7.88 records no connect time until TLS is up too. Its message tells
                // when the connect timeout ran out ("SSL connection timeout"), not when the
                // total one did; the TLS context it asked for then tells.
                if tlsPending, transfer.handshakeStarted || detail.containsBytes(of: "SSL connection timeout"), proxyInUse(transfer) == nil {
                    return failure(.connectTimeout, "the TLS handshake with \(authority) did not finish\(within)", .handshakeTimedOut(limit: limit, total: total))
                }
                return failure(.connectTimeout, "connecting to \(authority) timed out\(after)", .connectTimedOut(limit: limit, total: total))
            }
            let limit = transfer.description.options.timeout
            let within = limit.map { " within \(Format.seconds($0))" } ?? ""
            return failure(.timeout, "no complete response from \(peer)\(within)", .responseTimedOut(limit: limit))
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE, CURLE_SSL_INVALIDCERTSTATUS,
             CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED, CURLE_USE_SSL_FAILED, CURLE_SSL_CLIENTCERT:
            if code == CURLE_SSL_INVALIDCERTSTATUS {
                return failure(.tls, "revocation check failed for \(url.host): \(detail)")
            }
            // The HTTPS proxy's certificate, which libcurl verified itself (the handshake
            // hooks see it only when the server is https too): named as the proxy's.
            if let proxy = transfer.httpsProxy, case let result = easy.long(CURLINFO_PROXY_SSL_VERIFYRESULT), result != 0 {
                let code = Int32(truncatingIfNeeded: result)
                return failure(.tls, "the certificate of the proxy \(proxy.authority) is not trusted: \(TLSHandshake.verificationReason(code))",
                               .untrustedProxyCertificate(code: code, problem: TLSHandshake.problem(forVerificationError: code)))
            }
            if code == CURLE_SSL_CACERT_BADFILE || code == CURLE_SSL_CRL_BADFILE {
                return failure(.tls, "TLS with \(authority) failed: \(detail)", .unusableTrustFile(code == CURLE_SSL_CRL_BADFILE ? .crl : .caBundle))
            }
            if code == CURLE_SSL_CONNECT_ERROR, clientCertificateAlert(detail) != nil {
                return clientCertificateFailure(detail, transfer: transfer, failure)
            }
            // TLS 1.2 servers answer a missing certificate with a plain handshake failure.
            if code == CURLE_SSL_CONNECT_ERROR, transfer.clientCertificateRequested, detail.containsBytes(of: "alert handshake failure") {
                return failure(.tls, "TLS with \(authority) failed: the server asked for a client certificate and ended the handshake when none came (alert handshake failure)",
                               .clientCertificateRefused(given: false))
            }
            // The connection closed or was reset under the handshake, without an alert:
            // nothing was sent, so it is a reset, retried as one. (Not after the server asked
            // for a client certificate: closing is then how it refuses the lack of one.)
            if code == CURLE_SSL_CONNECT_ERROR, !transfer.clientCertificateRequested, closedUnderHandshake(detail) {
                let path = proxyInUse(transfer) != nil ? "the tunnel through the proxy\(connectedProxy(easy)) to \(authority)" : "the connection to \(authority)"
                return failure(.connectionReset, "\(path) closed during the TLS handshake (\(detail.trimmingCharacters(in: " ")))", .closedDuringHandshake)
            }
            if code == CURLE_SSL_CERTPROBLEM {
                // libcurl's code for its own side: the client certificate or key did not load.
                return failure(.tls, "TLS with \(authority) failed: \(detail)", .unusableTrustFile(.clientIdentity))
            }
            if detail.containsBytes(of: "subject name") {
                // Which hosts it is for says whether the URL or the server is wrong.
                let names = transfer.serverChain.first.map { Certificates.subjectAltNames(der: $0.der) } ?? []
                let shown = names.prefix(8).map { MessageQuote.capped($0) }.joined(separator: ", ")
                let more = names.count > 8 ? " and \(names.count - 8) more" : ""
                let hosts = names.isEmpty ? "other hosts" : "other hosts: \(shown)\(more)"
                return failure(.tls, "TLS with \(authority) failed: \(detail); the certificate names \(hosts) (see 'af pin \(authority)')")
            }
            // No TLS version in common: the server's alert, or OpenSSL's own refusal of the
            // server's choice.
            if detail.containsBytes(of: "alert protocol version") || detail.containsBytes(of: "unsupported protocol") {
                let tls = transfer.description.options.tls
                return failure(.tls, "TLS with \(authority) failed: the server and af have no TLS version in common (\(detail))",
                               .noCommonTLSVersion(requiredTLS13: tls.minimumVersion == .tls1_3, cappedAtTLS12: tls.maximumVersion == .tls1_2))
            }
            if detail.containsBytes(of: "unrecognized name") {
                return failure(.tls, "TLS with \(authority) failed: the server serves no site by the name '\(MessageQuote.capped(url.host))' (its alert: unrecognized name)", .nameNotServed)
            }
            // OpenSSL's reading of a reply that is no TLS record at all, such as a plain HTTP
            // server's "400 Bad Request".
            let plain = code == CURLE_SSL_CONNECT_ERROR && detail.containsBytes(of: "wrong version number")
            return failure(.tls, "TLS with \(authority) failed: \(detail)", plain ? .notATLSAnswer : .handshakeFailed)
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return failure(.pinning, "pinning failed for \(url.host): \(detail)")
        case CURLE_GOT_NOTHING:
            // An interim head (100 Continue, or a 101 switch af did not ask for, which libcurl
            // then waits past) was an answer, if not a final one.
            let interim = transfer.head.flatMap { (100..<200).contains($0.status) ? $0 : nil } ?? transfer.parser.lastInterim
            if let interim {
                return failure(.connectionReset, "\(peer) answered only \(interim.status) \(MessageQuote.capped(interim.displayReason)) and closed the connection without a final response")
            }
            return failure(.connectionReset, "\(peer) closed the connection without answering")
        case CURLE_RECV_ERROR where detail.containsBytes(of: "Out of memory in chunked-encoding"):
            // libcurl 7.88 keeps each trailer line in a buffer of 4 KiB and calls a longer one
            // running out of memory, which sends the user looking at the wrong machine.
            return failure(.limitExceeded, "a trailer field after the body from \(peer) is too long for libcurl (over 4 kB)")
        case CURLE_RECV_ERROR where detail.lowercased().containsBytes(of: "chunk"),
             // libcurl 7.88's code for chunked framing it cannot read past the body (a status
             // line among the trailers).
             CURLE_BAD_FUNCTION_ARGUMENT where detail.lowercased().containsBytes(of: "chunk"):
            return failure(.malformedResponse, "malformed response from \(peer): \(detail)")
        case CURLE_RECV_ERROR where detail.containsBytes(of: "Proxy CONNECT aborted"):
            // The proxy closed the connection instead of answering the CONNECT: the host it
            // was asked for was never reached.
            return failure(.connectionReset, "the proxy\(connectedProxy(easy)) closed the connection before opening a tunnel to \(authority)")
        case CURLE_RECV_ERROR where detail.containsBytes(of: "CONNECT response too large"):
            // The proxy's answer to the CONNECT ran past libcurl's limit for a head: the
            // proxy's doing, not a connection to the host that was reset.
            return failure(.limitExceeded, "the proxy\(connectedProxy(easy)) answered the CONNECT for \(authority) with a head too large for libcurl (its limit for a CONNECT response)")
        case CURLE_RECV_ERROR where detail.containsBytes(of: "CONNECT tunnel failed"):
            // The proxy answered the CONNECT with a status of its own (407 wants credentials,
            // 403 forbids the host, 502 could not reach it): its answer, not a reset, and not
            // worth a retry.
            let proxy = connectedProxy(easy)
            let status = easy.long(CURLINFO_HTTP_CONNECTCODE)
            let answer = status > 0 ? "it answered \(status)" : detail
            return failure(.proxy, "the proxy\(proxy) did not open a tunnel to \(authority): \(answer)", .tunnelRefused(status: status))
        case CURLE_RECV_ERROR where detail.containsBytes(of: "nghttp2"):
            // nghttp2 refused what the server framed (a CONTINUATION flood, a bad header
            // block): the server's fault, not a reset connection, so not worth a retry.
            return failure(.malformedResponse, "malformed response from \(peer): broken HTTP/2 framing (\(nghttp2Reason(detail)))")
        case CURLE_RECV_ERROR where detail.lowercased().containsBytes(of: "too large response headers"):
            return failure(.limitExceeded, "the response head from \(peer) is too large: \(detail) (libcurl's limit)")
        case CURLE_OUT_OF_MEMORY where transfer.head == nil && RequestHeadLimit.isExceeded(by: transfer.description):
            let size = RequestHeadLimit.estimatedSize(of: transfer.description)
            return failure(.limitExceeded, "the request for \(authority) was not sent: its URL and headers come to \(size) bytes, more than libcurl puts in a request head (1 MiB)")
        case CURLE_OUT_OF_MEMORY where transfer.head == nil:
            // libcurl refuses a single header line over its 100 kB limit this way.
            return failure(.limitExceeded, "a response header line from \(peer) is too long for libcurl (over 100 kB)")
        case CURLE_SEND_ERROR where transfer.head != nil && transfer.isStillSendingBody:
            // A server that answers before it reads the whole body (a 2xx it meant to keep the
            // connection for), then closes on the bytes it left unread: the response may be
            // whole, but the connection did not break "during the response body".
            let status = transfer.head.map { " \($0.status)" } ?? ""
            let sent = easy.offset(CURLINFO_SIZE_UPLOAD_T)
            return failure(.sendFailed, "\(peer) answered\(status) before taking the whole request body, then closed the connection (\(sent) bytes of it sent): \(detail)")
        case CURLE_RECV_ERROR where transfer.head == nil && clientCertificateAlert(detail) != nil,
             CURLE_SEND_ERROR where transfer.head == nil && clientCertificateAlert(detail) != nil:
            // TLS 1.3 ends the handshake before the server has checked the client's
            // certificate: its refusal (or its demand for one) arrives as an alert on the first
            // read, which read as a reset connection.
            return clientCertificateFailure(detail, transfer: transfer, failure)
        case CURLE_RECV_ERROR where transfer.head == nil && transfer.clientCertificateRequested,
             CURLE_SEND_ERROR where transfer.head == nil && transfer.clientCertificateRequested:
            // The server asked for a certificate, got none, and closed the connection before
            // its alert could be read (sending the request met the reset).
            return failure(.tls, "TLS with \(authority) failed: the server asked for a client certificate and closed the connection when none came (\(detail))",
                           .clientCertificateRefused(given: false))
        case CURLE_RECV_ERROR where transfer.head == nil && detail.hasPrefix("Connection died, tried "):
            // libcurl sent the request again, on a new connection, each time one closed or
            // its HTTP/2 stream was refused before any answer, and gave up after a few: the
            // server is there but takes no requests (an HTTP/1-only server at HTTP/2 with
            // prior knowledge closes at once instead, which libcurl does not try again).
            let attempts = Int(String(decoding: detail.utf8.dropFirst("Connection died, tried ".utf8.count).prefix { $0 >= 0x30 && $0 <= 0x39 }, as: UTF8.self)) ?? 0
            let times = attempts > 0 ? "\(attempts) times in a row" : "again and again"
            return failure(.connectionReset, "\(peer) did not take the request: \(times) it closed the connection or refused the HTTP/2 stream before answering",
                           .refusedRepeatedly(attempts: attempts))
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR:
            if transfer.head != nil {
                return failure(.truncatedBody, "the connection to \(peer) broke during the response body: \(detail)")
            }
            return failure(.connectionReset, "the connection to \(peer) was reset: \(detail)")
        case CURLE_PARTIAL_FILE:
            // libcurl's own words count "1 bytes remaining"; the sizes say more.
            let received = easy.offset(CURLINFO_SIZE_DOWNLOAD_T), announced = easy.offset(CURLINFO_CONTENT_LENGTH_DOWNLOAD_T)
            let what = announced > 0 && (0..<announced).contains(received) ? "\(received) of the \(announced) bytes it announced came" : detail
            return failure(.truncatedBody, "\(peer) closed the connection before the body was complete (\(what))")
        case CURLE_HTTP2 where transfer.head == nil && easy.long(CURLINFO_NUM_CONNECTS) == 0 && easy.offset(CURLINFO_SIZE_DOWNLOAD_T) == 0:
            // On a connection earlier requests had used, before any of the response: libcurl
            // 7.88 fails the streams of a connection the server is closing (GOAWAY) that it
            // had not yet taken, rather than sending them again itself. Its text for it
            // ("Error in the HTTP2 framing layer") blames the server's framing, which was fine.
            return failure(.connectionReset, "\(peer) closed its HTTP/2 connection before answering (servers close one after so many requests)", .unansweredOnReusedConnection)
        case CURLE_HTTP2_STREAM where transfer.head != nil:
            // The server reset the stream after its head (RST_STREAM): the body stopped short,
            // as it does when a connection breaks, and a retry may well get all of it.
            let reason = streamErrorName(detail).map { " (\($0))" } ?? ""
            return failure(.truncatedBody, "\(peer) reset the HTTP/2 stream during the response body\(reason): the body is incomplete")
        case CURLE_WEIRD_SERVER_REPLY where detail.hasPrefix("Invalid Content-Length"):
            // libcurl refuses a negative length before af reads the line, in a sentence with
            // a placeholder ("Invalid Content-Length: value"); af's own check names the rest.
            return failure(.malformedResponse, "malformed response from \(peer): its Content-Length is not a number of bytes")
        case CURLE_WEIRD_SERVER_REPLY, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_BAD_CONTENT_ENCODING, CURLE_HTTP3:
            return failure(.malformedResponse, "malformed response from \(peer): \(detail)")
        case CURLE_FILESIZE_EXCEEDED:
            let limit = transfer.description.options.maxFileSize
            let of = limit.map { " of \($0) bytes" } ?? ""
            return failure(.limitExceeded, "the response body exceeds the size limit\(of)", .bodyTooLarge(limit: limit))
        case CURLE_UNSUPPORTED_PROTOCOL where detail.hasPrefix("Unsupported response code"):
            // An HTTP status line whose code is not three digits from 100 (`000`, `1000`): the
            // server does speak HTTP, so the hints below would mislead.
            return failure(.malformedResponse, "malformed response from \(peer): its status line has no valid status code (three digits, 100 to 999)")
        case CURLE_UNSUPPORTED_PROTOCOL:
            // The scheme was checked before sending, so this is the server's answer.
            return failure(.malformedResponse, "malformed response from \(peer): it did not answer in HTTP (\(detail))",
                           forwardedBy == nil && url.scheme == "http" && transfer.description.options.httpVersion != .http2PriorKnowledge ? .notAnHTTP1Answer : nil)
        case CURLE_URL_MALFORMAT:
            return .invalidRequest(reason: "cannot request '\(MessageQuote.url(url.string))': \(detail)")
        case CURLE_READ_ERROR, CURLE_ABORTED_BY_CALLBACK:
            return failure(.sendFailed, "sending the body to \(authority) failed: \(detail)")
        case CURLE_PROXY:
            return failure(.proxy, "the proxy refused the request: \(detail)")
        case CURLE_INTERFACE_FAILED:
            let interface = transfer.description.options.interface ?? ""
            return failure(.other, "cannot send from '\(interface)': \(detail)", .unusableInterface(interface))
        case CURLE_WRITE_ERROR where transfer.head?.headers.value(for: .contentEncoding) != nil:
            // af's own sinks record their failures before libcurl sees them, so a write error
            // with nothing recorded comes from libcurl's decoder: the body is not what its
            // Content-Encoding says (corrupt, or garbage after the compressed stream).
            let encoding = transfer.head?.headers.value(for: .contentEncoding) ?? ""
            return failure(.malformedResponse, "malformed response from \(peer): the body is not valid \(encoding) data (\(detail))")
        case CURLE_WRITE_ERROR:
            return .output(OutputFailure(kind: .writeFailed, message: "writing the response failed: \(detail)"))
        default:
            return failure(.other, "request to \(authority) failed: \(detail) (libcurl error \(code.rawValue))")
        }
    }

    /// Why connecting to an IPv6 link-local address (`fe80::/10`) was an invalid argument:
    /// such an address means something only on one interface, which the URL names as the
    /// address's zone (`[fe80::1%25eth0]`), and the kernel refuses one without it, or with a
    /// name that is no interface here. Nil for any other host.
    static func linkLocalProblem(_ url: HTTPURL) -> String? {
        let host = url.host.lowercased().utf8
        guard host.starts(with: "[fe".utf8), host.count > 4,
              [UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b")].contains(host[host.index(host.startIndex, offsetBy: 3)])
        else { return nil }
        // libcurl keeps the zone out of the host part; the URL as sent still has it.
        let text = url.string.utf8
        guard let percent = text.firstIndex(of: UInt8(ascii: "%")),
              let close = text[percent...].firstIndex(of: UInt8(ascii: "]")) else {
            return "a link-local address needs the interface it is on, as its zone: http://\(url.host.dropLast())%25eth0]/ (see 'ip -6 address')"
        }
        var zone = Substring(text[text.index(after: percent)..<close])
        if zone.hasPrefix("25") { zone = zone.dropFirst(2) }
        return "there is no network interface '\(MessageQuote.url(String(zone)))' for the zone of the link-local address (see 'ip -6 address')"
    }

    /// A server's refusal of the client certificate, or its demand for one, as a TLS failure
    /// that says which.
    private static func clientCertificateFailure(_ detail: String, transfer: Transfer,
                                                 _ failure: (TransportFailure.Kind, String, TransportFailure.Cause?) -> AFError) -> AFError {
        let alert = clientCertificateAlert(detail) ?? ""
        let given = transfer.description.options.tls.clientCertificate != nil
        let what = alert == "certificate required" && !given ? "the server requires a client certificate" : "the server refused the client certificate"
        return failure(.tls, "TLS with \(transfer.url.authority) failed: \(what) (alert \(alert))", .clientCertificateRefused(given: given))
    }

    /// The TLS alert in libcurl's message by which a server refuses a client certificate, or
    /// asks for one it did not get (`certificate required`, TLS 1.3's alert 116), or nil.
    static func clientCertificateAlert(_ detail: String) -> String? {
        let alerts = ["certificate required", "unknown ca", "bad certificate", "certificate unknown", "certificate expired",
                      "certificate revoked", "unsupported certificate"]
        return alerts.first { detail.containsBytes(of: "alert " + $0) }
    }

    /// The proxy a failed connection went to: through a proxy it is the proxy that did not
    /// answer (libcurl does not say which address it tried). Nil without one, and where the
    /// `no_proxy` list sends the request to the host directly, or may (it had been nil for
    /// any list, so a refused proxy from the environment was reported as the server).
    private static func proxyInUse(_ transfer: Transfer) -> String? {
        if case .through(let proxy) = proxyRoute(transfer) { return proxy }
        return nil
    }

    /// How a transfer went: straight to its host, through a proxy, or either, where af
    /// cannot read the `no_proxy` list as libcurl does.
    private enum ProxyRoute {
        case direct
        case through(String)
        case undecided(String)
    }

    private static func proxyRoute(_ transfer: Transfer) -> ProxyRoute {
        let options = transfer.description.options
        guard let proxy = options.proxy.explicitProxy(forScheme: transfer.url.scheme), options.unixSocketPath == nil else { return .direct }
        switch options.proxy.bypassesProxy(forHost: transfer.url.host) {
        case false?: return .through(proxy)
        case true?: return .direct
        case nil: return .undecided(proxy)
        }
    }

    /// Whether libcurl's message for a failed handshake is an end of the connection under it
    /// (a reset, or the end of the stream where a TLS record was due: OpenSSL's
    /// `SSL_ERROR_SYSCALL` or "unexpected eof") rather than something TLS said.
    private static func closedUnderHandshake(_ detail: String) -> Bool {
        ["Connection reset by peer", "SSL_ERROR_SYSCALL", "unexpected eof while reading", "Broken pipe"].contains { detail.containsBytes(of: $0) }
    }

    /// The address the transfer connected to, with a leading space (` 127.0.0.1:3128`), for a
    /// proxy that answered a CONNECT; empty when libcurl does not know it.
    private static func connectedProxy(_ easy: EasyHandle) -> String {
        guard let ip = easy.string(CURLINFO_PRIMARY_IP), !ip.isEmpty else { return "" }
        let port = easy.long(CURLINFO_PRIMARY_PORT)
        return " \(ip.containsByte(UInt8(ascii: ":")) ? "[\(ip)]" : ip)\(port > 0 ? ":\(port)" : "")"
    }

    /// The HTTP/2 error code's name in libcurl's message for a reset stream ("HTTP/2 stream 1
    /// was not closed cleanly: INTERNAL_ERROR (err 2)"), or nil.
    private static func streamErrorName(_ detail: String) -> String? {
        let marker = "closed cleanly: "
        guard let start = detail.utf8Offset(of: marker) else { return nil }
        let rest = detail.utf8.dropFirst(start + marker.utf8.count)
        let name = rest.prefix { $0 != UInt8(ascii: " ") }
        return name.isEmpty ? nil : String(decoding: name, as: UTF8.self)
    }

    /// nghttp2's own words from libcurl's message, without the function names around them
    /// ("h2_process_pending_input: nghttp2_session_mem_recv() returned -905:Too many …").
    static func nghttp2Reason(_ detail: String) -> String {
        guard let (_, afterReturned) = detail.splitOnce(byte: UInt8(ascii: ")")),
              let (_, reason) = afterReturned.splitOnce(byte: UInt8(ascii: ":")) else { return detail }
        let trimmed = reason.trimmingCharacters(in: " ")
        return trimmed.isEmpty ? detail : trimmed
    }
}
