/// An expected digest for a download: `sha256:HEX` (also sha1, sha512, md5).
public struct Checksum: Sendable, Equatable {
    /// The hash function.
    public var algorithm: Digest.Algorithm
    /// The expected digest.
    public var expected: [UInt8]

    /// Parses `ALGO:HEX`, or explains what is wrong with it.
    public init(parsing text: String) throws(AFError) {
        switch Self.parse(text) {
        case .success(let checksum): self = checksum
        case .failure(let problem): throw .invalidRequest(reason: "invalid checksum '\(text)': \(problem.reason)")
        }
    }

    /// What is wrong with `text` as `ALGO:HEX` (the end of a sentence about it), or nil.
    public static func problem(in text: String) -> String? {
        if case .failure(let problem) = parse(text) { return problem.reason }
        return nil
    }

    private struct Problem: Error {
        let reason: String
    }

    private static func parse(_ text: String) -> Result<Checksum, Problem> {
        let parts = text.split(byte: UInt8(ascii: ":"), maxSplits: 1)
        let names = Digest.Algorithm.allCases.map(\.rawValue).joined(separator: ", ")
        guard parts.count == 2, let algorithm = Digest.Algorithm(rawValue: parts[0].lowercased()) else {
            // A digest alone: its length says which function made it.
            if parts.count == 1, text.lowercased().utf8.allSatisfy({ nibble($0) != nil }),
               let named = Digest.Algorithm.allCases.first(where: { $0.length * 2 == text.utf8.count }) {
                return .failure(Problem(reason: "expected ALGO:HEX; \(text.utf8.count) hexadecimal digits are \(named.article) \(named.rawValue) digest: give \(named.rawValue):\(text)"))
            }
            return .failure(Problem(reason: "expected ALGO:HEX with ALGO one of \(names)"))
        }
        let hex = Array(parts[1].lowercased().utf8)
        let digits = algorithm.length * 2
        guard hex.count == digits else {
            var reason = "\(algorithm.article) \(algorithm.rawValue) digest has \(digits) hexadecimal digits, not \(hex.count)"
            if hex.count == digits + 1, hex.last == 13 {
                // `sha256:$(cat f.sha256)` of a file with CRLF line ends.
                reason += "; the last is a carriage return, which a file with CRLF line ends leaves (tr -d '\\r')"
            } else if hex.count > digits, hex[digits] == 32 || hex[digits] == 9 {
                // A whole line of `sha256sum`'s output: the digest, blanks, the file's name.
                reason += "; give the digest alone, without the file name that follows it in a \(algorithm.rawValue)sum line"
            }
            return .failure(Problem(reason: reason))
        }
        var bytes: [UInt8] = []
        var index = 0
        while index < hex.count {
            guard let high = Self.nibble(hex[index]), let low = Self.nibble(hex[index + 1]) else {
                return .failure(Problem(reason: "'\(parts[1])' is not hexadecimal"))
            }
            bytes.append(high << 4 | low)
            index += 2
        }
        return .success(Checksum(algorithm: algorithm, expected: bytes))
    }

    private init(algorithm: Digest.Algorithm, expected: [UInt8]) {
        self.algorithm = algorithm
        self.expected = expected
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - 48
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - 87
        default: return nil
        }
    }
}

extension Digest.Algorithm {
    /// "a" or "an", as the name is read out: an md5 digest, a sha256 digest.
    fileprivate var article: String { self == .md5 ? "an" : "a" }
}
