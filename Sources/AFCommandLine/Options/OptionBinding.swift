import AFEngine

/// What an option's value is and where it goes in `Settings`: the typed half of an option's
/// one declaration. The parser validates with it, `Settings.apply` stores with it, and the
/// help text shows the default and range it declares.
///
/// The factories take their `Settings` field as an autoclosure: a key path literal is made
/// (`swift_getKeyPath`, about 26 k instructions each, most of it demangling the types in its
/// pattern) only when an option that stores through it is used, not for every option of the
/// table at every start (33 of them were: 0.87 M of a fresh HTTPS GET's 31 M instructions).
struct OptionBinding: Sendable {
    /// The kind of value, for messages, help and the option-model tests.
    enum Kind: Sendable, Equatable {
        case flag
        /// A whole number in a range.
        case count(ClosedRange<Int>)
        /// A duration in seconds, 0 to `Settings.maximumSeconds` (above 0 when `positive`).
        case seconds(positive: Bool)
        /// A size in bytes (`512K`, `10M`).
        case size
        /// One of fixed choices (case-insensitive).
        case choice([String])
        /// Free text; `nonEmpty` refuses "".
        case text(nonEmpty: Bool)
        /// Text checked by its own rule.
        case validated
    }

    let kind: Kind
    /// The default as help shows it, read from `Settings()` when docs ask, when the option
    /// has one worth showing.
    var defaultText: String? { defaultValue.map { $0(Settings()) } }
    private let defaultValue: (@Sendable (Settings) -> String)?
    /// A value the parser accepts, for the tests that walk every option.
    let sample: String?
    let store: @Sendable (inout Settings, ParsedOption) throws(CommandFailure) -> Void
    /// What `--no-NAME` puts back to its default, for an option with a value: what the option
    /// sets. Empty for flags (their binding reads the negation) and for options that have no
    /// `--no-` form.
    let resets: [Reset]
    /// Whether each occurrence adds a value (`--pin-cert A --pin-cert B`) rather than replacing
    /// the one before.
    let accumulates: Bool

    /// One value `--no-NAME` restores.
    struct Reset: Sendable {
        let restore: @Sendable (inout Settings) -> Void

        /// The field back to its value in `Settings()`.
        static func field<T>(_ path: @autoclosure @escaping @Sendable () -> WritableKeyPath<Settings.Values, T>) -> Reset {
            Reset { settings in
                let path = path()
                settings[dynamicMember: path] = Settings.defaults[keyPath: path]
            }
        }
    }

    private init(
        kind: Kind, defaultValue: (@Sendable (Settings) -> String)?, sample: String?, resets: [Reset] = [], accumulates: Bool = false,
        store: @escaping @Sendable (inout Settings, ParsedOption) throws(CommandFailure) -> Void
    ) {
        self.kind = kind
        self.defaultValue = defaultValue
        self.sample = sample
        self.resets = resets
        self.accumulates = accumulates
        self.store = store
    }

    /// `(default 4; 0 to 16)`, for help and the man page; empty when there is nothing to say.
    var note: String {
        guard let defaultText else { return "" }
        if case .count(let range) = kind, range != 0...Settings.maximumCount {
            return " (default \(defaultText); \(range.lowerBound) to \(range.upperBound))"
        }
        return " (default \(defaultText))"
    }

    /// Applies a parsed occurrence.
    func apply(_ option: ParsedOption, to settings: inout Settings) throws(CommandFailure) {
        try store(&settings, option)
    }

    /// A flag: on, or off with `--no-NAME`.
    static func flag(_ path: @autoclosure @escaping @Sendable () -> WritableKeyPath<Settings.Values, Bool>) -> OptionBinding {
        OptionBinding(kind: .flag, defaultValue: nil, sample: nil) { settings, option throws(CommandFailure) in settings[dynamicMember: path()] = !option.negated }
    }

    /// A whole number in `range`.
    static func count(_ path: @autoclosure @escaping @Sendable () -> WritableKeyPath<Settings.Values, Int>, _ range: ClosedRange<Int> = 0...Settings.maximumCount) -> OptionBinding {
        OptionBinding(kind: .count(range), defaultValue: { "\($0[dynamicMember: path()])" }, sample: "\(range.lowerBound)", resets: [.field(path())]) { settings, option throws(CommandFailure) in
            settings[dynamicMember: path()] = try Settings.count(option.value ?? "", option.spelling, range: range)
        }
    }

    /// A duration with a default.
    static func seconds(_ path: @autoclosure @escaping @Sendable () -> WritableKeyPath<Settings.Values, Double>) -> OptionBinding {
        OptionBinding(kind: .seconds(positive: false), defaultValue: { settings in
            let seconds = settings[dynamicMember: path()]
            return seconds == seconds.rounded() ? "\(Int(seconds))" : Format.decimal(seconds, places: 1)
        }, sample: "1", resets: [.field(path())]) {
            settings, option throws(CommandFailure) in settings[dynamicMember: path()] = try Settings.seconds(option.value ?? "", option.spelling)
        }
    }

    /// A duration that is off unless given; `positive` refuses 0.
    static func seconds(_ path: @autoclosure @escaping @Sendable () -> WritableKeyPath<Settings.Values, Double?>, positive: Bool) -> OptionBinding {
        OptionBinding(kind: .seconds(positive: positive), defaultValue: nil, sample: "1", resets: [.field(path())]) { settings, option throws(CommandFailure) in
            let value = option.value ?? ""
            settings[dynamicMember: path()] = positive ? try Settings.positiveSeconds(value, option.spelling) : try Settings.seconds(value, option.spelling)
        }
    }

    /// A size in bytes.
    static func size(_ path: @autoclosure @escaping @Sendable () -> WritableKeyPath<Settings.Values, Int64?>) -> OptionBinding {
        OptionBinding(kind: .size, defaultValue: nil, sample: "1K", resets: [.field(path())]) { settings, option throws(CommandFailure) in
            settings[dynamicMember: path()] = try Settings.size(option.value ?? "", option.spelling)
        }
    }

    /// Text, kept as given; `nonEmpty` refuses "".
    static func text(_ path: @autoclosure @escaping @Sendable () -> WritableKeyPath<Settings.Values, String?>, nonEmpty: Bool = true, sample: String = "x") -> OptionBinding {
        OptionBinding(kind: .text(nonEmpty: nonEmpty), defaultValue: nil, sample: sample, resets: [.field(path())]) { settings, option throws(CommandFailure) in
            let value = option.value ?? ""
            settings[dynamicMember: path()] = nonEmpty ? try Settings.nonEmpty(value, option.spelling) : value
        }
    }

    /// Repeatable non-empty text, each occurrence added.
    static func texts(_ path: @autoclosure @escaping @Sendable () -> WritableKeyPath<Settings.Values, [String]>, sample: String = "x") -> OptionBinding {
        OptionBinding(kind: .text(nonEmpty: true), defaultValue: nil, sample: sample, resets: [.field(path())], accumulates: true) { settings, option throws(CommandFailure) in
            settings[dynamicMember: path()].append(try Settings.nonEmpty(option.value ?? "", option.spelling))
        }
    }

    /// One of an enumeration's raw values.
    static func choice<T: RawRepresentable & CaseIterable & Sendable>(
        _ path: @autoclosure @escaping @Sendable () -> WritableKeyPath<Settings.Values, T>, _ type: T.Type
    ) -> OptionBinding where T.RawValue == String {
        OptionBinding(kind: .choice(T.allCases.map(\.rawValue)), defaultValue: nil, sample: T.allCases.first?.rawValue, resets: [.field(path())]) { settings, option throws(CommandFailure) in
            settings[dynamicMember: path()] = try chosen(option, T.self, otherwise: nil)
        }
    }

    /// One of an enumeration's raw values, for an option that is off unless given.
    /// `otherwise` is said after the choices when the value is none of them: what the letter
    /// means in curl, where it takes other values.
    static func choice<T: RawRepresentable & CaseIterable & Sendable>(
        _ path: @autoclosure @escaping @Sendable () -> WritableKeyPath<Settings.Values, T?>, _ type: T.Type, otherwise: String? = nil
    ) -> OptionBinding where T.RawValue == String {
        OptionBinding(kind: .choice(T.allCases.map(\.rawValue)), defaultValue: nil, sample: T.allCases.first?.rawValue, resets: [.field(path())]) { settings, option throws(CommandFailure) in
            settings[dynamicMember: path()] = try chosen(option, T.self, otherwise: otherwise)
        }
    }

    private static func chosen<T: RawRepresentable>(_ option: ParsedOption, _ type: T.Type, otherwise: String?) throws(CommandFailure) -> T
        where T.RawValue == String
    {
        do throws(CommandFailure) {
            return try Settings.choice(option.value ?? "", option.spelling, T.self)
        } catch {
            guard let otherwise else { throw error }
            throw CommandFailure(error.message + "; " + otherwise, exitCode: error.exitCode)
        }
    }

    /// Anything else: a value with a rule of its own, or an option that sets several things.
    /// `resets` names what it sets, for its `--no-NAME` form (none: it has no such form).
    static func custom(
        _ kind: Kind = .validated, sample: String?, resets: [Reset] = [],
        _ store: @escaping @Sendable (inout Settings, ParsedOption) throws(CommandFailure) -> Void
    ) -> OptionBinding {
        OptionBinding(kind: kind, defaultValue: nil, sample: sample, resets: resets, store: store)
    }
}
