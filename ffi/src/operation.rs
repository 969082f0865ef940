//! Calls by an operation's name with JSON params and a JSON answer: what a
//! binding generated from the declarations (Go, the JVM) calls, so that it has
//! one C function per kind of call rather than one per operation. The params
//! and the answer are those of the conformance vectors and of
//! `roomchat::Client::call_operation`: the declared wire names, every check
//! made by core before anything is sent.

use std::ffi::c_char;

use roomchat::wire::{Operation, WireResponse};
use roomchat::{JsonPage, Pages};
use serde_json::Value;

use crate::answer::{respond, roomchat_response_meta, write_meta};
use crate::boundary::{
    borrow_arg, free_box, json_arg, mut_arg, opt_text_arg, out_arg, text_arg, write_out,
    write_string,
};
use crate::client::roomchat_client;
use crate::error::{guard, guard_value, roomchat_error, roomchat_result, Failure};
use crate::glue::next_item;
use crate::models::{roomchat_user, roomchat_users_iter};
use crate::view::roomchat_cancel_token;

fn operation_arg(operation: *const c_char) -> Result<Operation, Failure> {
    let name = text_arg(operation, "operation")?;
    Operation::from_name(name)
        .ok_or_else(|| Failure::invalid(format!("operation {name:?} is not a declared operation")))
}

/// Calls the declared operation named `operation` (`list_users`,
/// `create_chat_room`, …; `raw` for a raw request) with `params_json`, a JSON
/// object of its params by their wire names (NULL: none), exactly as the
/// conformance vectors give them. A name that is not declared, or params that
/// are not JSON, give `ROOMCHAT_RESULT_INVALID_ARGUMENT`; params the
/// declaration refuses give `ROOMCHAT_RESULT_VALIDATION`; nothing is sent
/// then. On success writes the answer's JSON text (its typed record, unknown
/// fields kept) to `*result_json_out` (owned by the caller: free with
/// `roomchat_string_free`) and, when `meta_out` is not NULL, the answer's
/// status, headers and attempts to `*meta_out` (free with
/// `roomchat_response_meta_free`); on failure writes nothing there, the
/// details to `*err_out` when it is not NULL (free with `roomchat_error_free`).
#[no_mangle]
pub extern "C" fn roomchat_client_call_operation(
    client: *const roomchat_client,
    operation: *const c_char,
    params_json: *const c_char,
    result_json_out: *mut *mut c_char,
    meta_out: *mut *mut roomchat_response_meta,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    guard(err_out, || {
        out_arg(result_json_out, "result_json_out")?;
        let client = borrow_arg(client, "client")?;
        let operation = operation_arg(operation)?;
        let params = json_arg(params_json, "params_json")?.unwrap_or(Value::Null);
        let (text, meta) = respond(&client.client, meta_out, |c| {
            c.call_operation_text(operation, &params)
        })?;
        write_string(result_json_out, text);
        write_meta(meta_out, meta);
        Ok(())
    })
}

/// The pages of a declared listing, one request a step: see
/// `roomchat_client_operation_pages`.
#[allow(non_camel_case_types)]
pub struct roomchat_operation_pages {
    pages: Pages<JsonPage>,
}

/// Starts a lazy iteration over the pages of the declared listing `operation`
/// (`list_users`, `room_messages`, `channel_messages`, `list_members`):
/// nothing is sent until `roomchat_operation_pages_next`. `params_json` as for
/// `roomchat_client_call_operation`; its `limit` is the page size (default
/// 200), its `skip` where to start (default 0; to resume, an earlier
/// iteration's `roomchat_operation_pages_next_skip`). An operation that does
/// not page gives `ROOMCHAT_RESULT_VALIDATION`. Writes the iterator to
/// `*pages_out` (free with `roomchat_operation_pages_free`); it keeps its own
/// reference to the client.
#[no_mangle]
pub extern "C" fn roomchat_client_operation_pages(
    client: *const roomchat_client,
    operation: *const c_char,
    params_json: *const c_char,
    pages_out: *mut *mut roomchat_operation_pages,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    guard(err_out, || {
        out_arg(pages_out, "pages_out")?;
        let client = borrow_arg(client, "client")?;
        let operation = operation_arg(operation)?;
        let params = json_arg(params_json, "params_json")?.unwrap_or(Value::Null);
        let pages = client.client.operation_pages(operation, &params)?;
        write_out(pages_out, roomchat_operation_pages { pages });
        Ok(())
    })
}

/// Fetches the next page: on `ROOMCHAT_RESULT_OK` writes its JSON text (the
/// operation's answer) to `*page_json_out` (owned by the caller: free with
/// `roomchat_string_free`). Returns `ROOMCHAT_RESULT_ITERATION_DONE` at the
/// end (after an empty page, or a page that reaches the listing's total),
/// never after an error: an error is returned as it is, details in
/// `*err_out` when it is not NULL, and the next call fetches the same page
/// again (bound your own retries). A page size outside the declared limits is
/// `ROOMCHAT_RESULT_VALIDATION` once, then the end. `cancel` (NULL: none)
/// cancels this step only: a cancelled step returns
/// `ROOMCHAT_RESULT_CANCELLED` and the next fetches the same page.
#[no_mangle]
pub extern "C" fn roomchat_operation_pages_next(
    pages: *mut roomchat_operation_pages,
    cancel: *const roomchat_cancel_token,
    page_json_out: *mut *mut c_char,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    let mut done = false;
    let code = guard(err_out, || {
        out_arg(page_json_out, "page_json_out")?;
        let pages = mut_arg(pages, "pages")?;
        // SAFETY: NULL or a live token of this library (documented).
        let step = match unsafe { cancel.as_ref() } {
            Some(cancel) => pages.pages.next_with_cancel(&cancel.token),
            None => pages.pages.next_page(),
        };
        match step {
            None => done = true,
            Some(page) => write_string(page_json_out, page?.into_value().to_string()),
        }
        Ok(())
    });
    if done && code == roomchat_result::Ok {
        roomchat_result::IterationDone
    } else {
        code
    }
}

/// Where the iteration stands: the `skip` of the page
/// `roomchat_operation_pages_next` fetches next. 0 for NULL.
#[no_mangle]
pub extern "C" fn roomchat_operation_pages_next_skip(
    pages: *const roomchat_operation_pages,
) -> u64 {
    guard_value(0, || {
        // SAFETY: NULL or a live iterator of this library (documented).
        unsafe { pages.as_ref() }.map_or(0, |p| p.pages.next_skip())
    })
}

/// Frees an iterator. NULL does nothing. When it held the last hold of a log
/// callback (or observer), the callback's destroy notifier runs now, on this
/// thread.
#[no_mangle]
pub extern "C" fn roomchat_operation_pages_free(pages: *mut roomchat_operation_pages) {
    free_box(pages)
}

/// The wire request of the declared operation `operation` with `params_json`
/// (as for `roomchat_client_call_operation`), built without sending anything:
/// for a program that brings its own HTTP stack, and for the conformance
/// vectors. Writes `{"method", "path", "query": [[name, value]…], "body",
/// "auth"}` as JSON text to `*request_json_out` (free with
/// `roomchat_string_free`), with `"url"` when `base_url` is not NULL (`key`,
/// NULL for none, as the key's query parameter). Params the declaration
/// refuses give `ROOMCHAT_RESULT_VALIDATION`, details in `*err_out`.
#[no_mangle]
pub extern "C" fn roomchat_wire_build_request(
    operation: *const c_char,
    params_json: *const c_char,
    base_url: *const c_char,
    key: *const c_char,
    request_json_out: *mut *mut c_char,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    guard(err_out, || {
        out_arg(request_json_out, "request_json_out")?;
        let operation = operation_arg(operation)?;
        let params = json_arg(params_json, "params_json")?.unwrap_or(Value::Null);
        let base_url = opt_text_arg(base_url, "base_url")?;
        let key = opt_text_arg(key, "key")?;
        let request = operation.build(&params)?;
        let mut json = request.to_json();
        if let Some(base) = base_url {
            json["url"] = Value::String(request.url(base, key));
        }
        write_string(request_json_out, json.to_string());
        Ok(())
    })
}

/// The answer of the declared operation `operation` decoded from a wire
/// response, without I/O: `status` (100 to 599), `headers_json` (NULL: none;
/// a JSON array of `["name", "value"]` pairs) and the body's `body_len` bytes
/// at `body` (NULL with 0: empty). On success writes the record's JSON text
/// (unknown fields kept) to `*result_json_out` (free with
/// `roomchat_string_free`); an error answer gives its kind, details in
/// `*err_out`, as a call would.
#[no_mangle]
pub extern "C" fn roomchat_wire_decode_response(
    operation: *const c_char,
    status: u16,
    headers_json: *const c_char,
    body: *const u8,
    body_len: usize,
    result_json_out: *mut *mut c_char,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    guard(err_out, || {
        out_arg(result_json_out, "result_json_out")?;
        let operation = operation_arg(operation)?;
        if !(100..=599).contains(&status) {
            return Err(Failure::invalid(format!(
                "status {status} is not 100 to 599"
            )));
        }
        let mut headers = Vec::new();
        if let Some(value) = json_arg(headers_json, "headers_json")? {
            let bad =
                || Failure::invalid("headers_json must be an array of [\"name\", \"value\"] pairs");
            for pair in value.as_array().ok_or_else(bad)? {
                match pair.as_array().map(Vec::as_slice) {
                    Some([Value::String(n), Value::String(v)]) => {
                        headers.push((n.clone(), v.clone()))
                    }
                    _ => return Err(bad()),
                }
            }
        }
        let body = if body_len == 0 {
            Vec::new()
        } else if body.is_null() {
            return Err(Failure::invalid("body is NULL with a length above 0"));
        } else {
            // SAFETY: the caller gives `body_len` readable bytes at `body` (documented).
            unsafe { std::slice::from_raw_parts(body, body_len) }.to_vec()
        };
        let response = WireResponse::new(status, headers, body);
        write_string(result_json_out, operation.decode_text(&response)?);
        Ok(())
    })
}

/// `roomchat_users_iter_next` with this step's request cancelled by `cancel`
/// (NULL: none; in place of the client's own token, if any): a cancelled
/// step returns `ROOMCHAT_RESULT_CANCELLED` and cancels nothing else, and
/// the next step fetches the same page again.
#[no_mangle]
pub extern "C" fn roomchat_users_iter_next_cancellable(
    iter: *mut roomchat_users_iter,
    cancel: *const roomchat_cancel_token,
    user_out: *mut *mut roomchat_user,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    next_item(iter, user_out, "user_out", err_out, |iter| {
        // SAFETY: NULL or a live token of this library (documented).
        let step = match unsafe { cancel.as_ref() } {
            Some(cancel) => iter.users.next_with_cancel(&cancel.token),
            None => iter.users.next(),
        };
        step.map(|user| user.map(roomchat_user::from))
    })
}
