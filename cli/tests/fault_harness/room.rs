//! A room's (or channel's) messages as the harness made them: each record's text (stored
//! verbatim in the emulator, so the listing serves exactly those bytes), the marker that names
//! it in any format, and what the schedule did to it; the records' generator; and the check of
//! an exported file against them.
//!
//! Every record carries a marker `Mk<6 digits>q` in a field every format shows (its `message`,
//! or its author's `username` when its `message` is not text), so a csv, txt or html export is
//! read back as the sequence of messages it holds; a jsonl or json export is read back by its
//! records' bytes.

use std::collections::HashMap;
use std::path::Path;

use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, RngExt};
use roomchat_emulator::Emulator;
use serde_json::json;

/// 2024-01-01T00:00:00Z in ms since the epoch; the records' times are in January 2024.
pub const JAN_1_MS: i64 = 1_704_067_200_000;
/// The first record's time: 2024-01-02T00:00:00Z.
pub const FIRST_MS: i64 = JAN_1_MS + 86_400_000;
/// Between one record's time and the next's.
pub const STEP_MS: i64 = 37_011;

/// `ms` (a time in January 2024) as `2024-01-DDTHH:MM:SS.mmmZ`, shifted to `offset_minutes`
/// east of UTC when given (`+01:00` instead of `Z`).
pub fn iso(ms: i64, offset_minutes: Option<i64>) -> String {
    let local = ms + offset_minutes.unwrap_or(0) * 60_000 - JAN_1_MS;
    assert!(
        (0..31 * 86_400_000).contains(&local),
        "{ms} is not in January 2024"
    );
    let (day, rest) = (local / 86_400_000 + 1, local % 86_400_000);
    let (h, m, s, frac) = (
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000,
    );
    let zone = match offset_minutes {
        None => "Z".to_owned(),
        Some(o) => format!(
            "{}{:02}:{:02}",
            if o < 0 { '-' } else { '+' },
            o.abs() / 60,
            o.abs() % 60
        ),
    };
    format!("2024-01-{day:02}T{h:02}:{m:02}:{s:02}.{frac:03}{zone}")
}

/// What a record's `created` says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Created {
    /// An RFC 3339 time, this many ms after the epoch.
    At(i64),
    /// Nothing a time filter can read (absent, null, text with a non-ASCII character…): kept.
    Unreadable,
    /// Something a filter may or may not read as a time (epoch ms, a date alone…).
    Ambiguous,
}

/// Whether a time filter keeps a record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kept {
    Yes,
    No,
    Either,
}

/// An export's `--after` and `--before` (as given, and in ms).
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub after: Option<(String, i64)>,
    pub before: Option<(String, i64)>,
}

impl Filter {
    pub fn kept(&self, created: Created) -> Kept {
        if self.after.is_none() && self.before.is_none() {
            return Kept::Yes;
        }
        match created {
            Created::At(ms) => {
                let inside = self.after.as_ref().is_none_or(|(_, a)| ms > *a)
                    && self.before.as_ref().is_none_or(|(_, b)| ms < *b);
                if inside {
                    Kept::Yes
                } else {
                    Kept::No
                }
            }
            Created::Unreadable => Kept::Yes,
            Created::Ambiguous => Kept::Either,
        }
    }

    pub fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some((text, _)) = &self.after {
            args.extend(["--after".to_owned(), text.clone()]);
        }
        if let Some((text, _)) = &self.before {
            args.extend(["--before".to_owned(), text.clone()]);
        }
        args
    }
}

/// What the schedule did to a record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Gone {
    No,
    /// Deleted before any run of the export began: never in the file.
    BeforeStart,
    /// Deleted while an export ran or between runs: in the file or not, depending on whether
    /// it was fetched (and kept) before.
    Later,
}

/// The kinds of records a room holds, as fractions of its records.
#[derive(Debug, Clone, Default)]
pub struct Style {
    /// Without an `_id` (absent or null).
    pub idless: f64,
    /// With oddly typed fields (created as epoch ms, username a number, message an object…).
    pub odd: f64,
    /// With number text a parse would change, escapes, keys in an unusual order.
    pub fancy: f64,
    /// With a message of 8 to 40 KB.
    pub huge: f64,
    /// Written with spaces between tokens.
    pub spaced: f64,
    /// With a `created` a time filter cannot read, or may not (non-ASCII text among them).
    pub junk_times: f64,
    /// Only the service's own types, the fields varying from record to record (csv listings).
    pub well_typed: bool,
}

impl Style {
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        let mut part = |fraction: f64, what: &str| {
            if fraction >= 1.0 {
                parts.push(format!("all {what}"));
            } else if fraction > 0.0 {
                parts.push(format!("{:.0}% {what}", fraction * 100.0));
            }
        };
        part(self.idless, "without _id");
        part(self.odd, "odd types");
        part(self.fancy, "big numbers/escapes/key order");
        part(self.huge, "huge");
        part(self.spaced, "spaced");
        part(self.junk_times, "odd times");
        if self.well_typed {
            parts.push("fields varying".into());
        }
        if parts.is_empty() {
            "plain".into()
        } else {
            parts.join(", ")
        }
    }
}

/// One record of the room.
pub struct Rec {
    /// What deletes it in the emulator (its `_id`, or the emulator's handle).
    pub handle: String,
    /// Its text, as the emulator serves it.
    pub text: String,
    pub marker: String,
    pub has_id: bool,
    pub created: Created,
    pub gone: Gone,
    /// In the room when the run that finished the export began: it must be in the file.
    pub before_final: bool,
}

/// A room's or channel's records, oldest first.
pub struct Room {
    pub room: String,
    pub channel: Option<String>,
    pub style: Style,
    pub recs: Vec<Rec>,
    by_text: HashMap<String, usize>,
    by_marker: HashMap<String, usize>,
    /// Distinguishes this room's `_id`s from other rooms'.
    id_prefix: u32,
    /// What the room held when the latest run began (until the export is finished).
    at_run_start: Vec<bool>,
    /// The export is finished: `before_final` is set for good.
    finished: bool,
    /// A record was deleted once the export had begun: a record without an id near it may be
    /// written again or left out (nothing tells it from another when the listing shifted).
    deleted_while_exporting: bool,
}

/// `text` as a JSON string literal.
pub fn js(text: &str) -> String {
    serde_json::to_string(text).expect("a string serializes")
}

/// JSON text without whitespace outside strings.
pub fn minify(text: &str) -> String {
    let (mut out, mut in_string, mut escaped) = (String::with_capacity(text.len()), false, false);
    for c in text.chars() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
        } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        }
        out.push(c);
    }
    out
}

/// The markers `Mk<6 digits>q` in `text`, in order.
pub fn markers(text: &str) -> Vec<&str> {
    let b = text.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(p) = text[at..].find("Mk") {
        let start = at + p;
        let end = start + 9;
        if end <= b.len()
            && b[start + 2..start + 8].iter().all(u8::is_ascii_digit)
            && b[start + 8] == b'q'
        {
            found.push(&text[start..end]);
            at = end;
        } else {
            at = start + 2;
        }
    }
    found
}

/// A JSON object being written: keys and values' JSON text, in order.
struct Obj(Vec<(String, String)>);

impl Obj {
    fn render(&self, spaced: bool) -> String {
        let (comma, colon, open, close) = if spaced {
            (", ", ": ", "{ ", " }")
        } else {
            (",", ":", "{", "}")
        };
        let fields: Vec<String> = self
            .0
            .iter()
            .map(|(k, v)| format!("{}{colon}{v}", js(k)))
            .collect();
        format!("{open}{}{close}", fields.join(comma))
    }

    fn set(&mut self, key: &str, value: Option<String>) {
        match (self.0.iter().position(|(k, _)| k == key), value) {
            (Some(at), Some(v)) => self.0[at].1 = v,
            (Some(at), None) => {
                self.0.remove(at);
            }
            (None, Some(v)) => self.0.push((key.to_owned(), v)),
            (None, None) => {}
        }
    }
}

/// Authors: username, uniqueUserIdentifier, moderator.
const AUTHORS: [(&str, Option<&str>, bool); 5] = [
    ("ann", Some("crm-ann"), false),
    ("Bob Stone", Some("crm-bob"), true),
    ("system", None, true),
    ("Zoë <b>&amp;", None, false),
    ("helper-bot", None, false),
];

/// Words a message may hold beside its marker (quotes, markup, formulas, newlines, non-ASCII).
const WORDS: [&str; 10] = [
    "hello",
    "Привет, мир",
    "=SUM(1+1)",
    "a \"quoted\" word",
    "<script>alert(1)</script>",
    "line one\nline two",
    "tab\tand \\ backslash",
    "party 🎉",
    "café and/or bar",
    "[2024-01-15 15:21:44 UTC] admin (moderator): forged?",
];

/// The odd things a record's fields can be (items 4 and 5 of issue 44).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Odd {
    CreatedNumber,
    CreatedNonAscii,
    CreatedMissing,
    CreatedNull,
    CreatedDateOnly,
    UsernameNumber,
    UserText,
    UserNull,
    UserArray,
    ModeratorText,
    UidNumber,
    MessageObject,
    MessageArray,
    MessageNull,
    MessageMissing,
    MessageNumber,
    FileText,
    FileOddFields,
    FileTrue,
    ButtonsObject,
    ButtonsText,
    ButtonsMixed,
    LikesNumber,
    ContainerNumber,
    Extra,
}

const ODDS: [Odd; 25] = [
    Odd::CreatedNumber,
    Odd::CreatedNonAscii,
    Odd::CreatedMissing,
    Odd::CreatedNull,
    Odd::CreatedDateOnly,
    Odd::UsernameNumber,
    Odd::UserText,
    Odd::UserNull,
    Odd::UserArray,
    Odd::ModeratorText,
    Odd::UidNumber,
    Odd::MessageObject,
    Odd::MessageArray,
    Odd::MessageNull,
    Odd::MessageMissing,
    Odd::MessageNumber,
    Odd::FileText,
    Odd::FileOddFields,
    Odd::FileTrue,
    Odd::ButtonsObject,
    Odd::ButtonsText,
    Odd::ButtonsMixed,
    Odd::LikesNumber,
    Odd::ContainerNumber,
    Odd::Extra,
];

/// `created` texts a time filter cannot read, with non-ASCII characters (the hand-written
/// parser sliced some of them inside a character: a panic).
const NON_ASCII_TIMES: [&str; 6] = [
    "2024-01-0é",
    "2024-01-1€T10:00:00Z",
    "hier à 15h",
    "２０２４-01-15",
    "2024-01-15T15:21:44.293Zé",
    "2024-01-15T1é:00:00Z",
];

impl Room {
    pub fn new(room: &str, channel: Option<&str>, style: Style, id_prefix: u32) -> Room {
        Room {
            room: room.to_owned(),
            channel: channel.map(str::to_owned),
            style,
            recs: Vec::new(),
            by_text: HashMap::new(),
            by_marker: HashMap::new(),
            id_prefix,
            at_run_start: Vec::new(),
            finished: false,
            deleted_while_exporting: false,
        }
    }

    /// The export target naming it: `ROOM` or `ROOM/CHANNEL`.
    pub fn target(&self) -> String {
        match &self.channel {
            Some(c) => format!("{}/{c}", self.room),
            None => self.room.clone(),
        }
    }

    /// One new record (the `n`th of the room): its text, `_id` and `created`.
    fn record(&self, rng: &mut impl Rng, n: usize) -> (String, Option<String>, Created) {
        let style = &self.style;
        let marker = format!("Mk{n:06}q");
        let ms = FIRST_MS + n as i64 * STEP_MS;
        let id = (!rng.random_bool(style.idless.min(1.0)))
            .then(|| format!("{:08x}{:016x}", self.id_prefix, n));
        let (name, uid, moderator) = *AUTHORS.choose(rng).expect("authors");
        let account = format!("{:08x}{:016x}", 0xacc0_u32, 1);
        let mut text = format!("{} {n} {marker}", WORDS.choose(rng).expect("words"));
        if rng.random_bool(0.5) {
            text.push(' ');
            text.push_str(WORDS.choose(rng).expect("words"));
        }
        if rng.random_bool(style.huge.min(1.0)) {
            let target = rng.random_range(8_000..40_000);
            while text.len() < target {
                text.push_str(" lorem ipsum dolor sit amet");
            }
        }
        let fancy = rng.random_bool(style.fancy.min(1.0));
        let message = if fancy {
            // Escapes a parse would rewrite: \u00e9 for é, \/ for /.
            js(&text).replace('é', "\\u00e9").replace('/', "\\/")
        } else {
            js(&text)
        };
        let spaced = rng.random_bool(style.spaced.min(1.0));
        let user = |username: String| {
            Obj(vec![
                (
                    "_id".into(),
                    js(&format!("{:08x}{:016x}", 0xa0_u32, name.len())),
                ),
                ("uniqueUserIdentifier".into(), uid.map_or("null".into(), js)),
                ("username".into(), username),
                ("isModerator".into(), moderator.to_string()),
                ("parentCustomerAccount".into(), js(&account)),
            ])
        };
        let mut author = user(js(name));
        let (container_key, container) = match &self.channel {
            Some(c) => ("channel", c.as_str()),
            None => ("chatRoom", self.room.as_str()),
        };
        let mut record = Obj(Vec::new());
        match &id {
            Some(id) => record.0.push(("_id".into(), js(id))),
            None if rng.random_bool(0.3) => record.0.push(("_id".into(), "null".into())),
            None => {}
        }
        record.0.push(("created".into(), js(&iso(ms, None))));
        record.0.push((container_key.into(), js(container)));
        record.0.push(("message".into(), message));
        let mut created = Created::At(ms);
        let with_file = rng.random_bool(0.15);
        let with_buttons = rng.random_bool(0.1);
        if style.well_typed {
            // The service's types; which fields a record has varies (a header taken from the
            // first record alone misses the later ones').
            record.0.push(("user".into(), author.render(false)));
            if n % 3 == 1 {
                record.0.push(("likes".into(), "[]".into()));
            }
            if with_file || n % 4 == 2 {
                record.0.push((
                    "file".into(),
                    format!(
                        r#"{{"_id":"f{n}","url":"https://files.example/f{n}/doc.pdf","fileName":"doc-{n}.pdf","size":{}}}"#,
                        1000 + n
                    ),
                ));
            }
            if with_buttons || n % 5 == 3 {
                record.0.push((
                    "actionButtons".into(),
                    format!(r#"[{{"type":"link","displayText":"Open{n}","url":"https://example.com/b{n}"}}]"#),
                ));
            }
            if n % 6 == 5 {
                record
                    .0
                    .push(("editedAt".into(), js(&iso(ms + 5000, None))));
                record
                    .0
                    .push(("reactions".into(), format!(r#"{{"up{n}":{}}}"#, n % 7)));
            }
            record.0.push(("__v".into(), "0".into()));
            return (record.render(false), id, created);
        }
        record.0.push(("likes".into(), "[]".into()));
        record.0.push((
            "actionButtons".into(),
            if with_buttons {
                format!(r#"[{{"type":"link","displayText":"Open {n}","url":"https://example.com/{n}"}},{{"type":"action","displayText":"Ack","payload":"ack-{n}"}}]"#)
            } else {
                "[]".into()
            },
        ));
        record.0.push((
            "file".into(),
            if with_file {
                format!(r#"{{"_id":"{:08x}{:016x}","url":"https://files.example/{n}/doc.pdf","fileName":"doc-{n}.pdf","size":1234,"contentType":"application/pdf","fileType":"file"}}"#, 0xf11e_u32, n)
            } else {
                "null".into()
            },
        ));
        record.0.push(("customer".into(), js(&account)));
        record.0.push(("__v".into(), "0".into()));

        // Odd types: one to three, the marker kept in a field every format shows.
        let mut odds: Vec<Odd> = Vec::new();
        if rng.random_bool(style.odd.min(1.0)) {
            for _ in 0..rng.random_range(1..=3) {
                odds.push(*ODDS.choose(rng).expect("odds"));
            }
        }
        if rng.random_bool(style.junk_times.min(1.0)) {
            odds.push(
                *[
                    Odd::CreatedNonAscii,
                    Odd::CreatedNonAscii,
                    Odd::CreatedMissing,
                    Odd::CreatedNull,
                    Odd::CreatedNumber,
                    Odd::CreatedDateOnly,
                ]
                .choose(rng)
                .expect("times"),
            );
        }
        let marker_in_username = odds.iter().any(|o| {
            matches!(
                o,
                Odd::MessageNull | Odd::MessageMissing | Odd::MessageNumber
            )
        });
        let mut user_value = None;
        for odd in &odds {
            match odd {
                Odd::CreatedNumber => {
                    record.set("created", Some(ms.to_string()));
                    created = Created::Ambiguous;
                }
                Odd::CreatedNonAscii => {
                    record.set("created", Some(js(NON_ASCII_TIMES.choose(rng).expect("t"))));
                    created = Created::Unreadable;
                }
                Odd::CreatedMissing => {
                    record.set("created", None);
                    created = Created::Unreadable;
                }
                Odd::CreatedNull => {
                    record.set("created", Some("null".into()));
                    created = Created::Unreadable;
                }
                Odd::CreatedDateOnly => {
                    let date = iso(ms, None);
                    let text = if rng.random_bool(0.5) {
                        date[..10].to_owned()
                    } else {
                        date[..19].replace('T', " ")
                    };
                    record.set("created", Some(js(&text)));
                    created = Created::Ambiguous;
                }
                Odd::UsernameNumber if !marker_in_username => {
                    author.set("username", Some(format!("{}", 40 + n % 9)));
                }
                Odd::UserText if !marker_in_username => user_value = Some(js(name)),
                Odd::UserNull if !marker_in_username => user_value = Some("null".into()),
                Odd::UserArray if !marker_in_username => {
                    user_value = Some(format!("[{}]", js(name)))
                }
                Odd::ModeratorText => author.set("isModerator", Some(js("yes"))),
                Odd::UidNumber => author.set("uniqueUserIdentifier", Some("42".into())),
                Odd::MessageObject if !marker_in_username => {
                    record.set(
                        "message",
                        Some(format!(r#"{{"text":{},"lang":"en"}}"#, js(&text))),
                    );
                }
                Odd::MessageArray if !marker_in_username => {
                    record.set("message", Some(format!("[{},1]", js(&text))));
                }
                Odd::MessageNull => record.set("message", Some("null".into())),
                Odd::MessageMissing => record.set("message", None),
                Odd::MessageNumber => record.set("message", Some("7".into())),
                Odd::FileText => record.set("file", Some(js("https://files.example/x.png"))),
                Odd::FileOddFields => record.set(
                    "file",
                    Some(r#"{"url":5,"fileName":["x"],"size":"big"}"#.into()),
                ),
                Odd::FileTrue => record.set("file", Some("true".into())),
                Odd::ButtonsObject => {
                    record.set("actionButtons", Some(r#"{"type":"link"}"#.into()))
                }
                Odd::ButtonsText => record.set("actionButtons", Some(js("none"))),
                Odd::ButtonsMixed => record.set(
                    "actionButtons",
                    Some(
                        r#"[1,"x",null,{"displayText":5,"url":false},{"payload":{"a":1}}]"#.into(),
                    ),
                ),
                Odd::LikesNumber => record.set("likes", Some("3".into())),
                Odd::ContainerNumber => record.set(container_key, Some("12345".into())),
                Odd::Extra => record.set(
                    "reactions",
                    Some(
                        r#"{"👍":[1,2],"thread":[{"depth":{"x":[true,null]}}],"editedAt":null}"#
                            .into(),
                    ),
                ),
                _ => {}
            }
        }
        if marker_in_username {
            author.set("username", Some(js(&text)));
        }
        let user_text = user_value.unwrap_or_else(|| author.render(spaced));
        let at = record
            .0
            .iter()
            .position(|(k, _)| k == "likes")
            .unwrap_or(record.0.len());
        record.0.insert(at, ("user".into(), user_text));
        if fancy {
            let numbers = [
                ("bigNumber", "123456789012345678901234567890"),
                ("negativeBig", "-98765432109876543210"),
                ("ratio", "0.1000000000000000055511151231257827"),
                ("exponent", "1e2"),
                ("negativeZero", "-0"),
                ("trailingZero", "1.50"),
            ];
            for _ in 0..rng.random_range(1..=3) {
                let (k, v) = *numbers.choose(rng).expect("numbers");
                record.set(k, Some(v.into()));
            }
            if rng.random_bool(0.7) {
                record.0.shuffle(rng);
            }
        }
        (record.render(spaced), id, created)
    }

    /// Adds `count` new records to the room in the emulator (after what it holds).
    pub fn add(&mut self, emu: &Emulator, rng: &mut impl Rng, count: usize) {
        if count == 0 {
            return;
        }
        let first = self.recs.len();
        let made: Vec<(String, Option<String>, Created)> = (first..first + count)
            .map(|n| self.record(rng, n))
            .collect();
        let texts: Vec<&str> = made.iter().map(|(t, _, _)| t.as_str()).collect();
        let answer = emu.add_messages(json!({
            "roomId": self.room, "channelId": self.channel, "records": texts,
        }));
        let handles = answer["ids"].as_array().expect("the records' handles");
        for ((text, id, created), handle) in made.into_iter().zip(handles) {
            let n = self.recs.len();
            let marker = format!("Mk{n:06}q");
            self.by_text.insert(minify(&text), n);
            self.by_marker.insert(marker.clone(), n);
            self.recs.push(Rec {
                handle: handle.as_str().expect("a handle").to_owned(),
                text,
                marker,
                has_id: id.is_some(),
                created,
                gone: Gone::No,
                before_final: false,
            });
        }
    }

    /// The records the room holds now, in its order.
    pub fn present(&self) -> Vec<usize> {
        (0..self.recs.len())
            .filter(|&i| self.recs[i].gone == Gone::No)
            .collect()
    }

    /// Deletes the records `picks` (indices) in the emulator.
    pub fn delete(&mut self, emu: &Emulator, picks: &[usize], phase: Gone) {
        if picks.is_empty() {
            return;
        }
        let handles: Vec<&str> = picks
            .iter()
            .map(|&i| self.recs[i].handle.as_str())
            .collect();
        let answer = emu.delete_messages(json!({
            "roomId": self.room, "channelId": self.channel, "ids": handles,
        }));
        assert_eq!(
            answer["deleted"].as_u64(),
            Some(picks.len() as u64),
            "{answer}"
        );
        for &i in picks {
            self.recs[i].gone = phase;
        }
        self.deleted_while_exporting |= phase == Gone::Later;
    }

    /// A run of the export begins (runs at once: when the first begins).
    pub fn run_begins(&mut self) {
        if !self.finished {
            self.at_run_start = self.recs.iter().map(|r| r.gone == Gone::No).collect();
        }
    }

    /// The runs begun last have ended; `finished`: the export's file is in place. The first
    /// time it is, what the room held when those runs began must all be in the file (a
    /// finished export is left alone by the next runs: what came later need not be in it).
    pub fn runs_ended(&mut self, finished: bool) {
        if finished && !self.finished {
            self.finished = true;
            for (r, there) in self.recs.iter_mut().zip(&self.at_run_start) {
                r.before_final = *there && r.gone == Gone::No;
            }
        }
    }

    fn label(&self, i: usize) -> String {
        let r = &self.recs[i];
        format!(
            "message #{i} ({}, {}{})",
            r.marker,
            if r.has_id { "with _id" } else { "no _id" },
            match r.created {
                Created::At(_) => "",
                Created::Unreadable => ", unreadable time",
                Created::Ambiguous => ", odd time",
            }
        )
    }

    /// The records an export file in `format` holds, in its order (by their bytes for jsonl
    /// and json, by their markers for the others).
    fn sequence(&self, bytes: &[u8], format: &str, name: &str) -> Result<Vec<usize>, String> {
        let text = std::str::from_utf8(bytes).map_err(|e| format!("{name} is not UTF-8: {e}"))?;
        match format {
            "jsonl" => {
                if !text.is_empty() && !text.ends_with('\n') {
                    return Err(format!(
                        "{name} does not end with a line end: its last line is cut ({})",
                        crate::process::shorten(text.lines().last().unwrap_or(""), 120)
                    ));
                }
                text.lines()
                    .enumerate()
                    .map(|(k, line)| self.record_of(line, &format!("line {} of {name}", k + 1)))
                    .collect()
            }
            "json" => {
                let all: Vec<Box<serde_json::value::RawValue>> = serde_json::from_str(text)
                    .map_err(|e| format!("{name} is not a JSON array of records: {e}"))?;
                all.iter()
                    .enumerate()
                    .map(|(k, raw)| {
                        self.record_of(raw.get(), &format!("element {} of {name}", k + 1))
                    })
                    .collect()
            }
            "csv" => {
                let mut reader = csv::ReaderBuilder::new()
                    .flexible(true)
                    .from_reader(text.as_bytes());
                let mut seq = Vec::new();
                for (k, row) in reader.records().enumerate() {
                    let row = row.map_err(|e| format!("{name} is not CSV: {e}"))?;
                    let mut found: Vec<&str> = row.iter().flat_map(markers).collect();
                    found.dedup();
                    match found.as_slice() {
                        [one] => seq.push(self.by_marker[*one]),
                        [] => return Err(format!("row {} of {name} holds no message", k + 1)),
                        more => {
                            return Err(format!(
                                "row {} of {name} holds several messages: {more:?}",
                                k + 1
                            ))
                        }
                    }
                }
                Ok(seq)
            }
            _ => {
                let seq: Vec<usize> = markers(text)
                    .into_iter()
                    .filter_map(|m| self.by_marker.get(m).copied())
                    .collect();
                let footer = format!("{} messages, exported", seq.len());
                if !text.contains(&footer) {
                    let found = text
                        .rfind(" messages, exported")
                        .map(|end| {
                            let start = text[..end].rfind(['\n', '>']).map_or(0, |p| p + 1);
                            text[start..end].to_owned()
                        })
                        .unwrap_or_else(|| "no footer".into());
                    return Err(format!(
                        "{name} holds {} messages but its footer says {found:?}",
                        seq.len()
                    ));
                }
                if format == "html" && !text.trim_end().ends_with("</html>") {
                    return Err(format!("{name} does not end with </html>"));
                }
                Ok(seq)
            }
        }
    }

    /// The record `written` (a jsonl line, a json element) is, byte for byte (whitespace
    /// outside strings aside).
    fn record_of(&self, written: &str, what: &str) -> Result<usize, String> {
        let compact = minify(written);
        if let Some(&i) = self.by_text.get(&compact) {
            return Ok(i);
        }
        let found = markers(written);
        match found.first().and_then(|m| self.by_marker.get(*m)) {
            Some(&i) => {
                let sent = minify(&self.recs[i].text);
                let at = sent
                    .bytes()
                    .zip(compact.bytes())
                    .position(|(a, b)| a != b)
                    .unwrap_or(sent.len().min(compact.len()));
                let around = |t: &str| {
                    let mut from = at.saturating_sub(30);
                    while !t.is_char_boundary(from) {
                        from -= 1;
                    }
                    let mut to = (at + 50).min(t.len());
                    while !t.is_char_boundary(to) {
                        to += 1;
                    }
                    t[from..to].to_owned()
                };
                Err(format!(
                    "{what} is {} but not as the service sent it (only whitespace outside strings may differ); from byte {at}: sent …{}…, written …{}…",
                    self.label(i),
                    around(&sent),
                    around(&compact)
                ))
            }
            None => Err(format!(
                "{what} is no message of the room: {}",
                crate::process::shorten(written, 200)
            )),
        }
    }

    /// Whether record `i` may be in the file any number of times: it has no id, and a record
    /// was deleted while the export went on (the lead's rule for records without an id: each
    /// as many times as the room holds it, when nothing was deleted near it).
    fn unrecognisable(&self, i: usize) -> bool {
        !self.recs[i].has_id && self.deleted_while_exporting
    }

    /// Checks an export file: exactly the room's messages not deleted before they were
    /// fetched (and kept by `filter`), each once, in order, as sent.
    pub fn check_file(&self, path: &Path, format: &str, filter: &Filter) -> Result<(), String> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let bytes = std::fs::read(path).map_err(|e| format!("{name}: {e}"))?;
        let all = self.sequence(&bytes, format, &name)?;
        for &i in &all {
            let r = &self.recs[i];
            if r.gone == Gone::BeforeStart {
                return Err(format!(
                    "{} is in {name} but was deleted before the export began",
                    self.label(i)
                ));
            }
            if filter.kept(r.created) == Kept::No {
                return Err(format!(
                    "{} is in {name} but its time is outside {:?}",
                    self.label(i),
                    filter.args()
                ));
            }
        }
        let last = all.iter().max().copied();
        let seq: Vec<usize> = all
            .iter()
            .copied()
            .filter(|&i| !self.unrecognisable(i))
            .collect();
        let mut first_at: HashMap<usize, usize> = HashMap::new();
        for (k, &i) in seq.iter().enumerate() {
            if let Some(first) = first_at.insert(i, k) {
                let times = seq.iter().filter(|&&j| j == i).count();
                return Err(format!(
                    "{} is in {name} {times} times (entries {} and {}); {name} has {} entries for {} messages",
                    self.label(i),
                    first + 1,
                    k + 1,
                    all.len(),
                    self.expected_count(filter)
                ));
            }
        }
        if let Some(k) = seq.windows(2).position(|w| w[1] < w[0]) {
            return Err(format!(
                "{name} is out of order: entry {} is {}, after {}",
                k + 2,
                self.label(seq[k + 1]),
                self.label(seq[k])
            ));
        }
        let missing: Vec<usize> = (0..self.recs.len())
            .filter(|&i| {
                let r = &self.recs[i];
                !self.unrecognisable(i)
                    && r.gone == Gone::No
                    && filter.kept(r.created) == Kept::Yes
                    && (r.before_final || last.is_some_and(|l| i <= l))
                    && !first_at.contains_key(&i)
            })
            .collect();
        if let Some(&first) = missing.first() {
            return Err(format!(
                "{} of the room's messages are missing from {name} ({} entries; {} expected), the first {}{}",
                missing.len(),
                all.len(),
                self.expected_count(filter),
                self.label(first),
                if missing.len() > 1 {
                    format!(", the last {}", self.label(*missing.last().expect("some")))
                } else {
                    String::new()
                }
            ));
        }
        Ok(())
    }

    /// How many messages the file must hold at least.
    fn expected_count(&self, filter: &Filter) -> usize {
        self.recs
            .iter()
            .filter(|r| r.gone == Gone::No && r.before_final && filter.kept(r.created) == Kept::Yes)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_markers() {
        assert_eq!(iso(FIRST_MS, None), "2024-01-02T00:00:00.000Z");
        assert_eq!(
            iso(FIRST_MS + 3_723_004, Some(60)),
            "2024-01-02T02:02:03.004+01:00"
        );
        assert_eq!(
            markers("a Mk000001q Mk12q Mk000002qMk000003q"),
            ["Mk000001q", "Mk000002q", "Mk000003q"]
        );
        assert_eq!(
            minify("{ \"a b\" : [ 1 , \"\\\" x\" ] }"),
            "{\"a b\":[1,\"\\\" x\"]}"
        );
    }
}
