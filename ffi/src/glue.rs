//! The helpers the generated functions (`generated.rs`) are made of, written
//! once: reading a record's fields as C values, and the params handles'
//! setters and checks. No operation's name appears here.
// A helper goes unused while no declaration needs it (no record has a number field yet).
#![allow(dead_code)]

use std::borrow::Cow;
use std::ffi::{c_char, CString};
use std::ptr;

use serde_json::{Map, Value};

use crate::boundary::{json_arg, mut_arg, out_arg, text_arg, write_out};
use crate::error::{
    c_string, failure_text, guard, guard_value, roomchat_error, roomchat_result, Failure,
};

// ---- records ---------------------------------------------------------------------------

/// A text field as C keeps it (NULL when absent).
pub(crate) fn text(value: Option<String>) -> Option<CString> {
    value.map(c_string)
}

/// A JSON field as C keeps it: its text (NULL when absent).
pub(crate) fn json_text(value: Option<Value>) -> Option<CString> {
    value.map(|v| c_string(v.to_string()))
}

/// An identifier the customer chose (a string or a number) as C keeps it:
/// a string as its text (no JSON quotes), a number as its digits, another JSON
/// value as its JSON text; NULL when absent or null.
pub(crate) fn id_text(value: Option<Value>) -> Option<CString> {
    match value? {
        Value::Null => None,
        Value::String(text) => Some(c_string(text)),
        other => Some(c_string(other.to_string())),
    }
}

/// The fields a record does not name, as a JSON object's text.
pub(crate) fn extra_json(extra: &Map<String, Value>) -> CString {
    c_string(serde_json::to_string(extra).unwrap_or_else(|_| "{}".into()))
}

pub(crate) fn text_ptr(text: &Option<CString>) -> *const c_char {
    text.as_ref().map_or(ptr::null(), |t| t.as_ptr())
}

/// 1, 0, or -1 when absent, as `roomchat_user_is_moderator`.
pub(crate) fn flag(value: Option<bool>) -> i32 {
    value.map_or(-1, i32::from)
}

/// The number, or -1 when absent (as `roomchat_token_user_iat`); a negative
/// number is no count either, and reads as absent.
pub(crate) fn integer(value: Option<i64>) -> i64 {
    value.filter(|v| *v >= 0).unwrap_or(-1)
}

/// The number, or NaN when absent.
pub(crate) fn number(value: Option<f64>) -> f64 {
    value.unwrap_or(f64::NAN)
}

/// A record held by another, borrowed (NULL when absent).
pub(crate) fn nested<T>(value: &Option<Box<T>>) -> *const T {
    value
        .as_deref()
        .map_or(ptr::null(), |inner| inner as *const T)
}

/// How many records a list field holds (0 when the service left it out).
pub(crate) fn list_len<T>(value: &Option<Vec<T>>) -> usize {
    value.as_ref().map_or(0, Vec::len)
}

/// The `index`th record of a list field, borrowed (NULL when out of range or absent).
pub(crate) fn list_get<T>(value: &Option<Vec<T>>, index: usize) -> *const T {
    value
        .as_ref()
        .and_then(|items| items.get(index))
        .map_or(ptr::null(), |item| item as *const T)
}

/// Reads a record behind the panic boundary: `absent` for NULL.
pub(crate) fn read<T, R: Copy>(record: *const T, absent: R, read: impl FnOnce(&T) -> R) -> R {
    guard_value(absent, || {
        // SAFETY: a non-NULL pointer is a live record of this library (documented).
        unsafe { record.as_ref() }.map_or(absent, read)
    })
}

// ---- params handles --------------------------------------------------------------------

/// The values a params handle holds, and the failure of each setter whose last
/// call was invalid (as `roomchat_client_options` keeps them): the call refuses
/// params with a failure rather than sending without the value.
#[derive(Default)]
pub(crate) struct Params<P> {
    values: P,
    errors: Vec<(&'static str, Failure)>,
}

/// Writes a new params handle to `*out`.
pub(crate) fn new_params<H>(out: *mut *mut H, make: impl FnOnce() -> H) -> roomchat_result {
    guard(ptr::null_mut(), || {
        out_arg(out, "params_out")?;
        write_out(out, make());
        Ok(())
    })
}

/// One setter: `value` read from C is applied, or its failure recorded and
/// returned; a valid call clears the failure an earlier call of it left.
pub(crate) fn set_param<H, P, V>(
    handle: *mut H,
    params: impl FnOnce(&mut H) -> &mut Params<P>,
    setter: &'static str,
    value: impl FnOnce() -> Result<V, Failure>,
    apply: impl FnOnce(&mut P, V),
) -> roomchat_result {
    let mut code = roomchat_result::Ok;
    let guarded = guard(ptr::null_mut(), || {
        let params = params(mut_arg(handle, "params")?);
        params.errors.retain(|(name, _)| *name != setter);
        match value() {
            Ok(value) => apply(&mut params.values, value),
            Err(failure) => {
                code = failure.code();
                params.errors.push((setter, failure));
            }
        }
        Ok(())
    });
    if guarded == roomchat_result::Ok {
        code
    } else {
        guarded
    }
}

/// A string setter's value (copied).
pub(crate) fn text_value(value: *const c_char, name: &str) -> Result<String, Failure> {
    text_arg(value, name).map(str::to_owned)
}

/// A JSON setter's value, parsed from its text.
pub(crate) fn json_value(value: *const c_char, name: &str) -> Result<Value, Failure> {
    serde_json::from_str(text_arg(value, name)?)
        .map_err(|e| Failure::invalid(format!("{name} is not valid JSON: {e}")))
}

/// The setter of the fields the declaration does not type: a JSON object's
/// text, each of its fields sent as given (another JSON value is refused).
pub(crate) fn json_object_value(
    value: *const c_char,
    name: &str,
) -> Result<Map<String, Value>, Failure> {
    match json_value(value, name)? {
        Value::Object(fields) => Ok(fields),
        _ => Err(Failure::invalid(format!("{name} must be a JSON object"))),
    }
}

/// The values of a params handle for a call: the defaults (none set) for NULL,
/// a failure when a setter's last call was invalid.
pub(crate) fn params_arg<'a, H: 'a, P: Default + Clone>(
    handle: *const H,
    params: impl FnOnce(&'a H) -> &'a Params<P>,
) -> Result<Cow<'a, P>, Failure> {
    // SAFETY: a non-NULL pointer is a live handle of this library (documented).
    let Some(handle) = (unsafe { handle.as_ref() }) else {
        return Ok(Cow::Owned(P::default()));
    };
    let params = params(handle);
    match params.errors.first() {
        Some((setter, failure)) => Err(Failure::invalid(format!(
            "params: set_{setter} was given an invalid value: {}",
            failure_text(failure)
        ))),
        None => Ok(Cow::Borrowed(&params.values)),
    }
}

// ---- C arguments -----------------------------------------------------------------------

/// The JSON params of a call, from its C arguments: those given (`None`: not sent).
pub(crate) fn json_params<const N: usize>(params: [(&str, Option<Value>); N]) -> Value {
    Value::Object(
        params
            .into_iter()
            .filter_map(|(name, value)| Some((name.to_owned(), value?)))
            .collect(),
    )
}

/// An optional JSON object argument (NULL = absent): a JSON value of another
/// kind is refused here, as an invalid argument, rather than sent.
pub(crate) fn json_object_arg(ptr: *const c_char, name: &str) -> Result<Option<Value>, Failure> {
    match json_arg(ptr, name)? {
        None => Ok(None),
        Some(object @ Value::Object(_)) => Ok(Some(object)),
        Some(_) => Err(Failure::invalid(format!("{name} must be a JSON object"))),
    }
}

/// An argument that some values of an enum argument require (`missing`: the
/// message without it) and the others refuse (`refused`: the message with it).
pub(crate) fn needed<T>(
    value: &Option<T>,
    needed: bool,
    missing: &str,
    refused: &str,
) -> Result<(), Failure> {
    match (value, needed) {
        (None, true) => Err(Failure::invalid(missing)),
        (Some(_), false) => Err(Failure::invalid(refused)),
        _ => Ok(()),
    }
}

// ---- iterators -------------------------------------------------------------------------

/// One step of an item iterator (`roomchat_<name>_iter_next`): the next
/// record written to `*out` (owned by the caller), `ROOMCHAT_RESULT_ITERATION_DONE`
/// at the end, or the error of the page that failed (the next step fetches it
/// again: core's iterator keeps its place). `out` is checked before anything
/// is fetched, so a NULL there loses no record.
pub(crate) fn next_item<H, T>(
    iter: *mut H,
    out: *mut *mut T,
    out_name: &str,
    err_out: *mut *mut roomchat_error,
    next: impl FnOnce(&mut H) -> Option<roomchat::Result<T>>,
) -> roomchat_result {
    let mut done = false;
    let code = guard(err_out, || {
        out_arg(out, out_name)?;
        let iter = mut_arg(iter, "iter")?;
        match next(iter) {
            None => done = true,
            Some(Err(e)) => return Err(Failure::from(e)),
            Some(Ok(item)) => write_out(out, item),
        }
        Ok(())
    });
    if done {
        roomchat_result::IterationDone
    } else {
        code
    }
}
