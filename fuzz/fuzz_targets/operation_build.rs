//! `wire::Operation::parse` on any name, and `Operation::build` of every
//! operation with arbitrary JSON params. Checks: no panic; a refusal is a
//! `validation` error; a request it builds has a known method, the method, path
//! and key its declaration gives (`Operation::spec`; for `raw`: the caller's
//! path, one leading `/`), a path with no `?`, `#`, whitespace or control
//! character (declared operations: only unreserved characters, `%XX` and `/`),
//! no `.`/`..` segment, no query
//! parameter that is the key's, a JSON body when it has one; its URL parses,
//! carries the key once, first; and neither its redacted target nor any error
//! text holds the key.
#![no_main]

use libfuzzer_sys::arbitrary::{self, Arbitrary};
use libfuzzer_sys::fuzz_target;
use roomchat::wire::{encode_query_component, Operation};
use roomchat::ErrorKind;
use roomchat_fuzz::{only_unreserved_and_escapes, ArbJson, ArbStr};

#[derive(Arbitrary, Debug)]
struct Input {
    name: ArbStr,
    op: u8,
    params: ArbJson,
}

const KEY: &str = "sk_FUZZ_key_9f3b/é&x=1";

fuzz_target!(|input: Input| {
    let name = input.name.get();
    match Operation::parse(&name) {
        Ok(op) => assert_eq!(op.name(), name),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Validation);
            assert!(Operation::from_name(&name).is_none());
        }
    }

    let op = Operation::ALL[input.op as usize % Operation::ALL.len()];
    assert_eq!(Operation::parse(op.name()).ok(), Some(op));
    let params = input.params.to_value();
    let params_text = params.to_string();
    let holds_key = params_text.contains(KEY) || params_text.contains(&encode_query_component(KEY));
    let request = match op.build(&params) {
        Ok(request) => request,
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Validation, "{op}: {e}");
            if !holds_key {
                assert!(!e.to_string().contains(KEY));
            }
            return;
        }
    };
    assert!(
        matches!(
            request.method.as_str(),
            "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
        ),
        "{op}: method {}",
        request.method
    );
    let path = &request.path;
    assert!(
        path.starts_with('/') && !path.starts_with("//"),
        "{op}: {path}"
    );
    assert!(
        !path.contains(['?', '#']) && !path.chars().any(|c| c.is_control() || c.is_whitespace()),
        "{op}: {path:?}"
    );
    assert!(
        !path.split('/').any(|s| s == "." || s == ".."),
        "{op}: {path}"
    );
    match op.spec() {
        None => assert_eq!(Some(path.as_str()), params["path"].as_str()),
        Some(spec) => {
            // What the declaration says: the method, the path (each parameter's
            // value in its own segment), the key.
            assert!(spec.is_sent_as(&request.method, path), "{op}: {path}");
            assert_eq!(Operation::sent_as(&request.method, path), Some(op));
            assert!(
                path.split('/').all(only_unreserved_and_escapes),
                "{op}: {path}"
            );
            assert_eq!(request.auth, spec.auth, "{op}");
        }
    }
    let auth_name = request.auth_param();
    assert!(request
        .query
        .iter()
        .all(|(n, _)| n != "auth" && Some(n.as_str()) != auth_name));
    if let Some(body) = &request.body {
        // serde_json's parser stops at 128 levels of nesting; the body may have more.
        if let Err(e) = serde_json::from_str::<serde_json::Value>(body) {
            assert!(e.to_string().contains("recursion limit"), "{op}: body {e}");
        }
    }
    let json = request.to_json();
    assert_eq!(json["path"], path.as_str());

    let url = request.url("https://api.example.com", Some(KEY));
    if op != Operation::Raw || path.is_ascii() {
        assert!(http::Uri::try_from(url.as_str()).is_ok(), "{op}: {url}");
    }
    if let Some(name) = auth_name {
        let query = url.split_once('?').map(|(_, q)| q).unwrap_or_default();
        let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        assert_eq!(pairs.first(), Some(&(name.to_owned(), KEY.to_owned())));
        assert_eq!(pairs.iter().filter(|(n, _)| n == name).count(), 1);
    }
    if !holds_key {
        let redacted = request.redacted_target();
        assert!(!redacted.contains(KEY) && !redacted.contains(&encode_query_component(KEY)));
        assert!(!format!("{request:?}").contains(KEY));
    }
});
