//! The export's output formats, written from the part file (one raw message record a line) in
//! one streaming pass: memory stays that of one message whatever the room's size.

use std::borrow::Cow;
use std::io::{self, BufRead, Write};

use serde::Deserialize;
use serde_json::value::RawValue;

/// A message record as the renderers read it: borrowed from the line (no copy of a text
/// without escapes), the lists kept as their JSON text until needed.
#[derive(Deserialize)]
struct ChatMessage<'a> {
    #[serde(rename = "_id", borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    created: Option<Cow<'a, str>>,
    #[serde(rename = "chatRoom", borrow, default)]
    chat_room: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    channel: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    user: Option<Author<'a>>,
    #[serde(rename = "actionButtons", borrow, default)]
    action_buttons: Option<&'a RawValue>,
    #[serde(borrow, default)]
    file: Option<File<'a>>,
    #[serde(borrow, default)]
    likes: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Author<'a> {
    #[serde(rename = "_id", borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    username: Option<Cow<'a, str>>,
    #[serde(rename = "uniqueUserIdentifier", borrow, default)]
    unique_user_identifier: Option<&'a RawValue>,
    #[serde(rename = "isModerator", default)]
    is_moderator: Option<bool>,
}

#[derive(Deserialize)]
struct File<'a> {
    #[serde(borrow, default)]
    url: Option<Cow<'a, str>>,
    #[serde(rename = "fileName", borrow, default)]
    file_name: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Button<'a> {
    #[serde(rename = "displayText", borrow, default)]
    display_text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    payload: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    url: Option<Cow<'a, str>>,
}

/// A list's JSON text, unless absent, null or empty.
fn list_text(raw: Option<&RawValue>) -> Option<&str> {
    raw.map(RawValue::get)
        .filter(|t| !matches!(t.trim(), "" | "null" | "[]" | "{}"))
}

impl<'a> ChatMessage<'a> {
    fn buttons(&'a self) -> Vec<Button<'a>> {
        list_text(self.action_buttons)
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or_default()
    }
}

/// An output format of `roomchat export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Jsonl,
    Json,
    Csv,
    Txt,
    Html,
}

impl Format {
    pub const NAMES: [&'static str; 5] = ["jsonl", "json", "csv", "txt", "html"];

    pub fn parse(name: &str) -> Option<Format> {
        Some(match name {
            "jsonl" => Format::Jsonl,
            "json" => Format::Json,
            "csv" => Format::Csv,
            "txt" => Format::Txt,
            "html" => Format::Html,
            _ => return None,
        })
    }

    /// The file name extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Jsonl => "jsonl",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Txt => "txt",
            Format::Html => "html",
        }
    }
}

/// What the transcript's heading says.
pub struct Heading<'a> {
    pub room: &'a str,
    pub room_name: Option<&'a str>,
    pub channel: Option<&'a str>,
    pub messages: u64,
    pub exported_at: &'a str,
}

/// Writes the part file's records (`lines`) to `out` in `format` (not `Jsonl`: that is the
/// part file itself).
pub fn render(
    format: Format,
    lines: impl BufRead,
    out: &mut impl Write,
    heading: &Heading<'_>,
) -> io::Result<()> {
    match format {
        Format::Jsonl => {
            for line in lines.lines() {
                writeln!(out, "{}", line?)?;
            }
            Ok(())
        }
        Format::Json => {
            out.write_all(b"[")?;
            let mut first = true;
            for line in lines.lines() {
                let line = line?;
                out.write_all(if first { b"\n" } else { b",\n" })?;
                first = false;
                out.write_all(line.as_bytes())?;
            }
            out.write_all(b"\n]\n")
        }
        Format::Csv => {
            let mut writer = csv::Writer::from_writer(out);
            writer.write_record(CSV_COLUMNS)?;
            for line in lines.lines() {
                let line = line?;
                writer.write_record(csv_row(&decode(&line)?).iter().map(|c| c.as_bytes()))?;
            }
            writer.flush()
        }
        Format::Txt => {
            let title = title(heading);
            writeln!(out, "{title}")?;
            writeln!(out, "{}", "=".repeat(title.chars().count()))?;
            writeln!(
                out,
                "{} messages, exported {}\n",
                heading.messages, heading.exported_at
            )?;
            for line in lines.lines() {
                let line = line?;
                txt_message(out, &decode(&line)?)?;
            }
            Ok(())
        }
        Format::Html => {
            html_head(out, heading)?;
            for line in lines.lines() {
                let line = line?;
                html_message(out, &decode(&line)?)?;
            }
            out.write_all(HTML_TAIL.as_bytes())
        }
    }
}

fn decode(line: &str) -> io::Result<ChatMessage<'_>> {
    serde_json::from_str(line).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

fn title(heading: &Heading<'_>) -> String {
    let room = match heading.room_name {
        Some(name) if !name.is_empty() => format!("{name} ({})", heading.room),
        _ => heading.room.to_owned(),
    };
    match heading.channel {
        Some(channel) => format!("Room {room}, channel {channel}"),
        None => format!("Room {room}"),
    }
}

const CSV_COLUMNS: [&str; 13] = [
    "id",
    "created",
    "chatRoom",
    "channel",
    "userId",
    "username",
    "uniqueUserIdentifier",
    "isModerator",
    "message",
    "fileUrl",
    "fileName",
    "actionButtons",
    "likes",
];

fn csv_row<'a>(m: &'a ChatMessage<'a>) -> [Cow<'a, str>; 13] {
    let user = m.user.as_ref();
    let text = |v: &'a Option<Cow<'a, str>>| v.as_deref().map_or(Cow::Borrowed(""), Cow::Borrowed);
    let uid = match user
        .and_then(|u| u.unique_user_identifier)
        .map(RawValue::get)
    {
        None | Some("null") => Cow::Borrowed(""),
        Some(t) if t.starts_with('"') => serde_json::from_str::<String>(t)
            .map(Cow::Owned)
            .unwrap_or(Cow::Borrowed(t)),
        Some(t) => Cow::Borrowed(t),
    };
    let empty = Cow::Borrowed("");
    [
        text(&m.id),
        text(&m.created),
        text(&m.chat_room),
        text(&m.channel),
        user.map_or(empty.clone(), |u| text(&u.id)),
        user.map_or(empty.clone(), |u| text(&u.username)),
        uid,
        user.and_then(|u| u.is_moderator)
            .map_or(empty.clone(), |b| {
                Cow::Borrowed(if b { "true" } else { "false" })
            }),
        text(&m.message),
        m.file.as_ref().map_or(empty.clone(), |f| text(&f.url)),
        m.file
            .as_ref()
            .map_or(empty.clone(), |f| text(&f.file_name)),
        list_text(m.action_buttons).map_or(empty.clone(), Cow::Borrowed),
        list_text(m.likes).map_or(empty, Cow::Borrowed),
    ]
}

/// `2024-01-15T15:21:44.293Z` as `2024-01-15 15:21:44 UTC`; anything else as it is.
pub fn readable_time(created: &str) -> Cow<'_, str> {
    let b = created.as_bytes();
    if b.len() >= 19 && b[10] == b'T' && created.ends_with('Z') && created.is_char_boundary(19) {
        Cow::Owned(format!("{} {} UTC", &created[..10], &created[11..19]))
    } else {
        Cow::Borrowed(created)
    }
}

fn author<'a>(m: &'a ChatMessage<'a>) -> (&'a str, &'static str) {
    let user = m.user.as_ref();
    let name = user.and_then(|u| u.username.as_deref()).unwrap_or("?");
    let role = if name == "system" && user.and_then(|u| u.is_moderator) == Some(true) {
        "system"
    } else if list_text(m.action_buttons).is_some() {
        "bot"
    } else if user.and_then(|u| u.is_moderator) == Some(true) {
        "moderator"
    } else {
        ""
    };
    (name, role)
}

fn button_label<'a>(b: &'a Button<'a>) -> &'a str {
    b.display_text
        .as_deref()
        .or(b.payload.as_deref())
        .or(b.url.as_deref())
        .unwrap_or("button")
}

fn txt_message(out: &mut impl Write, m: &ChatMessage<'_>) -> io::Result<()> {
    let (name, role) = author(m);
    let when = readable_time(m.created.as_deref().unwrap_or(""));
    let role = if role.is_empty() {
        String::new()
    } else {
        format!(" ({role})")
    };
    let text = m.message.as_deref().unwrap_or("");
    // Continuation lines indented, so that a message cannot pass for another.
    let text = if text.contains('\n') {
        Cow::Owned(text.replace('\n', "\n    "))
    } else {
        Cow::Borrowed(text)
    };
    writeln!(out, "[{when}] {name}{role}: {text}")?;
    if let Some(file) = &m.file {
        writeln!(
            out,
            "    [file: {} {}]",
            file.file_name.as_deref().unwrap_or(""),
            file.url.as_deref().unwrap_or("")
        )?;
    }
    let buttons = m.buttons();
    if !buttons.is_empty() {
        let labels: Vec<String> = buttons
            .iter()
            .map(|b| format!("[{}]", button_label(b)))
            .collect();
        writeln!(out, "    buttons: {}", labels.join(" "))?;
    }
    Ok(())
}

/// Escapes text for HTML content and attribute values (borrowed when nothing
/// needs it, which is most messages; core's [`roomchat::escape_html`] otherwise).
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.contains(['&', '<', '>', '"', '\'']) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(roomchat::escape_html(text))
}

/// A link target only when it is http(s): never `javascript:` or `data:`.
fn safe_url(url: &str) -> Option<String> {
    let lower = url.trim_start().to_ascii_lowercase();
    (lower.starts_with("https://") || lower.starts_with("http://"))
        .then(|| escape(url.trim()).into_owned())
}

const HTML_STYLE: &str = r#"
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1d1d1f; --muted: #6e6e73; --card: #f5f5f7;
  --line: #d2d2d7; --accent: #0066cc; --badge: #e8e8ed; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #16161a; --fg: #f2f2f7; --muted: #a1a1a6; --card: #232328; --line: #3a3a40;
    --accent: #4da3ff; --badge: #34343a; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 52rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
header.page h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
header.page p { color: var(--muted); margin: 0 0 1.5rem; }
article.msg { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: .6rem .9rem; margin: 0 0 .6rem; }
article.msg header { display: flex; gap: .5rem; align-items: baseline; flex-wrap: wrap; }
.author { font-weight: 600; }
.badge { font-size: .75rem; background: var(--badge); border-radius: 6px; padding: 0 .4rem; color: var(--muted); }
time { color: var(--muted); font-size: .85rem; margin-left: auto; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; margin-top: .2rem; }
.file a, .file span { color: var(--accent); }
.buttons { display: flex; gap: .4rem; flex-wrap: wrap; margin-top: .4rem; }
.button { border: 1px solid var(--accent); color: var(--accent); border-radius: 999px;
  padding: .1rem .7rem; font-size: .85rem; text-decoration: none; }
"#;

const HTML_TAIL: &str = "</main>\n</body>\n</html>\n";

fn html_head(out: &mut impl Write, heading: &Heading<'_>) -> io::Result<()> {
    let title = escape(&title(heading)).into_owned();
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src https: http: data:\">\n\
         <title>{title}</title>\n<style>{HTML_STYLE}</style>\n</head>\n<body>\n<main>\n\
         <header class=\"page\"><h1>{title}</h1><p>{} messages, exported {}</p></header>\n",
        heading.messages,
        escape(heading.exported_at)
    )
}

fn html_message(out: &mut impl Write, m: &ChatMessage<'_>) -> io::Result<()> {
    let (name, role) = author(m);
    let created = m.created.as_deref().unwrap_or("");
    write!(
        out,
        "<article class=\"msg\" id=\"m-{}\"><header><span class=\"author\">{}</span>",
        escape(m.id.as_deref().unwrap_or("")),
        escape(name)
    )?;
    if !role.is_empty() {
        write!(out, "<span class=\"badge\">{role}</span>")?;
    }
    if let Some(channel) = &m.channel {
        write!(out, "<span class=\"badge\">#{}</span>", escape(channel))?;
    }
    write!(
        out,
        "<time datetime=\"{}\">{}</time></header>\n<div class=\"text\">{}</div>",
        escape(created),
        escape(&readable_time(created)),
        escape(m.message.as_deref().unwrap_or(""))
    )?;
    if let Some(file) = &m.file {
        let label = escape(file.file_name.as_deref().unwrap_or("file"));
        match file.url.as_deref().and_then(safe_url) {
            Some(url) => write!(
                out,
                "\n<div class=\"file\">📎 <a href=\"{url}\" rel=\"noopener noreferrer\">{label}</a></div>"
            )?,
            None => write!(out, "\n<div class=\"file\">📎 <span>{label}</span></div>")?,
        }
    }
    let buttons = m.buttons();
    if !buttons.is_empty() {
        out.write_all(b"\n<div class=\"buttons\">")?;
        for b in &buttons {
            let label = escape(button_label(b));
            match b.url.as_deref().and_then(safe_url) {
                Some(url) => write!(
                    out,
                    "<a class=\"button\" href=\"{url}\" rel=\"noopener noreferrer\">{label}</a>"
                )?,
                None => write!(out, "<span class=\"button\">{label}</span>")?,
            }
        }
        out.write_all(b"</div>")?;
    }
    out.write_all(b"</article>\n")
}
