import Foundation

/// JSON parsing for assertions (Foundation is fine in tests).
public enum JSONHelpers {
    /// Parses JSON text into Foundation values; nil when it is not JSON.
    public static func parse(_ text: String) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    /// Parses a JSON object.
    public static func object(_ text: String) -> [String: Any]? {
        parse(text) as? [String: Any]
    }
}
