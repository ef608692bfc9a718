import COpenSSL
import Foundation

/// The files a TLS test server presents.
public struct TLSServerIdentity: Sendable {
    /// PEM: the leaf certificate, then any intermediates.
    public var certificateChainPath: String
    public var privateKeyPath: String
    /// A DER OCSP response to staple, if any.
    public var ocspResponsePath: String?
    /// When set, clients must present a certificate issued by this CA (PEM).
    public var clientCAPath: String?
    /// The highest TLS version offered: "1.2", "1.1" (with RSA key exchange only, for an RSA
    /// key) or nil for the library's best.
    public var maximumVersion: String?
    /// The lowest TLS version accepted: "1.3" (a server that speaks nothing older), or nil
    /// for the library's default.
    public var minimumVersion: String?
    /// Select `h2` by ALPN when the client offers it (the routes then speak HTTP/2 frames).
    public var offersHTTP2 = false
    /// The one name the server serves: a handshake that names another (or none) by SNI
    /// ends with the fatal alert `unrecognized_name`, as a CDN's address does for a site it
    /// does not host. Nil serves every name.
    public var servedName: String?

    public init(certificateChainPath: String, privateKeyPath: String, ocspResponsePath: String? = nil, clientCAPath: String? = nil, maximumVersion: String? = nil) {
        self.certificateChainPath = certificateChainPath
        self.privateKeyPath = privateKeyPath
        self.ocspResponsePath = ocspResponsePath
        self.clientCAPath = clientCAPath
        self.maximumVersion = maximumVersion
    }
}

/// An OpenSSL server context built from an identity.
final class TLSServerContext: @unchecked Sendable {
    private let context: OpaquePointer
    /// The OCSP response handed to OpenSSL's status callback.
    private let staple: Box<[UInt8]>?
    /// The name handed to OpenSSL's servername callback.
    private let servedName: Box<String>?

    /// A value the context keeps alive for a C callback that gets it as its argument.
    final class Box<Value> {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    init(identity: TLSServerIdentity) throws {
        _ = afssl_init_no_atexit()
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw ServerError.tls("SSL_CTX_new") }
        self.context = context
        guard SSL_CTX_use_certificate_chain_file(context, identity.certificateChainPath) == 1 else {
            throw ServerError.tls("cannot load \(identity.certificateChainPath)")
        }
        guard SSL_CTX_use_PrivateKey_file(context, identity.privateKeyPath, SSL_FILETYPE_PEM) == 1 else {
            throw ServerError.tls("cannot load \(identity.privateKeyPath)")
        }
        if identity.minimumVersion == "1.3" {
            _ = afssl_ctx_set_min_proto(context, afssl_tls1_3_version())
        }
        if identity.maximumVersion == "1.2" {
            _ = afssl_ctx_set_max_proto(context, afssl_tls1_2_version())
        }
        if identity.maximumVersion == "1.1" {
            // TLS 1.1 (0x0302) as a server from before 2014 speaks it: RSA key exchange, which
            // needs no signature OpenSSL 3 refuses, at the security level that allows it.
            SSL_CTX_set_security_level(context, 0)
            _ = afssl_ctx_set_max_proto(context, 0x0302)
            _ = SSL_CTX_set_cipher_list(context, "AES128-SHA:@SECLEVEL=0")
        }
        if identity.offersHTTP2 {
            SSL_CTX_set_alpn_select_cb(context, { _, out, outLength, offered, offeredLength, _ in
                // The client's list is length-prefixed names; pick "h2" when it is there.
                guard let out, let outLength, let offered else { return SSL_TLSEXT_ERR_NOACK }
                var index = 0
                while index < Int(offeredLength) {
                    let length = Int(offered[index])
                    if length == 2, index + 2 < Int(offeredLength), offered[index + 1] == UInt8(ascii: "h"), offered[index + 2] == UInt8(ascii: "2") {
                        out.pointee = offered + index + 1
                        outLength.pointee = 2
                        return SSL_TLSEXT_ERR_OK
                    }
                    index += 1 + length
                }
                return SSL_TLSEXT_ERR_NOACK
            }, nil)
        }
        if let name = identity.servedName {
            let box = Box(name)
            servedName = box
            _ = afssl_ctx_set_servername_cb(context, { ssl, alert, argument in
                guard let ssl, let alert, let argument else { return SSL_TLSEXT_ERR_OK }
                let served = Unmanaged<Box<String>>.fromOpaque(argument).takeUnretainedValue().value
                if let sent = afssl_get_servername(ssl), String(cString: sent) == served { return SSL_TLSEXT_ERR_OK }
                return afssl_unrecognized_name_alert(alert)
            }, Unmanaged.passUnretained(box).toOpaque())
        } else {
            servedName = nil
        }
        if let clientCA = identity.clientCAPath {
            SSL_CTX_load_verify_locations(context, clientCA, nil)
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        }
        if let path = identity.ocspResponsePath, let data = FileManager.default.contents(atPath: path) {
            let box = Box([UInt8](data))
            staple = box
            _ = afssl_ctx_set_tlsext_status_cb(context) { ssl, argument in
                guard let ssl, let argument else { return 0 }
                let bytes = Unmanaged<Box<[UInt8]>>.fromOpaque(argument).takeUnretainedValue().value
                guard let copy = CRYPTO_malloc(bytes.count, nil, 0) else { return 0 }
                bytes.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
                _ = afssl_set_tlsext_status_ocsp_resp(ssl, copy.assumingMemoryBound(to: UInt8.self), bytes.count)
                return 0
            }
            _ = afssl_ctx_set_tlsext_status_arg(context, Unmanaged.passUnretained(box).toOpaque())
        } else {
            staple = nil
        }
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// Completes a server handshake on `fd`, or returns nil when it fails.
    func accept(fd: Int32) -> TLSChannel? {
        guard let ssl = SSL_new(context) else { return nil }
        SSL_set_fd(ssl, fd)
        guard SSL_accept(ssl) == 1 else {
            ERR_clear_error()
            SSL_free(ssl)
            return nil
        }
        return TLSChannel(ssl: ssl, fd: fd)
    }
}

/// A TLS session over a socket.
final class TLSChannel: Channel {
    private let ssl: OpaquePointer
    private let fd: Int32
    private var closed = false

    init(ssl: OpaquePointer, fd: Int32) {
        self.ssl = ssl
        self.fd = fd
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let count = SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max))))
        if count <= 0 { ERR_clear_error() }
        return Int(count)
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = SSL_write(ssl, bytes.baseAddress! + offset, Int32(min(bytes.count - offset, 1 << 20)))
            if count <= 0 {
                ERR_clear_error()
                return false
            }
            offset += Int(count)
        }
        return true
    }

    func interrupt() {
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
    }

    func close() {
        guard !closed else { return }
        closed = true
        SSL_shutdown(ssl)
        ERR_clear_error()
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
        SSL_free(ssl)
    }
}
