import AFEngine

/// Options set by an earlier layer (the config file; a batch's options for its lines): a later
/// layer's conflicting option overrides them, and messages say which came from the config
/// file (`Values.configured`).
extension Settings {
    /// Undoes each option an earlier layer set (`inherited`: the config file's, or a batch's
    /// own for its lines) that an option the later layer gave (`later`) would conflict with
    /// (`OptionTable.conflicts`): `--json` on the command line over a configured `--form`, a
    /// line's `--json` over `af batch --form`, as a later option overrides an earlier one.
    /// Two such options of one layer stay a conflict.
    mutating func undoConflicts(inherited: Set<OptionID>, later: Set<OptionID>) throws(CommandFailure) {
        guard !inherited.isEmpty, !later.isEmpty else { return }
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
    static func names(_ message: String, option long: String) -> Bool {
        let name = Array(("--" + long).utf8)
        let bytes = Array(message.utf8)
        guard bytes.count >= name.count else { return false }
        for start in 0...(bytes.count - name.count) where bytes[start..<(start + name.count)].elementsEqual(name) {
            let end = start + name.count
            guard end < bytes.count else { return true }
            let next = bytes[end]
            let continues = (next >= UInt8(ascii: "a") && next <= UInt8(ascii: "z")) || (next >= UInt8(ascii: "0") && next <= UInt8(ascii: "9")) || next == UInt8(ascii: "-")
            if !continues { return true }
        }
        return false
    }
}
