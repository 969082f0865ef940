//! How a value crosses the C boundary, in one place: each argument pointer is
//! checked (NULL, UTF-8, JSON) before use, each out-pointer before any work so
//! that outputs are written only on success, and each object handed to C is a
//! `Box` that its `_free` takes back (`free_box`). Every module of the crate
//! uses these; they use nothing of the crate but its error type.

use std::ffi::{c_char, CStr};

use serde_json::Value;

use crate::error::{c_string, guard_value, Failure};

/// A required string argument.
pub(crate) fn text_arg<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, Failure> {
    if ptr.is_null() {
        return Err(Failure::invalid(format!("{name} is NULL")));
    }
    // SAFETY: non-NULL, and the caller passes a NUL-terminated string (documented).
    unsafe { CStr::from_ptr(ptr) }
        .to_str()
        .map_err(|_| Failure::invalid(format!("{name} is not UTF-8")))
}

/// An optional string argument (NULL = absent).
pub(crate) fn opt_text_arg<'a>(ptr: *const c_char, name: &str) -> Result<Option<&'a str>, Failure> {
    if ptr.is_null() {
        Ok(None)
    } else {
        text_arg(ptr, name).map(Some)
    }
}

/// An optional JSON argument (NULL = absent).
pub(crate) fn json_arg(ptr: *const c_char, name: &str) -> Result<Option<Value>, Failure> {
    match opt_text_arg(ptr, name)? {
        None => Ok(None),
        Some(text) => serde_json::from_str(text)
            .map(Some)
            .map_err(|e| Failure::invalid(format!("{name} is not valid JSON: {e}"))),
    }
}

/// A required object argument, borrowed for the call.
pub(crate) fn borrow_arg<'a, T>(ptr: *const T, name: &str) -> Result<&'a T, Failure> {
    // SAFETY: non-NULL pointers are live handles of this library (documented).
    unsafe { ptr.as_ref() }.ok_or_else(|| Failure::invalid(format!("{name} is NULL")))
}

/// A required object argument the call changes.
pub(crate) fn mut_arg<'a, T>(ptr: *mut T, name: &str) -> Result<&'a mut T, Failure> {
    // SAFETY: as `borrow_arg`, and not shared with another thread during the call (documented).
    unsafe { ptr.as_mut() }.ok_or_else(|| Failure::invalid(format!("{name} is NULL")))
}

/// Checks an out-pointer before any work, so that outputs are written only on success.
pub(crate) fn out_arg<T>(out: *mut *mut T, name: &str) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::invalid(format!("{name} is NULL")));
    }
    Ok(())
}

/// Hands `value` to C through a checked out-pointer: C owns it until its `_free`.
pub(crate) fn write_out<T>(out: *mut *mut T, value: T) {
    // SAFETY: checked non-NULL by `out_arg` before the call's work began.
    unsafe { *out = Box::into_raw(Box::new(value)) };
}

/// Hands `text` to C through a checked out-pointer (freed with `roomchat_string_free`).
pub(crate) fn write_string(out: *mut *mut c_char, text: String) {
    // SAFETY: checked non-NULL by `out_arg`.
    unsafe { *out = c_string(text).into_raw() };
}

/// Takes back an object `write_out` gave C and drops it; NULL does nothing.
pub(crate) fn free_box<T>(ptr: *mut T) {
    guard_value((), || {
        if !ptr.is_null() {
            // SAFETY: made by `Box::into_raw` in this library and freed once (documented).
            drop(unsafe { Box::from_raw(ptr) });
        }
    })
}
