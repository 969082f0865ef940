//! Runs the shared conformance vectors of `tests/conformance/` through the pure layer.
//! The C, Python and Node packages run the same files.

use std::path::PathBuf;
use std::time::Duration;

use roomchat::wire::{self, Operation, WireResponse};
use serde_json::Value;

fn vectors(file: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/conformance")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn text(v: &Value, key: &str) -> String {
    v[key].as_str().unwrap_or_default().to_owned()
}

fn pairs(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    (
                        p[0].as_str().unwrap().to_owned(),
                        p[1].as_str().unwrap().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn operation(v: &Value) -> Operation {
    let name = text(v, "operation");
    Operation::from_name(&name).unwrap_or_else(|| panic!("unknown operation {name}"))
}

#[test]
fn request_vectors() {
    let all = vectors("requests.json");
    for v in &all {
        let name = text(v, "name");
        let built = operation(v).build(&v["params"]);
        if let Some(kind) = v["expect_error"].as_str() {
            assert_eq!(built.map(|_| ()).unwrap_err().kind().name(), kind, "{name}");
            continue;
        }
        let request = built.unwrap_or_else(|e| panic!("{name}: {e}"));
        let expect = &v["expect"];
        assert_eq!(request.method, text(expect, "method"), "{name}");
        assert_eq!(request.path, text(expect, "path"), "{name}");
        assert_eq!(request.query, pairs(&expect["query"]), "{name}");
        let body: Value = request
            .body
            .as_deref()
            .map(|b| serde_json::from_str(b).unwrap())
            .unwrap_or(Value::Null);
        assert_eq!(body, expect["body"], "{name}");
        if let Some(url) = expect["url"].as_str() {
            assert_eq!(
                request.url("https://api.example.com", Some("REDACTED")),
                url,
                "{name}"
            );
        }
    }
    println!("{} request vectors", all.len());
}

#[test]
fn response_vectors() {
    let all = vectors("responses.json");
    for v in &all {
        let name = text(v, "name");
        let response = WireResponse::new(
            v["status"].as_u64().unwrap() as u16,
            pairs(&v["headers"]),
            text(v, "body").into_bytes(),
        );
        let expect = &v["expect"];
        match operation(v).decode(&response) {
            Ok(value) => assert_eq!(
                &value,
                expect
                    .get("ok")
                    .unwrap_or_else(|| panic!("{name}: expected an error, got {value}")),
                "{name}"
            ),
            Err(e) => {
                let want = expect
                    .get("error")
                    .unwrap_or_else(|| panic!("{name}: unexpected error {e}"));
                assert_eq!(e.kind().name(), text(want, "kind"), "{name}: {e}");
                assert_eq!(e.status().map(u64::from), want["status"].as_u64(), "{name}");
                if let Some(message) = want["message"].as_str() {
                    assert_eq!(e.message(), message, "{name}");
                }
                assert_eq!(e.event_id(), want["event_id"].as_str(), "{name}");
                let service = &want["service"];
                assert_eq!(
                    (
                        e.service_message(),
                        e.service_error(),
                        e.service_error_message()
                    ),
                    (
                        service["message"].as_str(),
                        service["error"].as_str(),
                        service["errorMessage"].as_str()
                    ),
                    "{name}: the service's texts"
                );
                assert_eq!(
                    e.retry_after(),
                    want["retry_after_ms"].as_u64().map(Duration::from_millis),
                    "{name}"
                );
            }
        }
    }
    println!("{} response vectors", all.len());
}

/// The borrowed view of a users page decodes every `list_users` vector as the
/// model does: the same fields (serialized), or the same error.
#[test]
fn users_page_views_match_the_model() {
    let all = vectors("responses.json");
    let mut checked = 0;
    for v in all.iter().filter(|v| text(v, "operation") == "list_users") {
        let name = text(v, "name");
        let response = WireResponse::new(
            v["status"].as_u64().unwrap() as u16,
            pairs(&v["headers"]),
            text(v, "body").into_bytes(),
        );
        let model = wire::decode_list_users(&response);
        let view = wire::decode_list_users_view(&response);
        match (model, view) {
            (Ok(model), Ok(view)) => assert_eq!(
                serde_json::to_value(&view).unwrap(),
                serde_json::to_value(&model).unwrap(),
                "{name}"
            ),
            (Err(model), Err(view)) => {
                assert_eq!(view.kind(), model.kind(), "{name}");
                assert_eq!(view.to_string(), model.to_string(), "{name}");
            }
            (model, view) => panic!("{name}: model {model:?}, view {view:?}"),
        }
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} list_users vectors");
    println!("{checked} list_users vectors decoded as views");
}
