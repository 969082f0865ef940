//! Text the service sent, made safe for where the command line writes it: a
//! spreadsheet cell (no formula runs) and a terminal line (no escape sequence
//! acts). Every CSV the command line writes (`export -f csv`, `--output csv`,
//! the import's result file) and every progress or error line that names a
//! room, a channel or a user goes through here.

use std::borrow::Cow;

/// The characters that make a spreadsheet read a cell as a formula when they
/// begin it (OWASP's "CSV injection": `=`, `+`, `-`, `@`, a tab, a carriage
/// return; a line feed too, which some spreadsheets strip before looking).
const FORMULA_STARTS: [char; 7] = ['=', '+', '-', '@', '\t', '\r', '\n'];

/// A CSV cell that no spreadsheet runs as a formula: a cell beginning with one
/// of `= + - @`, a tab, a carriage return or a line feed gets a leading `'`,
/// as OWASP recommends (the spreadsheet shows the text, the `'` hidden). With
/// `raw` (the `--raw-csv-cells` flag), the cell is left as it is.
///
/// The CSV writer still quotes the cell where CSV needs it; this only decides
/// what the spreadsheet sees inside the quotes.
pub fn csv_cell(text: &str, raw: bool) -> Cow<'_, str> {
    if !raw && text.starts_with(FORMULA_STARTS) {
        Cow::Owned(format!("'{text}"))
    } else {
        Cow::Borrowed(text)
    }
}

/// Text for one line of a terminal or a log: every control character (C0,
/// DEL, C1), and the line and paragraph separators and bidirectional
/// overrides that reorder or break what follows, written as a visible escape
/// (`\u{1b}`), so that a room's name can neither move the cursor, recolour
/// the screen, set the window's title nor start a line of its own.
pub fn terminal_line(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if needs_escape(c) {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formula_cells_get_a_leading_quote_unless_raw() {
        for cell in [
            "=HYPERLINK(\"x\")",
            "+1",
            "-1",
            "@SUM(1+1)*cmd|/c calc!A0",
            "\tx",
            "\rx",
            "\nx",
        ] {
            assert_eq!(csv_cell(cell, false), format!("'{cell}"));
            assert_eq!(csv_cell(cell, true), cell);
        }
        for cell in ["", "ann", "1", " =x", "a=b", "'=x"] {
            assert_eq!(csv_cell(cell, false), cell);
        }
    }

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(terminal_line("room 1"), "room 1");
        assert_eq!(terminal_line("a\u{1b}[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(terminal_line("a\nb\rc"), "a\\u{a}b\\u{d}c");
        assert_eq!(terminal_line("a\u{202e}b\u{2028}"), "a\\u{202e}b\\u{2028}");
        assert_eq!(terminal_line("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(terminal_line("é ü 中"), "é ü 中");
    }
}
