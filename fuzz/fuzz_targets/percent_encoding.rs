//! `wire::encode_query_component`, `wire::encode_path_segment` and
//! `WireRequest::url` / `redacted_target` on arbitrary text. Checks: the
//! encodings hold only unreserved characters and `%XX`; decoding them gives
//! the input back; a path segment never is `.` or `..` and never holds `/`;
//! the query of a built URL, parsed by an independent parser, gives back the
//! key first and then exactly the pairs given; the redacted target never holds
//! the key.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use roomchat::wire::{encode_path_segment, encode_query_component, WireRequest};
use roomchat::RawAuth;
use roomchat_fuzz::only_unreserved_and_escapes;

#[derive(Arbitrary, Debug)]
struct Input {
    text: String,
    pairs: Vec<(String, String)>,
    public: bool,
}

/// A key no input can produce by chance (checked: an input holding it is not judged).
const KEY: &str = "sk_FUZZ_k&y=/%é 0x7e3";

fn decoded(text: &str) -> Vec<u8> {
    percent_encoding::percent_decode_str(text).collect()
}

fuzz_target!(|input: Input| {
    let text = &input.text;
    let query = encode_query_component(text);
    assert!(only_unreserved_and_escapes(&query), "{query}");
    assert_eq!(decoded(&query), text.as_bytes());

    let segment = encode_path_segment(text);
    assert!(only_unreserved_and_escapes(&segment), "{segment}");
    assert_eq!(decoded(&segment), text.as_bytes());
    assert!(segment != "." && segment != ".." && !segment.contains('/'));
    assert_eq!(segment.is_empty(), text.is_empty());

    let request = WireRequest {
        method: "GET".into(),
        path: format!("/consumer/api/v2/room/{segment}"),
        query: input.pairs.clone(),
        body: None,
        auth: if input.public {
            RawAuth::PublicKey
        } else {
            RawAuth::PrivateKey
        },
    };
    let url = request.url("https://api.example.com/", Some(KEY));
    let (before, query) = url.split_once('?').expect("the key makes a query");
    assert_eq!(before, format!("https://api.example.com{}", request.path));
    assert!(!query.contains(['#', ' ']));
    let parsed: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let name = if input.public { "publicKey" } else { "auth" };
    assert_eq!(parsed[0], (name.to_owned(), KEY.to_owned()));
    assert_eq!(&parsed[1..], &input.pairs[..]);
    assert!(http::Uri::try_from(url.as_str()).is_ok(), "{url}");

    let redacted = request.redacted_target();
    let holds_key = text.contains(KEY)
        || input
            .pairs
            .iter()
            .any(|(n, v)| n.contains(KEY) || v.contains(KEY));
    if !holds_key {
        assert!(!redacted.contains(KEY) && !redacted.contains(&encode_query_component(KEY)));
    }
});
