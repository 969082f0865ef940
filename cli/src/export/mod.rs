//! `roomchat export`: rooms' histories to files, resumable and lossless.
//!
//! The service lists a room's messages oldest first, paged by `skip` from the oldest
//! (`room_messages`, `channel_messages`): a message posted during the export is appended
//! after the others and shifts no page, so `skip` is a sound resume point. Each room's export
//! appends every page's records, as the service sent them, to a part file and records in a
//! checkpoint (replaced atomically) how much of the part file is valid, the next `skip` and the
//! last message listed (see [`store`]). Pages overlap by one message, which must be the last
//! one listed; when it is not (messages before it were deleted), the export resynchronises
//! against every message the part file holds (see [`resume`]): a message is written once
//! whatever was deleted meanwhile. A message is told by its `_id`, or by its bytes when it has
//! none ([`record`]).
//! A jsonl export's final file is the part file, renamed once the listing's end is reached.
//! The other formats are rendered while the pages come: a converter thread writes the format's
//! opening to a staging file, renders what the part file held already (a resumed export), then
//! each page's new lines as the fetch hands them over, fsyncing every 200 ms; at the listing's
//! end it writes the closing, and the staging file is fsynced and renamed into place. The part
//! file stays the source of truth: a staging file left by a kill is rebuilt by the next run.
//! (Its last pages are not fsynced: the rendered file, fsynced and renamed, is the commit of
//! the listing's end; a stop before it resumes from the last checkpoint.)
//!
//! Where things are: [`command`] (the flags, the run, one target's export), [`job`] (what every
//! step shares: the job, the commit cadence, the Ctrl-C error), [`naming`]
//! (targets to files, collisions), [`lock`] (one run per output), [`fetch`] (pages asked for
//! patiently, the page loop, the listing's end), [`resume`] (where a target starts, how a page
//! is placed, the resync), [`record`] (a record's identity and line), [`commit`] (the
//! committer, the final file), [`convert`] (the renderer thread), [`time`] (the time filter),
//! [`dry_run`], [`progress`], [`store`] (the files, opened safely), [`formats`] (the
//! renderers).

mod command;
mod commit;
mod convert;
mod dry_run;
mod fetch;
mod formats;
mod job;
mod lock;
mod naming;
mod progress;
mod record;
mod resume;
mod store;
mod time;

pub use command::{command, run};
/// Also the import's: its result file is written as the export writes its checkpoint.
pub(crate) use store::{io_error, write_atomically};
// The parsers of outside input, for the fuzz target (crate::fuzzing).
pub(crate) use formats::id_and_time as shown_id_and_time;
pub(crate) use formats::Format;
pub(crate) use naming::{file_name, LONGEST_STEM};
pub(crate) use record::head as record_head;
/// Also the operation commands': an answer printed keeps its bytes as a record does.
pub(crate) use record::{indented_text, line_text as record_line};
pub(crate) use time::{created_time, keep as keep_time, parse_time, Created};
/// Every format's name.
pub(crate) const FORMAT_NAMES: [&str; 5] = Format::NAMES;

/// Renders one part-file line in `format`, whole (title, the record, footer), into `out`.
pub(crate) fn render_one(format: Format, line: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    let title = formats::Title {
        room: "room",
        room_name: Some("Room"),
        channel: None,
    };
    let footer = formats::Footer {
        messages: 1,
        exported_at: "2024-01-16T09:00:00Z",
    };
    let mut renderer = formats::Renderer::begin(format, out, &title)?;
    renderer.record(line)?;
    renderer.end(&footer).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendered_page_by_page_as_rendered_whole() {
        let records = [
            r#"{"_id":"a","created":"2024-01-15T15:21:44.293Z","message":"one\ntwo, \"three\"","user":{"username":"ann","isModerator":true,"uniqueUserIdentifier":"u\u00e9"}}"#,
            r#"{"_id":"b","created":"later <today>","message":"<b>&</b>","channel":"c1","file":{"url":"https://f.example/x?a&b","fileName":"x.png"},"likes":[{"_id":"l"}]}"#,
            r#"{"_id":"c","message":"pick","user":{"username":"bot"},"actionButtons":[{"displayText":"A","url":"https://a.example"},{"payload":"p"}]}"#,
            r#"{"_id":"d","created":"2024-01-15T15:21:44Z","message":"","user":null,"file":null}"#,
        ];
        let part: String = records.iter().map(|r| format!("{r}\n")).collect();
        let title = formats::Title {
            room: "r",
            room_name: Some("Room"),
            channel: Some("c1"),
        };
        let footer = formats::Footer {
            messages: 4,
            exported_at: "2024-01-16T00:00:00Z",
        };
        for format in Format::NAMES.map(|n| Format::parse(n).unwrap()) {
            let mut whole = Vec::new();
            formats::render(format, part.as_bytes(), &mut whole, &title, &footer).unwrap();
            // A resumed export: the part file's first record, then pages of one and two.
            let first = records[0].len() + 1;
            let mut pieces = formats::Renderer::begin(format, Vec::new(), &title).unwrap();
            pieces.records(&part.as_bytes()[..first]).unwrap();
            pieces
                .chunk(&part.as_bytes()[first..first + records[1].len() + 1])
                .unwrap();
            pieces
                .chunk(&part.as_bytes()[first + records[1].len() + 1..])
                .unwrap();
            let pieces = pieces.end(&footer).unwrap();
            assert_eq!(
                String::from_utf8(pieces).unwrap(),
                String::from_utf8(whole.clone()).unwrap(),
                "{format:?}"
            );
            let text = String::from_utf8(whole).unwrap();
            match format {
                Format::Jsonl => assert_eq!(text, part),
                Format::Json => {
                    let all: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
                    assert_eq!(all.len(), 4);
                }
                Format::Csv => assert_eq!(
                    csv::Reader::from_reader(text.as_bytes()).records().count(),
                    4
                ),
                Format::Txt => {
                    assert!(text.starts_with("Room Room (r), channel c1\n"), "{text}");
                    assert!(
                        text.contains(
                            "[2024-01-15 15:21:44 UTC] ann (moderator): one\n    two, \"three\"\n"
                        ),
                        "{text}"
                    );
                    assert!(text.contains("[later <today>] ?: <b>&</b>\n    [file: x.png https://f.example/x?a&b]\n"), "{text}");
                    assert!(
                        text.contains("bot (bot): pick\n    buttons: [A] [p]\n"),
                        "{text}"
                    );
                    assert!(
                        text.ends_with("\n\n4 messages, exported 2024-01-16T00:00:00Z\n"),
                        "{text}"
                    );
                }
                Format::Html => {
                    assert!(
                        text.contains(
                            "<time datetime=\"later &lt;today&gt;\">later &lt;today&gt;</time>"
                        ),
                        "{text}"
                    );
                    assert!(text.ends_with("<footer class=\"page\"><p>4 messages, exported 2024-01-16T00:00:00Z</p></footer>\n</main>\n</body>\n</html>\n"), "{text}");
                }
            }
        }
    }

    #[test]
    fn a_line_that_is_not_a_record_is_an_error() {
        let title = formats::Title {
            room: "r",
            room_name: None,
            channel: None,
        };
        for format in [Format::Csv, Format::Txt, Format::Html] {
            let mut out = formats::Renderer::begin(format, Vec::new(), &title).unwrap();
            let e = out.chunk(b"{\"_id\":\"a\"}\nnot json\n").unwrap_err();
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{format:?}");
        }
        let mut out = formats::Renderer::begin(Format::Json, Vec::new(), &title).unwrap();
        let e = out.chunk(b"\xff\n").unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
    }

    #[test]
    fn html_escapes_everything() {
        let line = r#"{"_id":"a<b","created":"2024-01-15T15:21:44.293Z","message":"<script>alert(1)</script> & \"x\"","user":{"username":"<img src=x onerror=alert(1)>"},"file":{"url":"javascript:alert(1)","fileName":"<b>f</b>"},"actionButtons":[{"type":"url","displayText":"<i>go</i>","url":"https://e.example/?a=1&b=\"2\""}]}"#;
        let mut out = Vec::new();
        let title = formats::Title {
            room: "r<1>",
            room_name: Some("<Room>"),
            channel: None,
        };
        let footer = formats::Footer {
            messages: 1,
            exported_at: "now<",
        };
        formats::render(Format::Html, line.as_bytes(), &mut out, &title, &footer).unwrap();
        let html = String::from_utf8(out).unwrap();
        for bad in [
            "<script>",
            "<img",
            "<b>f",
            "<i>go",
            "javascript:",
            "<Room>",
            "r<1>",
            "now<",
        ] {
            assert!(!html.contains(bad), "{bad} in {html}");
        }
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;x&quot;"));
        assert!(html.contains("href=\"https://e.example/?a=1&amp;b=&quot;2&quot;\""));
        assert!(html.contains("prefers-color-scheme: dark"));
    }
}
