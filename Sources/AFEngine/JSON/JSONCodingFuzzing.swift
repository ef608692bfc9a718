extension EngineFuzzing {
    /// A body as a program decodes it (`JSONValue.decode`), into a type that takes any JSON:
    /// decoding never traps, and what decodes encodes (`JSONValue.encoding`) to a document
    /// that decodes to the same value. Nothing to do where af's build leaves Codable out.
    package static func jsonCoding(_ data: [UInt8]) {
#if !AF_NO_CODABLE
        guard let document = try? JSONValue.parse(data), let value = try? document.decode(AnyJSON.self) else { return }
        guard let encoded = try? JSONValue.encoding(value) else { preconditionFailure("a decoded value does not encode") }
        guard let again = try? encoded.decode(AnyJSON.self) else { preconditionFailure("an encoded value does not decode") }
        precondition(again.matches(value), "a value does not survive encoding and decoding again")
        _ = try? document.decode([String: [Int8?]].self)
        _ = try? document.decode([UInt64].self)
        _ = try? document.decode(Float.self)
#endif
    }
}

#if !AF_NO_CODABLE
/// Any JSON value, each number as the first of `Int64` and `Double` that holds it.
private enum AnyJSON: Codable, Equatable {
    case null, bool(Bool), integer(Int64), number(Double), string(String), array([AnyJSON]), object([String: AnyJSON])

    init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null }
        else if let value = try? single.decode(Bool.self) { self = .bool(value) }
        else if let value = try? single.decode(Int64.self) { self = .integer(value) }
        else if let value = try? single.decode(Double.self) { self = .number(value) }
        else if let value = try? single.decode(String.self) { self = .string(value) }
        else if let value = try? single.decode([AnyJSON].self) { self = .array(value) }
        else { self = .object(try single.decode([String: AnyJSON].self)) }
    }

    /// Equal, a number either way: a `Double` beyond `Int64` written as digits
    /// (`-9223372036854775809`) is encoded with an exponent, and a whole number written so
    /// decodes as an integer when it fits one.
    func matches(_ other: AnyJSON) -> Bool {
        switch (self, other) {
        case (.integer(let a), .number(let b)), (.number(let b), .integer(let a)): Double(a) == b
        case (.array(let a), .array(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.matches($1) }
        case (.object(let a), .object(let b)): a.count == b.count && a.allSatisfy { key, value in b[key].map(value.matches) ?? false }
        default: self == other
        }
    }

    func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        switch self {
        case .null: try single.encodeNil()
        case .bool(let value): try single.encode(value)
        case .integer(let value): try single.encode(value)
        case .number(let value): try single.encode(value)
        case .string(let value): try single.encode(value)
        case .array(let value): try single.encode(value)
        case .object(let value): try single.encode(value)
        }
    }
}
#endif
