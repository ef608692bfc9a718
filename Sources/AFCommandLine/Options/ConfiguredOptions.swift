import AFEngine

/// Options set by an earlier layer (the config file; a batch's options for its lines): a later
/// layer's conflicting option overrides them, and messages say which came from the config
/// file (`Values.configured`).
extension Settings {
    /// Undoes each option an earlier layer set (`inherited`: the config file's, or a batch's
    /// own for its lines) that an option the later layer gave (`options`) would conflict with
    /// (`OptionTable.conflicts`): `--json` on the command line over a configured `--form`, a
    /// line's `--json` over `af batch --form`, as a later option overrides an earlier one.
    /// Two such options of one layer stay a conflict.
    mutating func undoConflicts(inherited: Set<OptionID>, options: [ParsedOption]) throws(CommandFailure) {
        // Nothing to undo on most command lines: no set is made for them.
        guard !inherited.isEmpty, !options.isEmpty else { return }
        let later = Set(options.filter { !$0.negated }.map(\.spec.id))
        for conflict in OptionTable.conflicts {
            for (earlier, given) in [(conflict.first, conflict.second), (conflict.second, conflict.first)]
            where inherited.contains(earlier) && !later.contains(earlier) && later.contains(given) && self.given.contains(earlier) {
                guard let spec = OptionTable.all.first(where: { $0.id == earlier }), spec.negatable else { continue }
                try apply(ParsedOption(spec: spec, value: nil, negated: true, spelling: "--no-" + spec.long))
            }
        }
    }

    /// What an error line that names an option the config file set should add: where that
    /// option came from, since nothing on the command line shows it (`raise --timeout`, when
    /// the config file holds `--timeout=2`). Empty when it names none of them.
    func configNote(for message: String) -> String {
        let configured = self.configured
        guard !configured.isEmpty, let path = self.configPath else { return "" }
        let named = OptionTable.all.filter { configured.contains($0.id) && Self.names(message, option: $0.long) }.map { "--" + $0.long }
        guard let last = named.last else { return "" }
        let list = named.count == 1 ? last : named.dropLast().joined(separator: ", ") + " and " + last
        return " (\(list) \(named.count == 1 ? "comes" : "come") from the config file '\(Quote.argument(path))')"
    }

    /// Whether `message` names `--long` as a whole option name (not the start of a longer one).
    /// The message is cut into runs of the bytes option names are made of (`a`–`z`, `0`–`9`,
    /// `-`); one of them is `--long` itself.
    static func names(_ message: String, option long: String) -> Bool {
        let name = "--" + long
        return message.utf8.split { byte in
            !((byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "-"))
        }.contains { $0.elementsEqual(name.utf8) }
    }
}
