/// Parses a multipart/form-data body back into parts, for assertions.
public struct MultipartPart: Sendable, Equatable {
    public var headers: [String: String]
    public var body: [UInt8]

    /// The `name` parameter of Content-Disposition.
    public var name: String? { parameter("name") }
    /// The `filename` parameter of Content-Disposition.
    public var filename: String? { parameter("filename") }
    public var text: String { String(decoding: body, as: UTF8.self) }

    private func parameter(_ key: String) -> String? {
        guard let disposition = headers["content-disposition"] else { return nil }
        for piece in disposition.split(separator: ";") {
            let pair = piece.trimmingCharacters(in: .whitespaces)
            if pair.hasPrefix(key + "=\"") { return String(pair.dropFirst(key.count + 2).dropLast()) }
        }
        return nil
    }
}

public enum MultipartParser {
    /// The parts of `body` separated by `boundary`, or nil when it is malformed.
    public static func parse(_ body: [UInt8], boundary: String) -> [MultipartPart]? {
        let delimiter = Array("--\(boundary)".utf8)
        var positions: [Int] = []
        var index = 0
        while index + delimiter.count <= body.count {
            if body[index] == delimiter[0], Array(body[index..<(index + delimiter.count)]) == delimiter {
                positions.append(index)
                index += delimiter.count
            } else {
                index += 1
            }
        }
        guard positions.count >= 1 else { return nil }
        var parts: [MultipartPart] = []
        for (number, start) in positions.enumerated() where number + 1 < positions.count {
            var partStart = start + delimiter.count
            guard body[partStart] == 13, body[partStart + 1] == 10 else { return nil }
            partStart += 2
            var partEnd = positions[number + 1]
            guard partEnd >= 2, body[partEnd - 2] == 13, body[partEnd - 1] == 10 else { return nil }
            partEnd -= 2
            let chunk = Array(body[partStart..<partEnd])
            guard let split = indexOf([13, 10, 13, 10], in: chunk) else { return nil }
            let headText = String(decoding: chunk[..<split], as: UTF8.self)
            var headers: [String: String] = [:]
            for line in headText.components(separatedBy: "\r\n") where !line.isEmpty {
                guard let colon = line.firstIndex(of: ":") else { return nil }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            parts.append(MultipartPart(headers: headers, body: Array(chunk[(split + 4)...])))
        }
        let last = positions[positions.count - 1] + delimiter.count
        guard Array(body[last..<min(body.count, last + 2)]) == [45, 45] else { return nil }
        return parts
    }

    private static func indexOf(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where Array(haystack[index..<(index + needle.count)]) == needle {
            return index
        }
        return nil
    }
}

import Foundation
