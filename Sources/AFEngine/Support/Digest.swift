internal import COpenSSL

/// An incremental message digest (OpenSSL EVP).
public final class Digest {
    /// Algorithms a download checksum may use.
    public enum Algorithm: String, Sendable, CaseIterable {
        case sha256, sha1, sha512, md5

        /// Bytes in a digest.
        public var length: Int {
            switch self {
            case .sha256: return 32
            case .sha1: return 20
            case .sha512: return 64
            case .md5: return 16
            }
        }
    }

    /// The hash function.
    public let algorithm: Algorithm
    private let context: OpaquePointer

    /// Starts a digest with `algorithm`.
    public init(_ algorithm: Algorithm) {
        self.algorithm = algorithm
        guard let context = EVP_MD_CTX_new() else { fatalError("OpenSSL cannot allocate a digest context") }
        self.context = context
        reset()
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    /// Starts again from nothing.
    public func reset() {
        let type: OpaquePointer?
        switch algorithm {
        case .sha256: type = EVP_sha256()
        case .sha1: type = EVP_sha1()
        case .sha512: type = EVP_sha512()
        case .md5: type = EVP_md5()
        }
        EVP_DigestInit_ex(context, type, nil)
    }

    /// Feeds more bytes.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, base, bytes.count)
    }

    /// The digest of everything so far; the digest cannot be updated afterwards until `reset()`.
    public func finalize() -> [UInt8] {
        var output = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &output, &length)
        return Array(output.prefix(Int(length)))
    }

    /// Lower-case hexadecimal.
    public static func hex(_ bytes: [UInt8]) -> String {
        Hex.encode(bytes)
    }
}
