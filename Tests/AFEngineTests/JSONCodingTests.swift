import AFEngine
import AFTestSupport
import Testing

/// `Decodable` types from a parsed document (`JSONValue.decode`), and from a response
/// (`DataResponse.decode`, `Request.serializingDecodable`); `Encodable` ones into a document
/// (`JSONValue.encoding`) and a request body (`RequestDescription.setJSONBody`).
@Suite struct JSONCodingTests {
    struct User: Decodable, Equatable {
        enum Role: String, Decodable { case admin, reader }
        struct Address: Decodable, Equatable {
            var city: String
            var zip: String?
        }

        var id: UInt64
        var name: String
        var score: Double
        var ratio: Float
        var active: Bool
        var role: Role
        var tags: [String]
        var address: Address
        var nickname: String?
        var counts: [String: Int]
        var matrix: [[Int8]]
    }

    private func value(_ text: String) throws -> JSONValue {
        try JSONValue.parse(Array(text.utf8))
    }

    /// The path to where a decoding failed, as `a.b[2]`.
    private func path(_ error: any Error) -> String {
        let context: DecodingError.Context? = switch error as? DecodingError {
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?, .keyNotFound(_, let context)?, .dataCorrupted(let context)?: context
        default: nil
        }
        return (context?.codingPath ?? []).map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
    }

    private func description(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?, .keyNotFound(_, let context)?, .dataCorrupted(let context)?: context.debugDescription
        default: "\(error)"
        }
    }

    @Test func aDocumentDecodesIntoNestedTypes() throws {
        let document = try value("""
            {"id": 18446744073709551615, "name": "Ada", "score": 1.10, "ratio": 0.5, "active": true, "role": "admin",
             "tags": ["a", "b"], "address": {"city": "Oslo", "zip": null}, "counts": {"x": 1, "y": 2e1},
             "matrix": [[1, -2], [], [127]], "extra": "ignored", "name": "a second Ada, not read"}
            """)
        let user = try document.decode(User.self)
        #expect(user == User(id: .max, name: "Ada", score: 1.1, ratio: 0.5, active: true, role: .admin, tags: ["a", "b"],
                             address: User.Address(city: "Oslo", zip: nil), nickname: nil, counts: ["x": 1, "y": 20], matrix: [[1, -2], [], [127]]))
        #expect(try value("[1, null, 3]").decode([Int?].self) == [1, nil, 3])
        #expect(try value("1.0").decode(Int.self) == 1)
        #expect(try value("-0").decode(Int.self) == 0)
        #expect(try value("\"é\\u00e9\"").decode(String.self) == "éé")
        #expect(try value("null").decode(Int?.self) == nil)
    }

    @Test(arguments: [
        (#"{"id": "7"}"#, "Int", ".id", "expected a number, found a string"),
        (#"{"id": null}"#, "Int", ".id", "expected a number, found null"),
        (#"{"id": 1.5}"#, "Int", ".id", "the number 1.5 does not fit Int"),
        (#"{"id": 300}"#, "Int8", ".id", "the number 300 does not fit Int8"),
        (#"{"id": -1}"#, "UInt", ".id", "the number -1 does not fit UInt"),
        (#"{"id": 1e999}"#, "Double", ".id", "the number 1e999 does not fit Double"),
        (#"{"id": 99999999999999999999}"#, "Int64", ".id", "the number 99999999999999999999 does not fit Int64"),
        (#"{"other": 1}"#, "Int", "", "the object has no member \"id\""),
        (#"{"id": [1, {}]}"#, "[Int]", ".id[1]", "expected a number, found an object"),
        (#"[]"#, "Int", "", "expected an object, found an array"),
    ])
    func aValueThatDoesNotFitIsNamedWithItsPath(text: String, type: String, expectedPath: String, expected: String) throws {
        struct Holder<T: Decodable>: Decodable { var id: T }
        let document = try value(text)
        let attempt: () throws -> Void = switch type {
        case "Int8": { _ = try document.decode(Holder<Int8>.self) }
        case "UInt": { _ = try document.decode(Holder<UInt>.self) }
        case "Double": { _ = try document.decode(Holder<Double>.self) }
        case "Int64": { _ = try document.decode(Holder<Int64>.self) }
        case "[Int]": { _ = try document.decode(Holder<[Int]>.self) }
        default: { _ = try document.decode(Holder<Int>.self) }
        }
        do {
            try attempt()
            Issue.record("\(text) decoded")
        } catch {
            #expect(path(error) == expectedPath)
            #expect(description(error) == expected)
        }
    }

    @Test func anArrayShorterThanATupleIsNamed() throws {
        struct Pair: Decodable {
            var first: Int, second: Int
            init(from decoder: any Decoder) throws {
                var elements = try decoder.unkeyedContainer()
                first = try elements.decode(Int.self)
                second = try elements.decode(Int.self)
            }
        }
        #expect(try value("[1, 2]").decode(Pair.self).second == 2)
        do {
            _ = try value("[1]").decode(Pair.self)
            Issue.record("a one-element array decoded as a pair")
        } catch {
            #expect(path(error) == "[1]")
            #expect(description(error) == "the array has only 1 element")
        }
    }

    @Test func aResponseDecodesIntoATypeThroughTheEngine() async throws {
        struct Sample: Decodable { var name: String; var price: Double; var tags: [String]? }
        let server = try TestServer()
        server.route("/sample") { _, _ in .json(#"{"name": "af", "price": 1.10, "tags": ["cli"]}"#) }
        let session = Session()
        defer { session.shutdown() }
        let sample = try await session.request(RequestDescription(url: server.url("/sample"))).serializingDecodable(Sample.self)
        #expect(sample.name == "af" && sample.price == 1.1 && sample.tags == ["cli"])
        let data = try await session.request(RequestDescription(url: server.url("/sample"))).serializingData()
        #expect(try data.decode(Sample.self).name == "af")
        // A body that is no JSON is the parser's error, with where it broke.
        server.route("/text") { _, _ in .text("not json") }
        await #expect(throws: JSONSyntaxError.self) {
            _ = try await session.request(RequestDescription(url: server.url("/text"))).serializingDecodable(Sample.self)
        }
    }

    struct Order: Codable, Equatable {
        var id: UInt64 = .max
        var name = "Ada \"quoted\" \u{E9}\n"
        var price = 1.1
        var ratio: Float = 0.1
        var small = 1e-05
        var whole = 2.0
        var tags = ["a", "b"]
        var lines: [[Int8]] = [[-1], []]
        var nested = ["x": true]
        var note: String? = nil
    }

    @Test func aValueEncodesAsJSONDecodesIt() throws {
        let order = Order()
        let text = try JSONValue.encoding(order).text
        #expect(text == #"{"id": 18446744073709551615, "name": "Ada \"quoted\" \#u{E9}\n", "price": 1.1, "ratio": 0.1, "small": 1e-05, "whole": 2, "tags": ["a", "b"], "lines": [[-1], []], "nested": {"x": true}}"#)
        #expect(try value(text).decode(Order.self) == order)
        var noted = order
        noted.note = "n"
        #expect(try JSONValue.encoding(noted).text.hasSuffix(#", "note": "n"}"#))
        #expect(try JSONValue.encoding([1, nil, 3] as [Int?]).text == "[1, null, 3]")
        #expect(try JSONValue.encoding("text").text == #""text""#)
    }

    @Test func aNumberJSONCannotHoldIsNamedWithItsPath() {
        struct Reading: Encodable { var values: [Double] }
        do {
            _ = try JSONValue.encoding(Reading(values: [1, .nan]))
            Issue.record("nan encoded")
        } catch EncodingError.invalidValue(_, let context) {
            #expect(context.codingPath.map(\.stringValue) == ["values", "Index 1"])
            #expect(context.debugDescription == "nan has no JSON number")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func aJSONBodyIsSentWithItsType() async throws {
        let server = try TestServer()
        let session = Session()
        defer { session.shutdown() }
        var description = RequestDescription(method: .post, url: server.url("/echo"))
        try description.setJSONBody(["name": "af"])
        _ = try await session.request(description).serializingData()
        var request = try #require(server.requests(to: "/echo").last)
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"name": "af"}"#)
        #expect(request.header("Content-Type") == "application/json")
        description = RequestDescription(method: .put, url: server.url("/echo"), headers: [HTTPHeader(name: .contentType, value: "application/vnd.af+json")])
        try description.setJSONBody([1, 2])
        _ = try await session.request(description).serializingData()
        request = try #require(server.requests(to: "/echo").last)
        #expect(String(decoding: request.body, as: UTF8.self) == "[1, 2]")
        #expect(request.headers.filter { $0.name.lowercased() == "content-type" }.map(\.value) == ["application/vnd.af+json"])
    }
}
