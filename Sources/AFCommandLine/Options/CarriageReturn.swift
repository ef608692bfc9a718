/// A script saved with Windows line endings (CRLF) runs under bash with a carriage return at
/// the end of every line, which the shell keeps in the line's last word: `af post URL
/// name=ada` sent `{"name": "ada\r"}`, `-o out.json` wrote a file whose name ends in CR, and
/// `--follow` was an unknown option. The last word of a command line that ends so is a usage
/// error that says why, unless it is the URL (whose parser drops trailing white space).
enum CarriageReturn {
    /// What the message adds after naming the word.
    static let advice = " ends with a carriage return (\\r), as the last word of each line does in a script saved with Windows line endings (CRLF); "
        + "convert the script to Unix line endings (dos2unix SCRIPT)"

    /// The message for `arguments`' last word when it is an option, or an option's value,
    /// and ends with a carriage return; `valueOf` is the option whose value the last word
    /// became (a credential's is not quoted; one given after `=` or in a cluster is quoted
    /// with its option, as the word was typed).
    static func lastWordMessage(_ arguments: [String], valueOf option: ParsedOption?) -> String? {
        guard let last = arguments.last, last.utf8.last == 13 else { return nil }
        if let option {
            if OptionTable.secretOptions.contains(option.spec.id) { return "the value of \(option.spelling)" + advice }
            return last.hasPrefix("-") ? "'\(Quote.argument(last))'" + advice
                : "the value of \(option.spelling), '\(Quote.argument(last))'," + advice
        }
        return last.hasPrefix("-") && last != "-" ? "'\(Quote.argument(last))'" + advice : nil
    }

    /// The message for `item`, the command line's last, when it ends with a carriage return.
    /// A header's value that ends so has a message of its own, which names `$(cat FILE)` too.
    static func itemMessage(_ item: SourcedItem) -> String? {
        if case .header = item.item { return nil }
        return item.argument.utf8.last == 13 ? "request item '\(Quote.argument(item.argument))'" + advice : nil
    }
}
