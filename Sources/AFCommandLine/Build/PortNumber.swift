/// A TCP port as the command line takes it in `--resolve` and `--proxy`: decimal digits
/// only (no sign, no spaces), 1 to 65535.
enum PortNumber {
    /// The port `text` names, or nil.
    static func parse(_ text: some StringProtocol) -> Int? {
        let digits = text.utf8
        guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let number = Int(String(text)), (1...65535).contains(number)
        else { return nil }
        return number
    }

    /// What the error says of `text` when `parse` refuses it.
    static func refusal(_ text: some StringProtocol) -> String {
        "'\(Quote.argument(String(text)))' is not a port from 1 to 65535"
    }
}
