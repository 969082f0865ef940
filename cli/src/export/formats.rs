//! The export's output formats, rendered from the part file's records (one raw message record
//! a line) as they come: the opening, each record, the closing ([`Renderer`]). Memory stays
//! that of one message whatever the room's size.
//!
//! A record is whatever JSON the service sent, and every valid one renders: each field is read
//! as its JSON text and shown whatever its type (see [`text`], [`created`]); a record that is
//! not an object is shown whole, as the text of a message of no author and no time.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, BufRead, Write};
use std::marker::PhantomData;

use jiff::Timestamp;
use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::time;
use crate::safe_text;

/// A field of a record as the service sent it (its JSON text, `null` included), or `None`
/// when the record has no such key.
type Field<'a> = Option<&'a RawValue>;

/// A field shown as text (see [`text`]), borrowed from the line unless it had escapes;
/// `None` when absent or null.
type Text<'a> = Option<Cow<'a, str>>;

/// A message record as the renderers read it: the fields they show, borrowed from the line.
#[derive(Default)]
struct Message<'a> {
    id: Text<'a>,
    created: Field<'a>,
    chat_room: Text<'a>,
    channel: Text<'a>,
    /// The message's text (a record that is not an object: the record, as compact JSON).
    text: Text<'a>,
    user: Author<'a>,
    action_buttons: Field<'a>,
    file: Option<Attachment<'a>>,
    likes: Field<'a>,
}

/// The author (`user`): its fields when it is an object; anything else is its name.
#[derive(Default)]
struct Author<'a> {
    id: Text<'a>,
    username: Text<'a>,
    unique_user_identifier: Text<'a>,
    is_moderator: Text<'a>,
}

/// The attachment (`file`): its fields when it is an object; anything else is its name.
#[derive(Default)]
struct Attachment<'a> {
    url: Text<'a>,
    file_name: Text<'a>,
}

/// A bot button (an element of `actionButtons`): its fields when it is an object; anything
/// else is its label.
#[derive(Default)]
struct Button<'a> {
    display_text: Text<'a>,
    payload: Text<'a>,
    url: Text<'a>,
}

/// How a record's fields are read. A record is read `Strict`ly first: the types the service
/// documents (strings, a boolean `isModerator`, objects `user` and `file`), each string
/// borrowed as it is parsed, as cheap as a derived struct; any other type fails it. Then,
/// only for such a record, `Lenient`ly: every field taken as its JSON text first
/// ([`RawValue`]), then shown whatever its type ([`text`]): each value scanned twice, some
/// 20% dearer a record, so not for every record.
#[derive(Clone, Copy)]
enum Reading {
    Strict,
    Lenient,
}

/// A record type read from a JSON object's keys (the last of a key given twice wins, as
/// JavaScript's `JSON.parse` reads it; serde's derived structs refuse such a record).
trait Fields<'de>: Default {
    /// Reads the value of `key` when it is a field of the type; skips it otherwise.
    fn field<A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        reading: Reading,
    ) -> Result<(), A::Error>;

    /// The record when the service sent something other than an object: its text.
    fn not_an_object(text: Text<'de>) -> Self;
}

impl<'de> Fields<'de> for Message<'de> {
    fn field<A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        r: Reading,
    ) -> Result<(), A::Error> {
        match key {
            "_id" => self.id = map.next_value_seed(TextSeed(r))?,
            "created" => self.created = map.next_value()?,
            "chatRoom" => self.chat_room = map.next_value_seed(TextSeed(r))?,
            "channel" => self.channel = map.next_value_seed(TextSeed(r))?,
            "message" => self.text = map.next_value_seed(TextSeed(r))?,
            "user" => {
                self.user = map
                    .next_value_seed(ObjectSeed(r, PhantomData))?
                    .unwrap_or_default()
            }
            "actionButtons" => self.action_buttons = map.next_value()?,
            "file" => self.file = map.next_value_seed(ObjectSeed(r, PhantomData))?,
            "likes" => self.likes = map.next_value()?,
            _ => drop(map.next_value::<IgnoredAny>()?),
        }
        Ok(())
    }

    fn not_an_object(text: Text<'de>) -> Self {
        Message {
            text,
            ..Message::default()
        }
    }
}

impl<'de> Fields<'de> for Author<'de> {
    fn field<A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        r: Reading,
    ) -> Result<(), A::Error> {
        match key {
            "_id" => self.id = map.next_value_seed(TextSeed(r))?,
            "username" => self.username = map.next_value_seed(TextSeed(r))?,
            "uniqueUserIdentifier" => {
                self.unique_user_identifier = map.next_value_seed(TextSeed(r))?
            }
            "isModerator" => {
                self.is_moderator = match r {
                    Reading::Strict => map
                        .next_value::<Option<bool>>()?
                        .map(|b| Cow::Borrowed(if b { "true" } else { "false" })),
                    Reading::Lenient => map.next_value_seed(TextSeed(r))?,
                }
            }
            _ => drop(map.next_value::<IgnoredAny>()?),
        }
        Ok(())
    }

    fn not_an_object(username: Text<'de>) -> Self {
        Author {
            username,
            ..Author::default()
        }
    }
}

/// The [`Fields`] of a record type whose fields are all shown as text: `KEY => field`, and
/// the field that a value other than an object fills.
macro_rules! text_fields {
    ($record:ident { $($key:literal => $field:ident),+ } else $scalar:ident) => {
        impl<'de> Fields<'de> for $record<'de> {
            fn field<A: MapAccess<'de>>(
                &mut self,
                key: &str,
                map: &mut A,
                r: Reading,
            ) -> Result<(), A::Error> {
                match key {
                    $($key => self.$field = map.next_value_seed(TextSeed(r))?,)+
                    _ => drop(map.next_value::<IgnoredAny>()?),
                }
                Ok(())
            }

            fn not_an_object(text: Text<'de>) -> Self {
                $record {
                    $scalar: text,
                    ..$record::default()
                }
            }
        }
    };
}

text_fields!(Attachment { "url" => url, "fileName" => file_name } else file_name);
text_fields!(Button {
    "displayText" => display_text,
    "payload" => payload,
    "url" => url
} else display_text);

/// Reads one part-file line. A record that is not an object (a string, an array, a number)
/// is shown whole: the text of a message with no other field, as compact JSON. A line that is
/// not JSON is an `InvalidData` error.
fn decode(line: &str) -> io::Result<Message<'_>> {
    let record = line.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r'));
    if !record.starts_with('{') {
        let whole: &RawValue = serde_json::from_str(record).map_err(invalid_data)?;
        return Ok(Message::not_an_object(Some(compact(whole.get()))));
    }
    read_object(record, Reading::Strict)
        .or_else(|_| read_object(record, Reading::Lenient))
        .map_err(invalid_data)
}

/// The `_id` (as text) and the time of `created` of a part-file line, as the renderers read
/// them: for the fuzz target, which checks that the export's `record::head` reads the same.
pub(crate) fn id_and_time(line: &str) -> io::Result<(Option<String>, Option<Timestamp>)> {
    let message = decode(line)?;
    let time = match created(message.created) {
        Some(Created::Utc(at)) => Some(at),
        _ => None,
    };
    Ok((message.id.map(Cow::into_owned), time))
}

fn invalid_data(e: serde_json::Error) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// The JSON object `json` read as a `T`.
fn read_object<'a, T: Fields<'a>>(json: &'a str, reading: Reading) -> serde_json::Result<T> {
    let mut de = serde_json::Deserializer::from_str(json);
    let object = de::Deserializer::deserialize_map(&mut de, ObjectVisitor(reading, PhantomData))?;
    de.end()?;
    Ok(object)
}

/// A value that is a `T` when it is an object (JSON serde_json has checked already): `None`
/// when null, [`Fields::not_an_object`] of its text otherwise.
fn object_or_text<'a, T: Fields<'a>>(raw: &'a RawValue) -> Option<T> {
    match raw.get().as_bytes().first() {
        Some(b'n') | None => None,
        Some(b'{') => Some(
            read_object(raw.get(), Reading::Lenient)
                .unwrap_or_else(|_| T::not_an_object(text(Some(raw)))),
        ),
        Some(_) => Some(T::not_an_object(text(Some(raw)))),
    }
}

/// Reads an object's keys into a `T`.
struct ObjectVisitor<T>(Reading, PhantomData<T>);

impl<'de, T: Fields<'de>> Visitor<'de> for ObjectVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut object = T::default();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            object.field(&key, &mut map, self.0)?;
        }
        Ok(object)
    }
}

/// A nested object (`user`, `file`): strictly an object or null, leniently anything
/// ([`object_or_text`]).
struct ObjectSeed<T>(Reading, PhantomData<T>);

impl<'de, T: Fields<'de>> DeserializeSeed<'de> for ObjectSeed<T> {
    type Value = Option<T>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        match self.0 {
            Reading::Strict => d.deserialize_option(self),
            Reading::Lenient => Ok(object_or_text(<&RawValue>::deserialize(d)?)),
        }
    }
}

impl<'de, T: Fields<'de>> Visitor<'de> for ObjectSeed<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object or null")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<T>, E> {
        Ok(None)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Option<T>, D::Error> {
        d.deserialize_map(ObjectVisitor(self.0, PhantomData))
            .map(Some)
    }
}

/// A field shown as text: strictly a string (borrowed unless it has escapes) or null,
/// leniently anything ([`text`]).
struct TextSeed(Reading);

impl<'de> DeserializeSeed<'de> for TextSeed {
    type Value = Text<'de>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Text<'de>, D::Error> {
        match self.0 {
            Reading::Strict => d.deserialize_option(self),
            Reading::Lenient => Ok(text(Some(<&RawValue>::deserialize(d)?))),
        }
    }
}

impl<'de> Visitor<'de> for TextSeed {
    type Value = Text<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or null")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Text<'de>, E> {
        Ok(None)
    }

    fn visit_none<E: de::Error>(self) -> Result<Text<'de>, E> {
        Ok(None)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Text<'de>, D::Error> {
        KeySeed.deserialize(d).map(Some)
    }
}

/// A string, borrowed unless it has escapes: an object's key, or [`TextSeed`]'s string.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Cow<'de, str>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(s))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s.to_owned()))
    }
}

/// The buttons of `actionButtons`: an array's elements (nulls skipped); an object alone is
/// one button; another value (a string, a number) one button labelled with it; none when
/// absent, null, `[]` or `{}`.
fn buttons(action_buttons: Field<'_>) -> Vec<Button<'_>> {
    let Some(raw) = action_buttons.filter(|_| json_text(action_buttons).is_some()) else {
        return Vec::new();
    };
    if raw.get().starts_with('[') {
        serde_json::from_str::<Vec<&RawValue>>(raw.get())
            .unwrap_or_default()
            .into_iter()
            .filter_map(object_or_text)
            .collect()
    } else {
        object_or_text(raw).into_iter().collect()
    }
}

/// The first byte of a field's JSON text, which tells its type (`"`, `{`, `[`, `n`ull, `t`rue,
/// `f`alse, or a number's); `None` when absent.
fn kind(field: Field<'_>) -> Option<u8> {
    field.and_then(|f| f.get().as_bytes().first().copied())
}

/// A field as text, whatever its type: a string's text, a number's or a boolean's JSON text,
/// an object or an array as compact JSON; `None` when absent or null.
fn text(field: Field<'_>) -> Option<Cow<'_, str>> {
    let raw = field?.get();
    match raw.as_bytes().first()? {
        b'"' => Some(string_text(raw)),
        b'{' | b'[' => Some(compact(raw)),
        b'n' => None,
        _ => Some(Cow::Borrowed(raw)),
    }
}

/// A JSON string's text (`raw` begins and ends with its quotes). One holding an escape no
/// Rust string can hold (a lone surrogate, `"\ud800"`) is shown as its JSON text between the
/// quotes, escapes visible.
fn string_text(raw: &str) -> Cow<'_, str> {
    let inner = raw.get(1..raw.len().saturating_sub(1)).unwrap_or_default();
    if !inner.contains('\\') {
        return Cow::Borrowed(inner);
    }
    serde_json::from_str::<String>(raw).map_or(Cow::Borrowed(inner), Cow::Owned)
}

/// A field as compact JSON (a JSON column of the CSV), unless absent, null, `[]` or `{}`.
fn json_text(field: Field<'_>) -> Option<Cow<'_, str>> {
    let json = compact(field?.get());
    (!matches!(&*json, "null" | "[]" | "{}")).then_some(json)
}

/// JSON text without its insignificant whitespace: strings, numbers (however big) and the
/// order of keys as sent, which a trip through `serde_json::Value` would not keep.
fn compact(json: &str) -> Cow<'_, str> {
    let is_space = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    if !json.bytes().any(is_space) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len());
    let (mut copied, mut in_string, mut escaped) = (0, false, false);
    for (at, b) in json.bytes().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
        } else if b == b'"' {
            in_string = true;
        } else if is_space(b) {
            // An ASCII byte: `at` and `at + 1` are character boundaries.
            out.push_str(&json[copied..at]);
            copied = at + 1;
        }
    }
    out.push_str(&json[copied..]);
    Cow::Owned(out)
}

/// When a message was created, as the transcript and the page show it.
enum Created<'a> {
    /// A time understood: an RFC 3339 string with its offset ([`time::created_time`], as the
    /// time filter reads it), or a JSON number of seconds or milliseconds since 1970 (see
    /// [`time::EPOCH_MILLISECONDS_FROM`]).
    Utc(Timestamp),
    /// Anything else, as text.
    AsSent(Cow<'a, str>),
}

/// `created` as the renderers show it; `None` when absent or null.
fn created(field: Field<'_>) -> Option<Created<'_>> {
    let text = text(field)?;
    let time = match kind(field) {
        Some(b'"') => time::created_time(&text),
        Some(b'-' | b'0'..=b'9') => time::epoch(&text),
        _ => None,
    };
    Some(time.map_or(Created::AsSent(text), Created::Utc))
}

/// Writes `time` as `2024-01-15 15:21:44 UTC` (its fraction of a second dropped): jiff's
/// date and time of day, their digits put in place (a `write!` of six numbers cost a
/// tenth of a transcript's rendering).
fn write_utc<W: Write + ?Sized>(out: &mut W, time: Timestamp) -> io::Result<()> {
    let t = jiff::tz::Offset::UTC.to_datetime(time);
    let Ok(year) = u16::try_from(t.year()) else {
        // Before the year 0 (jiff's times reach -9999).
        return write!(out, "{} {} UTC", t.date(), t.time().strftime("%H:%M:%S"));
    };
    let mut text = *b"0000-00-00 00:00:00 UTC";
    let mut put = |at: usize, width: u32, n: u16| {
        for k in 0..width as usize {
            text[at + k] = b'0' + (n / 10u16.pow(width - 1 - k as u32) % 10) as u8;
        }
    };
    put(0, 4, year);
    for (at, n) in [
        (5, t.month()),
        (8, t.day()),
        (11, t.hour()),
        (14, t.minute()),
        (17, t.second()),
    ] {
        put(at, 2, n as u16);
    }
    out.write_all(&text)
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
    /// CSV: cells as the service sent them, formulas included (`--raw-csv-cells`).
    raw_csv_cells: bool,
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
                let title = txt_title(title);
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
        Ok(Renderer {
            sink,
            records: 0,
            raw_csv_cells: false,
        })
    }

    /// CSV: writes each cell as the service sent it (`--raw-csv-cells`) rather than with a
    /// leading `'` when a spreadsheet would run it as a formula
    /// ([`safe_text::csv_cell`]). The header row, written already, holds no such cell.
    pub fn with_raw_csv_cells(mut self, raw: bool) -> Self {
        self.raw_csv_cells = raw;
        self
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
                let row = csv_row(&m);
                let cells = row
                    .each_ref()
                    .map(|c| safe_text::csv_cell(c, self.raw_csv_cells));
                writer.write_record(cells.iter().map(|c| c.as_bytes()))?;
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

/// A record's CSV row: each field as [`text`] (`created` as sent), `actionButtons` and
/// `likes` as compact JSON.
fn csv_row<'a>(m: &'a Message<'a>) -> [Cow<'a, str>; 13] {
    let cell = |t: Option<&'a str>| Cow::Borrowed(t.unwrap_or_default());
    let file = m.file.as_ref();
    [
        cell(m.id.as_deref()),
        text(m.created).unwrap_or_default(),
        cell(m.chat_room.as_deref()),
        cell(m.channel.as_deref()),
        cell(m.user.id.as_deref()),
        cell(m.user.username.as_deref()),
        cell(m.user.unique_user_identifier.as_deref()),
        cell(m.user.is_moderator.as_deref()),
        cell(m.text.as_deref()),
        cell(file.and_then(|f| f.url.as_deref())),
        cell(file.and_then(|f| f.file_name.as_deref())),
        json_text(m.action_buttons).unwrap_or_default(),
        json_text(m.likes).unwrap_or_default(),
    ]
}

/// The author's name (`?` when none) and role badge (`system`, `bot`, `moderator` or none).
fn author_line<'a>(m: &'a Message<'a>, buttons: &[Button<'_>]) -> (&'a str, &'static str) {
    let name = m.user.username.as_deref().unwrap_or("?");
    // A string `"true"` too (its text): a service that sends booleans as strings means it.
    let moderator = m.user.is_moderator.as_deref() == Some("true");
    let role = if name == "system" && moderator {
        "system"
    } else if !buttons.is_empty() {
        "bot"
    } else if moderator {
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

/// The line breaks of a message's text that continue it on an indented line of the
/// transcript (`\r\n` is one): every kind a reader or a program splits lines at.
const LINE_BREAKS: [char; 7] = [
    '\n', '\r', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}',
];

/// Writes a field of the transcript that stays on its line (a name, a time, a file name, a
/// URL, a label, the title): every control character, line breaks included, and every
/// bidirectional override or line separator as a visible escape (`\u{a}`), so that it can
/// neither start a line that reads as a message nor reorder one.
fn txt_field<W: Write + ?Sized>(out: &mut W, text: &str) -> io::Result<()> {
    out.write_all(safe_text::terminal_line(text).as_bytes())
}

/// Writes a message's text: each line break of any kind ([`LINE_BREAKS`]) continues it on an
/// indented line, so that no line of it passes for another message; tabs are kept; anything
/// else [`txt_field`] escapes is escaped.
fn txt_text<W: Write + ?Sized>(out: &mut W, text: &str) -> io::Result<()> {
    if text.bytes().all(|b| matches!(b, b' '..=b'~')) {
        return out.write_all(text.as_bytes());
    }
    let mut rest = text;
    loop {
        let (line, next) = match rest.find(LINE_BREAKS) {
            Some(at) => {
                let width = if rest[at..].starts_with("\r\n") {
                    2
                } else {
                    rest[at..].chars().next().map_or(1, char::len_utf8)
                };
                (&rest[..at], Some(&rest[at + width..]))
            }
            None => (rest, None),
        };
        for (k, piece) in line.split('\t').enumerate() {
            if k > 0 {
                out.write_all(b"\t")?;
            }
            txt_field(out, piece)?;
        }
        match next {
            Some(more) => {
                out.write_all(b"\n    ")?;
                rest = more;
            }
            None => return Ok(()),
        }
    }
}

fn txt_title(title: &Title<'_>) -> String {
    safe_text::terminal_line(&title_text(title)).into_owned()
}

fn txt_message(out: &mut impl Write, m: &Message<'_>) -> io::Result<()> {
    let buttons = buttons(m.action_buttons);
    let (name, role) = author_line(m, &buttons);
    out.write_all(b"[")?;
    match created(m.created) {
        Some(Created::Utc(time)) => write_utc(out, time)?,
        Some(Created::AsSent(text)) => txt_field(out, &text)?,
        None => {}
    }
    out.write_all(b"] ")?;
    txt_field(out, name)?;
    if !role.is_empty() {
        out.write_all(b" (")?;
        out.write_all(role.as_bytes())?;
        out.write_all(b")")?;
    }
    out.write_all(b": ")?;
    txt_text(out, m.text.as_deref().unwrap_or(""))?;
    out.write_all(b"\n")?;
    if let Some(file) = &m.file {
        out.write_all(b"    [file: ")?;
        txt_field(out, file.file_name.as_deref().unwrap_or_default())?;
        out.write_all(b" ")?;
        txt_field(out, file.url.as_deref().unwrap_or_default())?;
        out.write_all(b"]\n")?;
    }
    if !buttons.is_empty() {
        out.write_all(b"    buttons:")?;
        for b in &buttons {
            out.write_all(b" [")?;
            txt_field(out, button_label(b))?;
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

/// The page's content security policy: nothing loaded from anywhere (no script, image,
/// font, frame or connection: `default-src 'none'`), its own inline style only, and no base
/// URL or form target to redirect links or posts. An attachment is a link, never loaded.
pub const HTML_CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'";

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
         <meta http-equiv=\"Content-Security-Policy\" content=\"{HTML_CSP}\">\n\
         <title>{title}</title>\n<style>{HTML_STYLE}</style>\n</head>\n<body>\n<main>\n\
         <header class=\"page\"><h1>{title}</h1></header>\n"
    )
}

/// Writes `text` escaped for HTML.
fn put_escaped<W: Write + ?Sized>(out: &mut W, text: &str) -> io::Result<()> {
    out.write_all(escape(text).as_bytes())
}

fn html_message(out: &mut impl Write, m: &Message<'_>) -> io::Result<()> {
    let buttons = buttons(m.action_buttons);
    let (name, role) = author_line(m, &buttons);
    out.write_all(b"<article class=\"msg\" id=\"m-")?;
    put_escaped(out, m.id.as_deref().unwrap_or_default())?;
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
    // `datetime`: the time in RFC 3339 when understood, else `created` as sent.
    match created(m.created) {
        Some(Created::Utc(time)) => {
            // A string as sent (an RFC 3339 time, as jiff found it); a number as RFC 3339.
            match kind(m.created) {
                Some(b'"') => {
                    out.write_all(b"<time datetime=\"")?;
                    put_escaped(out, &text(m.created).unwrap_or_default())?;
                    out.write_all(b"\">")?;
                }
                _ => write!(out, "<time datetime=\"{time}\">")?,
            }
            write_utc(out, time)?;
        }
        Some(Created::AsSent(text)) => {
            let text = escape(&text);
            write!(out, "<time datetime=\"{text}\">{text}")?;
        }
        None => out.write_all(b"<time datetime=\"\">")?,
    }
    out.write_all(b"</time></header>\n<div class=\"text\">")?;
    put_escaped(out, m.text.as_deref().unwrap_or(""))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    const TITLE: Title<'static> = Title {
        room: "r",
        room_name: Some("Room"),
        channel: None,
    };
    const FOOTER: Footer<'static> = Footer {
        messages: 0,
        exported_at: "2024-01-16T00:00:00Z",
    };

    /// `records` (one a line) rendered whole in `format`.
    fn rendered(format: Format, records: &[&str]) -> String {
        let part: String = records.iter().map(|r| format!("{r}\n")).collect();
        let mut out = Renderer::begin(format, Vec::new(), &TITLE).unwrap();
        out.records(part.as_bytes()).unwrap();
        String::from_utf8(out.end(&FOOTER).unwrap()).unwrap()
    }

    /// Records with a field of every odd type the service might send, and records that are
    /// not objects: all valid JSON.
    const ODD: [&str; 16] = [
        r#"{"_id":"ms","created":1705332104293,"message":"epoch ms","user":{"username":42,"isModerator":"true"},"likes":7}"#,
        r#"{"_id":"s","created":1705332104,"message":{"a": [1, 2], "b": "x y"},"file":"x.png","actionButtons":{"displayText":"A","url":"https://a.example"}}"#,
        r#"{"_id":"f","created":1705332104.293e0,"message":["one",2],"actionButtons":"go","likes":{"n":1}}"#,
        r#"{"_id":"tz","created":"2024-01-15T16:21:44.293+01:00","message":123456789012345678901234567890,"user":"ann"}"#,
        r#"{"_id":null,"created":null,"chatRoom":null,"channel":null,"message":null,"user":null,"actionButtons":null,"file":null,"likes":null}"#,
        r#"{"_id":5,"created":{"at":1},"chatRoom":true,"channel":[1],"message":false,"user":{"_id":[],"username":{"first":"a"},"uniqueUserIdentifier":{"k":1},"isModerator":1},"file":{"url":7,"fileName":null}}"#,
        r#"{"_id":"b","created":true,"actionButtons":[null,"plain",3,{"displayText":{"t":1}},{"payload":false},{}],"file":["a"]}"#,
        r#"{"_id":"dup","_id":"dup2","message":"first","message":"last"}"#,
        r#"{"_id":"sur","message":"a\ud800b","user":{"username":"\udc00"}}"#,
        r#"{"_id":"big","created":1e400,"message":-0.0}"#,
        r#"{"_id":"deep","likes":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#,
        r#""a string record""#,
        r#"["an", "array", {"record": true}]"#,
        r#"12.5"#,
        r#"null"#,
        r#"{}"#,
    ];

    #[test]
    fn any_valid_json_renders_in_every_format() {
        for format in [
            Format::Jsonl,
            Format::Json,
            Format::Csv,
            Format::Txt,
            Format::Html,
        ] {
            // Each alone (a first record too), then all together.
            for record in ODD {
                rendered(format, &[record]);
            }
            rendered(format, &ODD);
        }
    }

    /// A record's rendering in every format but the JSON ones, read `reading`.
    fn each_format(record: &str, reading: Reading) -> String {
        let m: Message<'_> = read_object(record, reading).unwrap();
        let mut out = Vec::new();
        txt_message(&mut out, &m).unwrap();
        html_message(&mut out, &m).unwrap();
        for cell in csv_row(&m) {
            out.extend_from_slice(cell.as_bytes());
            out.push(b'|');
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_record_reads_strictly_as_it_reads_leniently() {
        for record in [
            r#"{"_id":"a","created":"2024-01-15T15:21:44.293Z","chatRoom":"r","channel":"c","message":"one\ntwo \"q\" \u00e9","user":{"_id":"u","username":"ann","uniqueUserIdentifier":"x","isModerator":true,"parentCustomerAccount":"p"},"likes":[{"_id":"l"}],"actionButtons":[],"file":{"_id":"f","url":"https://f.example/x","fileName":"x.png","size":1},"__v":0}"#,
            r#"{"_id":"b","message":"pick","user":{"username":"bot","isModerator":false},"actionButtons":[{"displayText":"A","url":"https://a.example"},{"payload":"p"}],"file":null,"likes":null}"#,
            r#"{"_id":"c","user":null,"message":null,"\u005fid":"escaped key","created":null}"#,
            r#"{"_id":"d","_id":"last","message":"twice"}"#,
        ] {
            assert_eq!(
                each_format(record, Reading::Strict),
                each_format(record, Reading::Lenient),
                "{record}"
            );
        }
        // What fails the strict reading is left to the lenient one.
        for odd in [
            r#"{"_id":1}"#,
            r#"{"user":"ann"}"#,
            r#"{"user":{"isModerator":"true"}}"#,
            r#"{"file":["a"]}"#,
            r#"{"message":"\ud800"}"#,
        ] {
            assert!(
                read_object::<Message<'_>>(odd, Reading::Strict).is_err(),
                "{odd}"
            );
            decode(odd).unwrap();
        }
    }

    #[test]
    fn epoch_numbers_and_rfc3339_strings_are_times() {
        let utc = |json: &str| match created(Some(serde_json::from_str(json).unwrap())) {
            Some(Created::Utc(t)) => Some(t.to_string()),
            _ => None,
        };
        let at = Some("2024-01-15T15:21:44Z".to_owned());
        assert_eq!(utc("1705332104"), at);
        assert_eq!(utc("1705332104000"), at);
        assert_eq!(utc("1.705332104e9"), at);
        assert_eq!(utc("\"2024-01-15T15:21:44Z\""), at);
        assert_eq!(utc("\"2024-01-15T10:21:44-05:00\""), at);
        assert_eq!(utc("\"2024-01-15 15:21:44z\""), at);
        assert_eq!(
            utc("\"2024-01-15t15:21:44.9Z\""),
            Some("2024-01-15T15:21:44.9Z".to_owned())
        );
        assert_eq!(utc("0"), Some("1970-01-01T00:00:00Z".to_owned()));
        // RFC 3339 sets no limit to a fraction's digits; jiff reads nine.
        assert_eq!(
            utc("\"2024-01-15T15:21:44.1234567891Z\""),
            Some("2024-01-15T15:21:44.123456789Z".to_owned())
        );
        // 10^11 and up are milliseconds (March 1973), below seconds (the year 5138).
        assert_eq!(utc("100000000000"), Some("1973-03-03T09:46:40Z".to_owned()));
        assert_eq!(utc("99999999999"), Some("5138-11-16T09:46:39Z".to_owned()));
        assert_eq!(utc("-1000"), Some("1969-12-31T23:43:20Z".to_owned()));
        // Before the year 0 too (jiff reaches -9999).
        let year_minus_27 = rendered(Format::Txt, &[r#"{"created":-63000000000}"#]);
        assert!(
            year_minus_27.contains("[-000027-08-11 08:00:00 UTC]"),
            "{year_minus_27}"
        );
        let year_0 = rendered(Format::Txt, &[r#"{"created":"0000-01-01T00:00:00Z"}"#]);
        assert!(year_0.contains("[0000-01-01 00:00:00 UTC]"), "{year_0}");
        for not_a_time in [
            "\"2024-13-45T99:00:00Z\"",
            "\"yesterday\"",
            "\"2024-01-15\"",
            // RFC 3339 with its offset only, as the time filter reads it: no zone, jiff's
            // wider grammar (an hour offset, an annotation, a comma, a long year, the basic
            // format) and blanks around it are shown as sent.
            "\"2024-01-15 15:21\"",
            "\"2024-01-15T15:21:44\"",
            "\"2020-01-01T00:00:00+01\"",
            "\"2020-01-01T00:00:00Z[Europe/Paris]\"",
            "\"2020-01-01T00:00:00,5Z\"",
            "\"+002020-01-01T00:00:00Z\"",
            "\"20200101T000000Z\"",
            "\" 2024-01-15T15:21:44Z\"",
            "1e400",
            "123456789012345678901234567890",
            "true",
            "{}",
        ] {
            assert_eq!(utc(not_a_time), None, "{not_a_time}");
        }
    }

    #[test]
    fn compact_json_keeps_strings_numbers_and_order() {
        assert_eq!(
            compact("{\"b\": [1, 2],\n \"a\" :\t\"x \\\" y\"}"),
            "{\"b\":[1,2],\"a\":\"x \\\" y\"}"
        );
        assert_eq!(
            compact("[ 123456789012345678901234567890 , \"\\\\\" ]"),
            "[123456789012345678901234567890,\"\\\\\"]"
        );
        assert!(matches!(compact("{\"a\":1}"), Cow::Borrowed(_)));
    }
}
