//! The export's output formats, rendered from the part file's records (one raw message record
//! a line) as they come: the opening, each record, the closing ([`Renderer`]). Memory stays
//! that of one message whatever the room's size.

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

/// What the transcript's title (its first lines) says: known before the first message.
pub struct Title<'a> {
    pub room: &'a str,
    pub room_name: Option<&'a str>,
    pub channel: Option<&'a str>,
}

/// What the transcript's footer (its last lines) says: known once the last message is written.
pub struct Footer<'a> {
    pub messages: u64,
    pub exported_at: &'a str,
}

/// Where a [`Renderer`] writes, by format: the output itself, or (CSV) a CSV writer over it.
enum Sink<W: Write> {
    Jsonl(W),
    Json(W),
    Csv(Box<csv::Writer<W>>),
    Txt(W),
    Html(W),
}

/// The one renderer of every format, in three pieces: [`Renderer::begin`] writes the opening
/// (JSON's `[`, CSV's header row, the transcript's title), [`Renderer::record`] one part-file
/// line, [`Renderer::end`] the closing (the transcript's footer). The export renders while it
/// fetches (what the part file held already, then each page's lines as they are written to
/// it), through these pieces only.
pub struct Renderer<W: Write> {
    sink: Sink<W>,
    /// Records written so far (JSON: whether the next needs a comma).
    records: u64,
}

impl<W: Write> Renderer<W> {
    /// Writes `format`'s opening to `out`.
    pub fn begin(format: Format, mut out: W, title: &Title<'_>) -> io::Result<Self> {
        let sink = match format {
            Format::Jsonl => Sink::Jsonl(out),
            Format::Json => {
                out.write_all(b"[")?;
                Sink::Json(out)
            }
            Format::Csv => {
                let mut writer = csv::Writer::from_writer(out);
                writer.write_record(CSV_COLUMNS)?;
                Sink::Csv(Box::new(writer))
            }
            Format::Txt => {
                let title = title_text(title);
                out.write_all(title.as_bytes())?;
                out.write_all(b"\n")?;
                out.write_all("=".repeat(title.chars().count()).as_bytes())?;
                out.write_all(b"\n\n")?;
                Sink::Txt(out)
            }
            Format::Html => {
                html_head(&mut out, title)?;
                Sink::Html(out)
            }
        };
        Ok(Renderer { sink, records: 0 })
    }

    /// Writes one record: a line of the part file (without its line end). A line that is not
    /// a record (not UTF-8; not JSON, for the formats that read its fields) is an
    /// `InvalidData` error.
    pub fn record(&mut self, line: &[u8]) -> io::Result<()> {
        self.record_text(text_of(line)?)
    }

    /// [`Renderer::record`] of a line known to be text: JSON read by `from_str`, which need
    /// not check each string's UTF-8 again.
    fn record_text(&mut self, line: &str) -> io::Result<()> {
        let first = self.records == 0;
        self.records += 1;
        match &mut self.sink {
            Sink::Jsonl(out) => {
                out.write_all(line.as_bytes())?;
                out.write_all(b"\n")
            }
            Sink::Json(out) => {
                out.write_all(if first { b"\n" } else { b",\n" })?;
                out.write_all(line.as_bytes())
            }
            Sink::Csv(writer) => {
                let m = decode(line)?;
                writer.write_record(csv_row(&m).iter().map(|c| c.as_bytes()))?;
                Ok(())
            }
            Sink::Txt(out) => txt_message(out, &decode(line)?),
            Sink::Html(out) => html_message(out, &decode(line)?),
        }
    }

    /// Writes every line of `lines` (a part file, or a prefix of one), through one buffer.
    pub fn records(&mut self, mut lines: impl BufRead) -> io::Result<()> {
        let mut line = Vec::with_capacity(4096);
        loop {
            line.clear();
            if lines.read_until(b'\n', &mut line)? == 0 {
                return Ok(());
            }
            self.record(line_of(&line))?;
        }
    }

    /// Writes every line of `chunk` (whole lines, as the part file got them).
    pub fn chunk(&mut self, chunk: &[u8]) -> io::Result<()> {
        // Checked as text once; its lines found by `str::find` (a memchr).
        let mut rest = text_of(chunk)?;
        while !rest.is_empty() {
            let end = rest.find('\n').map_or(rest.len(), |p| p + 1);
            let (line, more) = rest.split_at(end);
            let line = line.strip_suffix('\n').unwrap_or(line);
            self.record_text(line.strip_suffix('\r').unwrap_or(line))?;
            rest = more;
        }
        Ok(())
    }

    /// Writes what is buffered to the output (then flushes it).
    pub fn flush(&mut self) -> io::Result<()> {
        match &mut self.sink {
            Sink::Csv(writer) => writer.flush(),
            Sink::Jsonl(out) | Sink::Json(out) | Sink::Txt(out) | Sink::Html(out) => out.flush(),
        }
    }

    /// The output (what was flushed is in it).
    pub fn get_ref(&self) -> &W {
        match &self.sink {
            Sink::Csv(writer) => writer.get_ref(),
            Sink::Jsonl(out) | Sink::Json(out) | Sink::Txt(out) | Sink::Html(out) => out,
        }
    }

    /// Writes the format's closing (the transcript's footer), flushes; the output.
    pub fn end(self, footer: &Footer<'_>) -> io::Result<W> {
        let mut out = match self.sink {
            Sink::Jsonl(out) => out,
            Sink::Json(mut out) => {
                out.write_all(b"\n]\n")?;
                out
            }
            Sink::Csv(writer) => writer.into_inner().map_err(|e| e.into_error())?,
            Sink::Txt(mut out) => {
                writeln!(
                    out,
                    "\n{} messages, exported {}",
                    footer.messages, footer.exported_at
                )?;
                out
            }
            Sink::Html(mut out) => {
                writeln!(
                    out,
                    "<footer class=\"page\"><p>{} messages, exported {}</p></footer>",
                    footer.messages,
                    escape(footer.exported_at)
                )?;
                out.write_all(HTML_TAIL.as_bytes())?;
                out
            }
        };
        out.flush()?;
        Ok(out)
    }
}

/// The part file's bytes as text (as [`BufRead::lines`] checks them): not UTF-8 is an
/// `InvalidData` error.
fn text_of(bytes: &[u8]) -> io::Result<&str> {
    std::str::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// A line without its line end (`\n` or `\r\n`, as [`BufRead::lines`] drops it).
fn line_of(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Writes the part file's records (`lines`) to `out` in `format`, whole: the opening, every
/// record, the closing (the export renders through the same pieces, page after page).
#[cfg(test)]
pub fn render(
    format: Format,
    lines: impl BufRead,
    out: &mut impl Write,
    title: &Title<'_>,
    footer: &Footer<'_>,
) -> io::Result<()> {
    let mut renderer = Renderer::begin(format, out, title)?;
    renderer.records(lines)?;
    renderer.end(footer).map(drop)
}

fn decode(line: &str) -> io::Result<ChatMessage<'_>> {
    serde_json::from_str(line).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

fn title_text(title: &Title<'_>) -> String {
    let room = match title.room_name {
        Some(name) if !name.is_empty() => format!("{name} ({})", title.room),
        _ => title.room.to_owned(),
    };
    match title.channel {
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

/// The date and the time of day of `2024-01-15T15:21:44.293Z`: `2024-01-15`, `15:21:44`.
fn time_parts(created: &str) -> Option<(&str, &str)> {
    let b = created.as_bytes();
    if b.len() >= 19 && b[10] == b'T' && created.ends_with('Z') && created.is_char_boundary(19) {
        Some((&created[..10], &created[11..19]))
    } else {
        None
    }
}

/// Writes `2024-01-15T15:21:44.293Z` as `2024-01-15 15:21:44 UTC` (anything else as it is),
/// each piece of `created` through `each` (HTML: escaped), with no allocation.
fn write_readable_time<W: Write + ?Sized>(
    out: &mut W,
    created: &str,
    each: impl Fn(&mut W, &str) -> io::Result<()>,
) -> io::Result<()> {
    match time_parts(created) {
        Some((date, time)) => {
            each(out, date)?;
            out.write_all(b" ")?;
            each(out, time)?;
            out.write_all(b" UTC")
        }
        None => each(out, created),
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
    out.write_all(b"[")?;
    write_readable_time(out, m.created.as_deref().unwrap_or(""), |o, t| {
        o.write_all(t.as_bytes())
    })?;
    out.write_all(b"] ")?;
    out.write_all(name.as_bytes())?;
    if !role.is_empty() {
        out.write_all(b" (")?;
        out.write_all(role.as_bytes())?;
        out.write_all(b")")?;
    }
    out.write_all(b": ")?;
    // Continuation lines indented, so that a message cannot pass for another.
    let text = m.message.as_deref().unwrap_or("");
    for (k, piece) in text.split('\n').enumerate() {
        if k > 0 {
            out.write_all(b"\n    ")?;
        }
        out.write_all(piece.as_bytes())?;
    }
    out.write_all(b"\n")?;
    if let Some(file) = &m.file {
        out.write_all(b"    [file: ")?;
        out.write_all(file.file_name.as_deref().unwrap_or("").as_bytes())?;
        out.write_all(b" ")?;
        out.write_all(file.url.as_deref().unwrap_or("").as_bytes())?;
        out.write_all(b"]\n")?;
    }
    let buttons = m.buttons();
    if !buttons.is_empty() {
        out.write_all(b"    buttons:")?;
        for b in &buttons {
            out.write_all(b" [")?;
            out.write_all(button_label(b).as_bytes())?;
            out.write_all(b"]")?;
        }
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Escapes text for HTML content and attribute values (borrowed when nothing
/// needs it, which is most messages; core's [`roomchat::escape_html`] otherwise).
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text
        .bytes()
        .any(|b| matches!(b, b'&' | b'<' | b'>' | b'"' | b'\''))
    {
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
header.page h1 { font-size: 1.4rem; margin: 0 0 1.5rem; }
footer.page p { color: var(--muted); margin: 1.5rem 0 0; }
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

fn html_head(out: &mut impl Write, title: &Title<'_>) -> io::Result<()> {
    let title = escape(&title_text(title)).into_owned();
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src https: http: data:\">\n\
         <title>{title}</title>\n<style>{HTML_STYLE}</style>\n</head>\n<body>\n<main>\n\
         <header class=\"page\"><h1>{title}</h1></header>\n"
    )
}

/// Writes `text` escaped for HTML.
fn put_escaped<W: Write + ?Sized>(out: &mut W, text: &str) -> io::Result<()> {
    out.write_all(escape(text).as_bytes())
}

fn html_message(out: &mut impl Write, m: &ChatMessage<'_>) -> io::Result<()> {
    let (name, role) = author(m);
    let created = m.created.as_deref().unwrap_or("");
    out.write_all(b"<article class=\"msg\" id=\"m-")?;
    put_escaped(out, m.id.as_deref().unwrap_or(""))?;
    out.write_all(b"\"><header><span class=\"author\">")?;
    put_escaped(out, name)?;
    out.write_all(b"</span>")?;
    if !role.is_empty() {
        out.write_all(b"<span class=\"badge\">")?;
        out.write_all(role.as_bytes())?;
        out.write_all(b"</span>")?;
    }
    if let Some(channel) = &m.channel {
        out.write_all(b"<span class=\"badge\">#")?;
        put_escaped(out, channel)?;
        out.write_all(b"</span>")?;
    }
    out.write_all(b"<time datetime=\"")?;
    put_escaped(out, created)?;
    out.write_all(b"\">")?;
    write_readable_time(out, created, put_escaped)?;
    out.write_all(b"</time></header>\n<div class=\"text\">")?;
    put_escaped(out, m.message.as_deref().unwrap_or(""))?;
    out.write_all(b"</div>")?;
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
