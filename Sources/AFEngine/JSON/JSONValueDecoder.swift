// Codable support for programs using AFEngine. af's own release build leaves it out
// (Build/link-flags defines AF_NO_CODABLE): the command line encodes and decodes no Swift
// types, and the conformances and generic code would add to every start.
#if !AF_NO_CODABLE

extension JSONValue {
    /// Decodes a `Decodable` type from the value, as `JSONDecoder` decodes one from text with
    /// its default strategies: keys as written, `null` for an optional, a number into any
    /// integer or floating-point type it fits exactly (`1.0` and `1e2` are integers; `1.5`,
    /// `-1` into `UInt` and `300` into `Int8` are not). Errors are the standard library's
    /// `DecodingError`, with the coding path to the value that did not fit; the first of
    /// duplicate keys is the one read, as `self[key]` reads it.
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try T(from: JSONValueDecoder(value: self, codingPath: []))
    }
}

/// A `Decoder` over one value of a parsed document.
private struct JSONValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else {
            throw JSONDecodingFailure.mismatch([String: JSONValue].self, "an object", value, codingPath)
        }
        return KeyedDecodingContainer(JSONKeyedContainer<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw JSONDecodingFailure.mismatch([JSONValue].self, "an array", value, codingPath)
        }
        return JSONUnkeyedContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        JSONSingleValueContainer(value: value, codingPath: codingPath)
    }
}

/// The errors decoding raises, worded for the value that was found.
private enum JSONDecodingFailure {
    static func mismatch(_ type: Any.Type, _ expected: String, _ value: JSONValue, _ path: [any CodingKey]) -> DecodingError {
        if value == .null {
            return .valueNotFound(type, DecodingError.Context(codingPath: path, debugDescription: "expected \(expected), found null"))
        }
        return .typeMismatch(type, DecodingError.Context(codingPath: path, debugDescription: "expected \(expected), found \(article(value.kindName)) \(value.kindName)"))
    }

    static func article(_ word: String) -> String {
        word.first.map { "aeiou".contains($0) } == true ? "an" : "a"
    }

    /// A number that has no exact value of the type asked for.
    static func unfit(_ type: Any.Type, _ text: String, _ path: [any CodingKey]) -> DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: path, debugDescription: "the number \(text.prefix(40)) does not fit \(type)"))
    }
}

/// One value read as a primitive.
private struct JSONSingleValueContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value == .null }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let flag) = value else { throw JSONDecodingFailure.mismatch(type, "a boolean", value, codingPath) }
        return flag
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let text) = value else { throw JSONDecodingFailure.mismatch(type, "a string", value, codingPath) }
        return text
    }

    func decode(_ type: Double.Type) throws -> Double { try floatingPoint(type) }
    func decode(_ type: Float.Type) throws -> Float { try floatingPoint(type) }
    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try T(from: JSONValueDecoder(value: value, codingPath: codingPath))
    }

    /// The number as `T`: its digits when it is written as an integer (every digit counts,
    /// beyond a `Double`'s 53 bits), else its value when that is a whole number `T` holds.
    private func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        guard case .number(let text) = value else { throw JSONDecodingFailure.mismatch(type, "a number", value, codingPath) }
        if let exact = T(text) { return exact }
        let isInteger = !text.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
        guard !isInteger, let number = Double(text), number.isFinite, number == number.rounded(), let exact = T(exactly: number) else {
            throw JSONDecodingFailure.unfit(type, text, codingPath)
        }
        return exact
    }

    /// The number as `T`, nearest as `Double(String)` rounds; one beyond `T`'s range is an error.
    private func floatingPoint<T: BinaryFloatingPoint & LosslessStringConvertible>(_ type: T.Type) throws -> T {
        guard case .number(let text) = value else { throw JSONDecodingFailure.mismatch(type, "a number", value, codingPath) }
        guard let number = T(text), number.isFinite else { throw JSONDecodingFailure.unfit(type, text, codingPath) }
        return number
    }
}

/// The members of an object, by key.
private struct JSONKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let codingPath: [any CodingKey]
    /// The first member of each name, and the names in order.
    private let members: [String: JSONValue]
    private let names: [String]

    init(members list: [(String, JSONValue)], codingPath: [any CodingKey]) {
        var members: [String: JSONValue] = [:]
        var names: [String] = []
        for (name, value) in list where members[name] == nil {
            members[name] = value
            names.append(name)
        }
        self.members = members
        self.names = names
        self.codingPath = codingPath
    }

    var allKeys: [Key] { names.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    private func member(_ key: Key) throws -> JSONValue {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "the object has no member \"\(key.stringValue)\""))
        }
        return value
    }

    private func decoder(for key: Key) throws -> JSONValueDecoder {
        JSONValueDecoder(value: try member(key), codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key) == .null }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try T(from: decoder(for: key)) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try primitive(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try primitive(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try primitive(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try primitive(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try primitive(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try primitive(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try primitive(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try primitive(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try primitive(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try primitive(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try primitive(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try primitive(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try primitive(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try primitive(type, key) }

    /// A primitive through its single-value container (the overloads above, which the
    /// protocol requires, would each call themselves through `decode`).
    private func primitive<Value: Decodable>(_ type: Value.Type, _ key: Key) throws -> Value {
        try Value(from: decoder(for: key))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(for: key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(for: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        JSONValueDecoder(value: members["super"] ?? .null, codingPath: codingPath + [JSONIndexKey(stringValue: "super")])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        JSONValueDecoder(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

/// The elements of an array, one after another.
private struct JSONUnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [JSONValue]
    let codingPath: [any CodingKey]
    private(set) var currentIndex = 0

    init(elements: [JSONValue], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// The decoder of the next element, which it then moves past.
    private mutating func next(_ type: Any.Type) throws -> JSONValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, DecodingError.Context(
                codingPath: codingPath + [JSONIndexKey(intValue: currentIndex)], debugDescription: "the array has only \(elements.count) \(elements.count == 1 ? "element" : "elements")"))
        }
        defer { currentIndex += 1 }
        return JSONValueDecoder(value: elements[currentIndex], codingPath: codingPath + [JSONIndexKey(intValue: currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try T(from: next(type)) }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try element(type) }
    mutating func decode(_ type: String.Type) throws -> String { try element(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try element(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try element(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try element(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try element(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try element(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try element(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try element(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try element(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try element(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try element(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try element(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try element(type) }

    /// A primitive through its single-value container.
    private mutating func element<Value: Decodable>(_ type: Value.Type) throws -> Value {
        try Value(from: next(type))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next([String: JSONValue].self).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next([JSONValue].self).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        try next(JSONValue.self)
    }
}

/// The key of an array element (or of `super`) in a coding path, decoding or encoding.
struct JSONIndexKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init(intValue: Int) {
        stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
}

#endif
