/// ANSI colours for each kind of output element. A class: output plans, body styles and
/// formatter styles each hold one, and sixteen strings inline made every one of them (and
/// each per-request printer holding them) hundreds of bytes larger.
final class Theme: Sendable {
    let method: String
    let url: String
    let version: String
    let statusSuccess: String
    let statusRedirect: String
    let statusError: String
    let headerName: String
    let headerValue: String
    let key: String
    let string: String
    let number: String
    let boolean: String
    let null: String
    let punctuation: String
    let escape: String
    let note: String

    init(
        method: String,
        url: String,
        version: String,
        statusSuccess: String,
        statusRedirect: String,
        statusError: String,
        headerName: String,
        headerValue: String,
        key: String,
        string: String,
        number: String,
        boolean: String,
        null: String,
        punctuation: String,
        escape: String,
        note: String
    ) {
        self.method = method
        self.url = url
        self.version = version
        self.statusSuccess = statusSuccess
        self.statusRedirect = statusRedirect
        self.statusError = statusError
        self.headerName = headerName
        self.headerValue = headerValue
        self.key = key
        self.string = string
        self.number = number
        self.boolean = boolean
        self.null = null
        self.punctuation = punctuation
        self.escape = escape
        self.note = note
    }

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
