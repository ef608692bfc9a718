/// A line that a terminal shows in place, drawn again over itself (`\r`, the line, erase to
/// its end): the batch's progress line and the download bar. It has to fit on one row of
/// the terminal: a longer one wraps, `\r` goes back only to the start of its last row, and
/// each redraw leaves another copy of the rows above.
enum StatusLine {
    /// The first of `forms` (the fullest first) that fits in `columns`, else the last one cut
    /// to fit. The terminal's last column is left empty: some terminals move to the next row
    /// when it is written. Every character these lines use takes one column (ASCII, the
    /// bar's blocks, the spinner's braille).
    static func fitting(_ forms: [String], columns: Int) -> String {
        let room = max(0, columns - 1)
        if let fit = forms.first(where: { $0.unicodeScalars.count <= room }) { return fit }
        guard let last = forms.last else { return "" }
        return String(String.UnicodeScalarView(last.unicodeScalars.prefix(room)))
    }
}
