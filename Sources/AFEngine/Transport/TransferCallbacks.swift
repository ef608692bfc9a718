internal import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// The C callbacks libcurl calls during a transfer. Each recovers its `Transfer` from the
/// user-data pointer (unretained: the driver keeps the transfer alive while libcurl runs it)
/// and forwards to it.
enum TransferCallbacks {
    private static func transfer(_ pointer: UnsafeMutableRawPointer?) -> Transfer? {
        guard let pointer else { return nil }
        return Unmanaged<Transfer>.fromOpaque(pointer).takeUnretainedValue()
    }

    static let header: afcurl_data_cb = { buffer, size, count, userdata in
        guard let buffer, let transfer = transfer(userdata) else { return 0 }
        let length = size * count
        switch transfer.parser.consume(UnsafeRawBufferPointer(start: buffer, count: length)) {
        case .needMore: break
        case .informational(let head):
            transfer.emit(.informational, .informational(attempt: transfer.attempt, head))
        case .complete(let head):
            if !transfer.holdsChallenge(head) {
                transfer.headDidComplete(head)
            }
        case .failure(let error): transfer.fail(error)
        }
        return transfer.failure == nil ? length : 0
    }

    static let write: afcurl_data_cb = { buffer, size, count, userdata in
        guard let buffer, let transfer = transfer(userdata) else { return 0 }
        let length = size * count
        return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: length)) ? length : 0
    }

    static let read: afcurl_data_cb = { buffer, size, count, userdata in
        guard let buffer, let transfer = transfer(userdata) else { return afcurl_readfunc_abort() }
        let target = UnsafeMutableRawBufferPointer(start: buffer, count: size * count)
        return transfer.readBody(into: target) ?? afcurl_readfunc_abort()
    }

    static let seek: afcurl_seek_cb = { userdata, offset, origin in
        guard let transfer = transfer(userdata), offset == 0, origin == SEEK_SET else { return 2 }
        return transfer.rewindBody() ? 0 : 2
    }

    static let progress: afcurl_xferinfo_cb = { userdata, downloadTotal, downloaded, uploadTotal, uploaded in
        guard let transfer = transfer(userdata) else { return 1 }
        if transfer.failure != nil || transfer.cancellation != nil { return 1 }
        transfer.reportProgress(received: Int64(downloaded), expectedReceive: Int64(downloadTotal), sent: Int64(uploaded), expectedSend: Int64(uploadTotal))
        return 0
    }

    static let debug: afcurl_debug_cb = { _, type, data, size, userdata in
        guard let data, let transfer = transfer(userdata) else { return 0 }
        if transfer.description.options.logsTransport {
            let text = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
            switch type {
            case CURLINFO_TEXT: transfer.emit(.transportLog, .transportLog(.text, text))
            case CURLINFO_HEADER_OUT: transfer.emit(.transportLog, .transportLog(.sentHead, text))
            case CURLINFO_HEADER_IN: transfer.emit(.transportLog, .transportLog(.receivedHead, text))
            default: break
            }
        }
        guard type == CURLINFO_HEADER_OUT, transfer.description.options.recordsSentHead else { return 0 }
        let text = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
        if transfer.sentHeadComplete || transfer.sentHead == nil {
            transfer.sentHead = ""
            transfer.sentHeadComplete = false
        }
        transfer.sentHead? += text
        if transfer.sentHead?.hasSuffix("\r\n\r\n") == true {
            transfer.sentHeadComplete = true
            transfer.emit(.requestSent, .requestSent(attempt: transfer.attempt, head: transfer.sentHead ?? ""))
        }
        return 0
    }

    static let prerequest: afcurl_prereq_cb = { userdata, primaryIP, _, primaryPort, _ in
        guard let transfer = transfer(userdata) else { return 0 }
        if transfer.heldChallenge != nil, transfer.challengesAnswered >= Transfer.challengeLimit {
            transfer.fail(.transport(TransportFailure(
                kind: .other,
                message: "\(transfer.url.authority) answered \(Transfer.challengeLimit) digest responses in a row with a new challenge (a stale nonce); it takes none from these credentials"
            )))
            return 1
        }
        // Called before every request libcurl sends: one sent again within the transfer
        // answers the challenge held. The connection is announced the first time, and again
        // when libcurl had to open a new one since (a pooled connection the server had closed
        // is retried on a fresh one).
        transfer.settleChallenge(answered: true)
        guard transfer.socketsAnnounced != transfer.socketsOpened else { return 0 }
        let opened = transfer.socketsOpened > max(transfer.socketsAnnounced, 0)
        transfer.socketsAnnounced = transfer.socketsOpened
        transfer.emit(.connected, .connected(address: primaryIP.map { String(cString: $0) } ?? "", port: Int(primaryPort), reused: !opened))
        if opened, transfer.handshakeSeen || transfer.detectResumedTLSSession() {
            // Read now, whether or not a monitor wants it: the TLS details are gone once the
            // transfer ends, and its metrics report them.
            let report = transfer.tlsReport()
            transfer.emit(.tlsEstablished, .tlsEstablished(report))
        }
        return 0
    }

    static let openSocket: curl_opensocket_callback = { userdata, _, address in
        guard let address else { return -1 }
        let descriptor = socket(address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
        if let transfer = transfer(userdata) {
            transfer.socketsOpened += 1
            transfer.emit(.resolved, .resolved(host: transfer.url.host, address: SocketAddress.describe(address)))
        }
        return descriptor
    }
}

/// Text forms of socket addresses.
enum SocketAddress {
    static func string(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func describe(_ address: UnsafeMutablePointer<curl_sockaddr>) -> String {
        withUnsafeMutablePointer(to: &address.pointee.addr) { pointer -> String in
            let family = Int32(pointer.pointee.sa_family)
            var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            switch family {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
                    var addr = inet.pointee.sin_addr
                    inet_ntop(AF_INET, &addr, &buffer, socklen_t(buffer.count))
                    return SocketAddress.string(buffer)
                }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { inet in
                    var addr = inet.pointee.sin6_addr
                    inet_ntop(AF_INET6, &addr, &buffer, socklen_t(buffer.count))
                    return SocketAddress.string(buffer)
                }
            case AF_UNIX:
                return "unix socket"
            default:
                return "address family \(family)"
            }
        }
    }
}
