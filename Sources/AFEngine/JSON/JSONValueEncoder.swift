// Codable support for programs using AFEngine. af's own release build leaves it out
// (Build/link-flags defines AF_NO_CODABLE): the command line encodes and decodes no Swift
// types, and the conformances and generic code would add to every start.
#if !AF_NO_CODABLE

extension JSONValue {
    /// The JSON value of an `Encodable` one, as `JSONEncoder` encodes it with its default
    /// strategies: keys as the type names them, in the order it encodes them; `nil` in an
    /// optional member left out (`encodeIfPresent`); integers with every digit; a `Double`
    /// or `Float` in the shortest text that reads back as the same number. A value that is
    /// not finite (`.nan`, `.infinity`) has no JSON and throws the standard library's
    /// `EncodingError` with its coding path.
    public static func encoding<T: Encodable>(_ value: T) throws -> JSONValue {
        let root = EncodedNode()
        try value.encode(to: JSONValueEncoder(node: root, codingPath: []))
        return root.value
    }
}

extension RequestDescription {
    /// Sends `value` as the JSON body (`JSONValue.encoding`), with `Content-Type:
    /// application/json` unless the headers name a type already.
    public mutating func setJSONBody<T: Encodable>(_ value: T) throws {
        body = .bytes(try JSONValue.encoding(value).textBytes)
        if !headers.contains(.contentType) { headers.add(name: .contentType, value: "application/json") }
    }
}

extension JSONValue {
    /// The value as JSON text on one line, in UTF-8.
    var textBytes: [UInt8] {
        var writer = JSONWriter()
        writer.value(self)
        return writer.bytes
    }
}

/// What one encoded value has become so far: a container's contents stay open to the
/// containers nested in it until encoding ends. Members and elements are held in arrays of
/// the node's own, appended to in place (an enum payload taken out, appended to and put back
/// was copied whole each time), and members found by name through an index.
private final class EncodedNode {
    enum Kind { case value, object, array }

    private(set) var kind = Kind.value
    private var scalar = JSONValue.null
    private var members: [(key: String, node: EncodedNode)] = []
    private var memberIndex: [String: Int] = [:]
    private(set) var elements: [EncodedNode] = []

    /// The finished value.
    var value: JSONValue {
        switch kind {
        case .value: scalar
        case .object: .object(members.map { ($0.key, $0.node.value) })
        case .array: .array(elements.map(\.value))
        }
    }

    /// Makes this node the value `value`.
    func set(_ value: JSONValue) {
        kind = .value
        scalar = value
    }

    /// The node of the member `key`, made (after the others) or found again: a key encoded
    /// twice keeps its place and takes the later value, as `JSONEncoder` has it.
    func member(_ key: String) -> EncodedNode {
        becomeObject()
        if let index = memberIndex[key] { return members[index].node }
        let node = EncodedNode()
        memberIndex[key] = members.count
        members.append((key, node))
        return node
    }

    /// A new last element.
    func appended() -> EncodedNode {
        becomeArray()
        let node = EncodedNode()
        elements.append(node)
        return node
    }

    /// Makes this node an (empty) object or array when it is not one yet.
    func becomeObject() {
        guard kind != .object else { return }
        kind = .object
        members = []
        memberIndex = [:]
    }

    func becomeArray() {
        guard kind != .array else { return }
        kind = .array
        elements = []
    }
}

/// An `Encoder` writing into one node.
private struct JSONValueEncoder: Encoder {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeObject()
        return KeyedEncodingContainer(JSONKeyedEncodingContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return JSONUnkeyedEncodingContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        JSONSingleValueEncodingContainer(node: node, codingPath: codingPath)
    }
}

/// The JSON of the standard library's primitives.
private enum EncodedPrimitive {
    static func number<T: BinaryFloatingPoint & LosslessStringConvertible>(_ value: T, _ path: [any CodingKey]) throws -> JSONValue {
        guard value.isFinite else {
            throw EncodingError.invalidValue(value, EncodingError.Context(codingPath: path, debugDescription: "\(value) has no JSON number"))
        }
        // `description` is the shortest text that reads back as the same value ("1.1", "1e-05").
        var text = value.description
        if text.hasSuffix(".0") { text.removeLast(2) }
        return .number(text)
    }
}

private struct JSONSingleValueEncodingContainer: SingleValueEncodingContainer {
    let node: EncodedNode
    let codingPath: [any CodingKey]

    func encodeNil() { node.set(.null) }
    func encode(_ value: Bool) { node.set(.bool(value)) }
    func encode(_ value: String) { node.set(.string(value)) }
    func encode(_ value: Double) throws { node.set(try EncodedPrimitive.number(value, codingPath)) }
    func encode(_ value: Float) throws { node.set(try EncodedPrimitive.number(value, codingPath)) }
    func encode(_ value: Int) { integer(value) }
    func encode(_ value: Int8) { integer(value) }
    func encode(_ value: Int16) { integer(value) }
    func encode(_ value: Int32) { integer(value) }
    func encode(_ value: Int64) { integer(value) }
    func encode(_ value: UInt) { integer(value) }
    func encode(_ value: UInt8) { integer(value) }
    func encode(_ value: UInt16) { integer(value) }
    func encode(_ value: UInt32) { integer(value) }
    func encode(_ value: UInt64) { integer(value) }

    func encode<T: Encodable>(_ value: T) throws {
        try value.encode(to: JSONValueEncoder(node: node, codingPath: codingPath))
    }

    private func integer<T: BinaryInteger>(_ value: T) {
        node.set(.number(String(value)))
    }
}

private struct JSONKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodedNode
    let codingPath: [any CodingKey]

    /// The encoder of the member `key`.
    private func encoder(_ key: any CodingKey) -> JSONValueEncoder {
        JSONValueEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key])
    }

    func encodeNil(forKey key: Key) { node.member(key.stringValue).set(.null) }
    func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try value.encode(to: encoder(key)) }
    func encode(_ value: Bool, forKey key: Key) throws { try primitive(value, key) }
    func encode(_ value: String, forKey key: Key) throws { try primitive(value, key) }
    func encode(_ value: Double, forKey key: Key) throws { try primitive(value, key) }
    func encode(_ value: Float, forKey key: Key) throws { try primitive(value, key) }
    func encode(_ value: Int, forKey key: Key) throws { try primitive(value, key) }
    func encode(_ value: Int8, forKey key: Key) throws { try primitive(value, key) }
    func encode(_ value: Int16, forKey key: Key) throws { try primitive(value, key) }
    func encode(_ value: Int32, forKey key: Key) throws { try primitive(value, key) }
    func encode(_ value: Int64, forKey key: Key) throws { try primitive(value, key) }
    func encode(_ value: UInt, forKey key: Key) throws { try primitive(value, key) }
    func encode(_ value: UInt8, forKey key: Key) throws { try primitive(value, key) }
    func encode(_ value: UInt16, forKey key: Key) throws { try primitive(value, key) }
    func encode(_ value: UInt32, forKey key: Key) throws { try primitive(value, key) }
    func encode(_ value: UInt64, forKey key: Key) throws { try primitive(value, key) }

    /// A primitive through its single-value container (the overloads above, which the
    /// protocol requires, would each call themselves through `encode`).
    private func primitive<Value: Encodable>(_ value: Value, _ key: Key) throws {
        try value.encode(to: encoder(key))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        encoder(key).container(keyedBy: keyType)
    }

    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder(key).unkeyedContainer()
    }

    func superEncoder() -> any Encoder { encoder(JSONIndexKey(stringValue: "super")) }
    func superEncoder(forKey key: Key) -> any Encoder { encoder(key) }
}

private struct JSONUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let node: EncodedNode
    let codingPath: [any CodingKey]

    var count: Int { node.elements.count }

    /// The encoder of a new last element.
    private func next() -> JSONValueEncoder {
        let index = count
        return JSONValueEncoder(node: node.appended(), codingPath: codingPath + [JSONIndexKey(intValue: index)])
    }

    func encodeNil() { next().node.set(.null) }
    func encode<T: Encodable>(_ value: T) throws { try value.encode(to: next()) }
    func encode(_ value: Bool) throws { try element(value) }
    func encode(_ value: String) throws { try element(value) }
    func encode(_ value: Double) throws { try element(value) }
    func encode(_ value: Float) throws { try element(value) }
    func encode(_ value: Int) throws { try element(value) }
    func encode(_ value: Int8) throws { try element(value) }
    func encode(_ value: Int16) throws { try element(value) }
    func encode(_ value: Int32) throws { try element(value) }
    func encode(_ value: Int64) throws { try element(value) }
    func encode(_ value: UInt) throws { try element(value) }
    func encode(_ value: UInt8) throws { try element(value) }
    func encode(_ value: UInt16) throws { try element(value) }
    func encode(_ value: UInt32) throws { try element(value) }
    func encode(_ value: UInt64) throws { try element(value) }

    /// A primitive through its single-value container.
    private func element<Value: Encodable>(_ value: Value) throws {
        try value.encode(to: next())
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        next().container(keyedBy: keyType)
    }

    func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        next().unkeyedContainer()
    }

    func superEncoder() -> any Encoder { next() }
}

#endif
