/// ANSI colours for each kind of output element.
struct Theme: Sendable {
    var method: String
    var url: String
    var version: String
    var statusSuccess: String
    var statusRedirect: String
    var statusError: String
    var headerName: String
    var headerValue: String
    var key: String
    var string: String
    var number: String
    var boolean: String
    var null: String
    var punctuation: String
    var escape: String
    var note: String
    static let reset = "\u{1b}[0m"

    /// A theme for `--style`.
    static func named(_ style: Settings.Style) -> Theme {
        switch style {
        case .auto: return auto
        case .solarized: return solarized
        case .monokai: return monokai
        }
    }

    /// The terminal's own 16 colours.
    static let auto = Theme(
        method: "\u{1b}[1;32m", url: "\u{1b}[36m", version: "\u{1b}[34m",
        statusSuccess: "\u{1b}[1;32m", statusRedirect: "\u{1b}[1;33m", statusError: "\u{1b}[1;31m",
        headerName: "\u{1b}[36m", headerValue: "", key: "\u{1b}[34m", string: "\u{1b}[33m",
        number: "\u{1b}[35m", boolean: "\u{1b}[36m", null: "\u{1b}[90m", punctuation: "",
        escape: "\u{1b}[7m", note: "\u{1b}[90m"
    )

    static let solarized = Theme(
        method: "\u{1b}[1;38;5;64m", url: "\u{1b}[38;5;37m", version: "\u{1b}[38;5;33m",
        statusSuccess: "\u{1b}[1;38;5;64m", statusRedirect: "\u{1b}[1;38;5;136m", statusError: "\u{1b}[1;38;5;160m",
        headerName: "\u{1b}[38;5;33m", headerValue: "\u{1b}[38;5;245m", key: "\u{1b}[38;5;33m", string: "\u{1b}[38;5;37m",
        number: "\u{1b}[38;5;125m", boolean: "\u{1b}[38;5;166m", null: "\u{1b}[38;5;166m", punctuation: "\u{1b}[38;5;245m",
        escape: "\u{1b}[7m", note: "\u{1b}[38;5;245m"
    )

    static let monokai = Theme(
        method: "\u{1b}[1;38;5;148m", url: "\u{1b}[38;5;81m", version: "\u{1b}[38;5;141m",
        statusSuccess: "\u{1b}[1;38;5;148m", statusRedirect: "\u{1b}[1;38;5;186m", statusError: "\u{1b}[1;38;5;197m",
        headerName: "\u{1b}[38;5;81m", headerValue: "\u{1b}[38;5;231m", key: "\u{1b}[38;5;197m", string: "\u{1b}[38;5;186m",
        number: "\u{1b}[38;5;141m", boolean: "\u{1b}[38;5;81m", null: "\u{1b}[38;5;81m", punctuation: "\u{1b}[38;5;231m",
        escape: "\u{1b}[7m", note: "\u{1b}[38;5;242m"
    )

    /// `text` in `color`, or plain when `color` is empty.
    static func paint(_ text: String, _ color: String) -> String {
        color.isEmpty ? text : color + text + reset
    }
}
