//! Text helpers every generator shares.

/// Appends `text` and a newline.
pub fn line(w: &mut String, text: &str) {
    w.push_str(text);
    w.push('\n');
}

/// `text` as `///` doc lines at `indent`, its line breaks kept (a published doc's
/// wording, line by line; an empty line is a bare `///`).
pub fn doc_lines(w: &mut String, indent: &str, text: &str) {
    for part in text.lines() {
        line(w, format!("{indent}/// {part}").trim_end());
    }
}

/// `text` in lines of at most `width` characters, broken at whitespace (a
/// word longer than `width` stands alone on its line).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        if !current.is_empty() && current.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    if !current.is_empty() || lines.is_empty() {
        lines.push(current);
    }
    lines
}
