//! Per-call options (a view of a client) and the cancel token they may carry,
//! the C accessors of the answer beside a call's result (the object and what
//! makes it are in answer.rs), and the log callback.

use std::ffi::{c_char, c_void};
use std::ptr;
use std::sync::Arc;
use std::time::Duration;

use roomchat::{CallOptions, CancelToken, Event, Level, Observer};

use crate::answer::roomchat_response_meta;
use crate::boundary::{borrow_arg, free_box, mut_arg, out_arg, text_arg, write_out};
use crate::client::{roomchat_client, roomchat_client_options};
use crate::error::{
    c_string, enum_arg, enum_from_u32, guard, guard_value, roomchat_error, roomchat_result,
};

// ---- cancel tokens ----------------------------------------------------------------------

/// Cancels calls from another thread (what Go's `context.Context` and a JVM
/// future's `cancel` stand on). Made by `roomchat_cancel_token_new`, given to the
/// calls it cancels through `roomchat_call_options_set_cancel_token` and
/// `roomchat_client_with_options`, freed with `roomchat_cancel_token_free`.
/// **Thread-safe**: `roomchat_cancel_token_cancel` and
/// `roomchat_cancel_token_is_cancelled` may be called from any thread, at any
/// time, before or during the calls, as long as the token is not being freed.
/// Once cancelled, every call of a view carrying it fails with
/// `ROOMCHAT_RESULT_CANCELLED`: at once when it was waiting for the rate-limit
/// budget or before a retry, within 50 ms (`CANCEL_CHECK_INTERVAL`) when its
/// request was on the wire (the connection is closed, never reused). A call
/// that never sends anything is never sent again by the retry loop once
/// cancelled. A create or a post cancelled with its request on the wire may
/// have reached the service: its outcome is unknown (the error's message says
/// so), and it is never sent again; look it up before sending it again. A
/// token cannot be reset: use a new one for the next calls.
#[allow(non_camel_case_types)]
pub struct roomchat_cancel_token {
    pub(crate) token: CancelToken,
}

/// Makes a token that is not cancelled. Writes it to `*token_out` (free with
/// `roomchat_cancel_token_free`).
#[no_mangle]
pub extern "C" fn roomchat_cancel_token_new(
    token_out: *mut *mut roomchat_cancel_token,
) -> roomchat_result {
    guard(ptr::null_mut(), || {
        out_arg(token_out, "token_out")?;
        write_out(
            token_out,
            roomchat_cancel_token {
                token: CancelToken::new(),
            },
        );
        Ok(())
    })
}

/// Cancels every call carrying `token`, now and later. Thread-safe; calling it
/// again does nothing more; NULL does nothing.
#[no_mangle]
pub extern "C" fn roomchat_cancel_token_cancel(token: *const roomchat_cancel_token) {
    guard_value((), || {
        // SAFETY: a non-NULL pointer is a live token of this library (documented).
        if let Some(token) = unsafe { token.as_ref() } {
            token.token.cancel();
        }
    })
}

/// Whether `roomchat_cancel_token_cancel` was called on `token` (false for NULL).
/// Thread-safe.
#[no_mangle]
pub extern "C" fn roomchat_cancel_token_is_cancelled(token: *const roomchat_cancel_token) -> bool {
    guard_value(false, || {
        // SAFETY: as `roomchat_cancel_token_cancel`.
        unsafe { token.as_ref() }.is_some_and(|token| token.token.is_cancelled())
    })
}

/// Frees this handle of a token. The options and views it was given to keep
/// their own references: their calls stay cancelled if it was cancelled, and
/// can no longer be cancelled through this handle. Must not run while another
/// thread uses this handle. `roomchat_cancel_token_free(NULL)` does nothing.
#[no_mangle]
pub extern "C" fn roomchat_cancel_token_free(token: *mut roomchat_cancel_token) {
    free_box(token)
}

// ---- per-call options ------------------------------------------------------------------

/// Settings a view of a client uses instead of the client's (see
/// `roomchat_client_with_options`). Made by `roomchat_call_options_new`, freed
/// with `roomchat_call_options_free`; a setting never set keeps the client's.
/// Not thread-safe: configure it on one thread.
#[allow(non_camel_case_types)]
pub struct roomchat_call_options {
    options: CallOptions,
    /// Set by `roomchat_call_options_set_cancel_token`: the options' own reference.
    cancel: Option<CancelToken>,
}

/// Starts per-call options with nothing changed. Writes them to `*options_out`
/// (free with `roomchat_call_options_free`).
#[no_mangle]
pub extern "C" fn roomchat_call_options_new(
    options_out: *mut *mut roomchat_call_options,
) -> roomchat_result {
    guard(ptr::null_mut(), || {
        out_arg(options_out, "options_out")?;
        write_out(
            options_out,
            roomchat_call_options {
                options: CallOptions::new(),
                cancel: None,
            },
        );
        Ok(())
    })
}

/// Frees per-call options. `roomchat_call_options_free(NULL)` does nothing.
#[no_mangle]
pub extern "C" fn roomchat_call_options_free(options: *mut roomchat_call_options) {
    free_box(options)
}

fn set_call(
    options: *mut roomchat_call_options,
    change: impl FnOnce(CallOptions) -> CallOptions,
) -> roomchat_result {
    guard(ptr::null_mut(), || {
        let options = mut_arg(options, "options")?;
        options.options = change(options.options);
        Ok(())
    })
}

/// Sets the overall timeout of one attempt, in milliseconds. 0, or more than
/// 10^12 (10^9 s), makes `roomchat_client_with_options` fail with
/// `ROOMCHAT_RESULT_CONFIGURATION`.
#[no_mangle]
pub extern "C" fn roomchat_call_options_set_timeout_ms(
    options: *mut roomchat_call_options,
    timeout_ms: u64,
) -> roomchat_result {
    set_call(options, |o| o.timeout(Duration::from_millis(timeout_ms)))
}

/// Sets the connect timeout, in milliseconds (0 or more than 10^12: as
/// `roomchat_call_options_set_timeout_ms`).
#[no_mangle]
pub extern "C" fn roomchat_call_options_set_connect_timeout_ms(
    options: *mut roomchat_call_options,
    timeout_ms: u64,
) -> roomchat_result {
    set_call(options, |o| {
        o.connect_timeout(Duration::from_millis(timeout_ms))
    })
}

/// Sets the retries after the first attempt (0: one attempt only).
#[no_mangle]
pub extern "C" fn roomchat_call_options_set_max_retries(
    options: *mut roomchat_call_options,
    max_retries: u32,
) -> roomchat_result {
    set_call(options, |o| o.max_retries(max_retries))
}

/// Sets the longest wait slept before a retry, in milliseconds (more than
/// 10^12: as `roomchat_call_options_set_timeout_ms`).
#[no_mangle]
pub extern "C" fn roomchat_call_options_set_max_retry_wait_ms(
    options: *mut roomchat_call_options,
    wait_ms: u64,
) -> roomchat_result {
    set_call(options, |o| {
        o.max_retry_wait(Duration::from_millis(wait_ms))
    })
}

/// Makes the calls of the views made with these options
/// (`roomchat_client_with_options`), and of their iterators, cancellable by
/// `token` (see `roomchat_cancel_token`). NULL `token` removes the token these
/// options carried. **Ownership**: the options take their own reference, and so
/// does each view made from them, so `token` may be freed right after this call
/// (cancelling then needs another handle to it, so keep one as long as you may
/// cancel).
#[no_mangle]
pub extern "C" fn roomchat_call_options_set_cancel_token(
    options: *mut roomchat_call_options,
    token: *const roomchat_cancel_token,
) -> roomchat_result {
    guard(ptr::null_mut(), || {
        let options = mut_arg(options, "options")?;
        // SAFETY: a non-NULL pointer is a live token of this library (documented).
        options.cancel = unsafe { token.as_ref() }.map(|token| token.token.clone());
        Ok(())
    })
}

/// A view of `client` whose calls use `options` where they set something, and
/// the client's settings elsewhere. Writes it to `*view_out`: a
/// `roomchat_client` like any other (thread-safe, free with
/// `roomchat_client_free`; a view of it adds its own options). The view shares
/// the client's connection pool and rate-limit budget: its calls count in
/// `roomchat_client_rate_limit_state` of both. **Ownership**: the view holds
/// its own reference to what it shares, so `client` and the view may be freed
/// in either order; `options` stay the caller's and may be freed at once.
/// Fails with `ROOMCHAT_RESULT_CONFIGURATION` on a timeout of 0 or a duration
/// above 10^12 ms.
#[no_mangle]
pub extern "C" fn roomchat_client_with_options(
    client: *const roomchat_client,
    options: *const roomchat_call_options,
    view_out: *mut *mut roomchat_client,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    guard(err_out, || {
        out_arg(view_out, "view_out")?;
        let client = borrow_arg(client, "client")?;
        let options = borrow_arg(options, "options")?;
        let mut view = client.client.with_options(options.options)?;
        if let Some(token) = &options.cancel {
            view = view.with_cancel(token.clone());
        }
        write_out(view_out, roomchat_client { client: view });
        Ok(())
    })
}

// ---- the answer beside the result -----------------------------------------------------

fn meta<'a>(meta: *const roomchat_response_meta) -> Option<&'a roomchat_response_meta> {
    // SAFETY: a non-NULL pointer is a live object of this library (documented).
    unsafe { meta.as_ref() }
}

/// The HTTP status (200 for a call answered 200); 0 for NULL.
#[no_mangle]
pub extern "C" fn roomchat_response_meta_status(meta: *const roomchat_response_meta) -> u16 {
    guard_value(0, || self::meta(meta).map_or(0, |m| m.status))
}

/// The attempts the call made: 1 when the first was answered, more after
/// retries; 0 for NULL.
#[no_mangle]
pub extern "C" fn roomchat_response_meta_attempts(meta: *const roomchat_response_meta) -> u32 {
    guard_value(0, || self::meta(meta).map_or(0, |m| m.attempts))
}

/// How many headers the answer had (0 for NULL).
#[no_mangle]
pub extern "C" fn roomchat_response_meta_header_count(
    meta: *const roomchat_response_meta,
) -> usize {
    guard_value(0, || self::meta(meta).map_or(0, |m| m.headers.len()))
}

/// The name (lower case) of header `index` (from 0, in the order they came), or
/// NULL past the end. Borrowed from `meta`.
#[no_mangle]
pub extern "C" fn roomchat_response_meta_header_name(
    meta: *const roomchat_response_meta,
    index: usize,
) -> *const c_char {
    guard_value(ptr::null(), || {
        self::meta(meta)
            .and_then(|m| m.headers.get(index))
            .map_or(ptr::null(), |(n, _)| n.as_ptr())
    })
}

/// The value of header `index`, or NULL past the end. Borrowed from `meta`.
#[no_mangle]
pub extern "C" fn roomchat_response_meta_header_value(
    meta: *const roomchat_response_meta,
    index: usize,
) -> *const c_char {
    guard_value(ptr::null(), || {
        self::meta(meta)
            .and_then(|m| m.headers.get(index))
            .map_or(ptr::null(), |(_, v)| v.as_ptr())
    })
}

/// The value of the first header called `name` (any case), e.g.
/// `"x-ratelimit-remaining"` or `"date"`, or NULL when there is none (or
/// `name` is NULL or not UTF-8). Borrowed from `meta`.
#[no_mangle]
pub extern "C" fn roomchat_response_meta_header(
    meta: *const roomchat_response_meta,
    name: *const c_char,
) -> *const c_char {
    guard_value(ptr::null(), || {
        match (self::meta(meta), text_arg(name, "name")) {
            (Some(m), Ok(name)) => m.header(name),
            _ => ptr::null(),
        }
    })
}

/// The id the service gave the request (`X-Request-Id`), or NULL when it sent
/// none: the one to quote to support. Borrowed from `meta`.
#[no_mangle]
pub extern "C" fn roomchat_response_meta_request_id(
    meta: *const roomchat_response_meta,
) -> *const c_char {
    guard_value(ptr::null(), || {
        self::meta(meta).map_or(ptr::null(), |m| m.header("x-request-id"))
    })
}

/// Frees an answer. `roomchat_response_meta_free(NULL)` does nothing.
#[no_mangle]
pub extern "C" fn roomchat_response_meta_free(meta: *mut roomchat_response_meta) {
    free_box(meta)
}

// ---- the log callback -------------------------------------------------------------------

/// How much a log line matters.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum roomchat_log_level {
    /// One line per attempt.
    Debug = 0,
    /// A retry, a wait for the rate-limit budget, a failure of the shared budget.
    Warning = 1,
}
enum_from_u32!(roomchat_log_level { Debug, Warning });

/// Receives a client's log lines: `user_data` as given to
/// `roomchat_client_options_set_log_callback_with_destroy` (or
/// `roomchat_client_options_set_log_callback`), the line's level, and the line
/// (NUL-terminated, e.g. `GET /consumer/api/v2/users?auth=REDACTED -> 200
/// (attempt 1, 0.412 ms)`; the key never appears in it), valid only during the
/// call. Called on the thread making the client call (an iterator's step
/// included), possibly on several threads at once: it must be thread-safe,
/// quick, and must not call the same client. It is never called once its
/// destroy notifier has run.
#[allow(non_camel_case_types)]
pub type roomchat_log_callback =
    Option<extern "C" fn(user_data: *mut c_void, level: roomchat_log_level, line: *const c_char)>;

/// Releases `user_data` once the library no longer holds it (the contract of
/// GLib's `GDestroyNotify`): see `roomchat_client_options_set_log_callback_with_destroy`
/// for exactly when. Called exactly once, on whichever thread lets go of the
/// library's last hold, so it must be callable from any thread; it must not
/// unwind (a C++ exception, `longjmp`) out of the call.
#[allow(non_camel_case_types)]
pub type roomchat_destroy_notify = Option<extern "C" fn(user_data: *mut c_void)>;

/// `user_data` and its destroy notifier: dropping it (exactly once, as Rust
/// ownership guarantees) hands `user_data` to the notifier. The log callback's
/// and the observer's (observe.rs).
pub(crate) struct UserData {
    pub(crate) pointer: *mut c_void,
    pub(crate) destroy: roomchat_destroy_notify,
}

impl Drop for UserData {
    fn drop(&mut self) {
        // `take` keeps a second call impossible even if this were ever reached twice.
        if let Some(destroy) = self.destroy.take() {
            destroy(self.pointer);
        }
    }
}

/// The callback and its data, as an observer of core's events. Shared (in an
/// `Arc`) by the options and every client, view and iterator made from them;
/// the last of them to go drops it, and with it `data`.
struct LogCallback {
    callback: extern "C" fn(*mut c_void, roomchat_log_level, *const c_char),
    data: UserData,
    lowest: Level,
}

// SAFETY: the caller promises (documented) that the callback may be called, and
// the destroy notifier called, from any thread with this `user_data`.
unsafe impl Send for LogCallback {}
// SAFETY: as above: concurrent calls are the callback's to handle.
unsafe impl Sync for LogCallback {}

impl Observer for LogCallback {
    fn enabled(&self, level: Level) -> bool {
        level >= self.lowest
    }

    fn event(&self, event: &Event<'_>) {
        let level = match event.level() {
            Level::Debug => roomchat_log_level::Debug,
            Level::Warning => roomchat_log_level::Warning,
        };
        let line = c_string(event.message());
        // A panic must not unwind into C, nor a C callback's failure into core.
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            (self.callback)(self.data.pointer, level, line.as_ptr())
        }));
    }
}

/// Sends the client's log lines of `lowest_level` and above (a
/// `roomchat_log_level` value; another number is reported by
/// `roomchat_client_new` as `ROOMCHAT_RESULT_INVALID_ARGUMENT`) to `callback`
/// with `user_data` (see `roomchat_log_callback`). NULL `callback` turns it off.
/// Without a callback, the environment variable `ROOMCHAT_LOG=debug|info|warn`
/// prints the lines to standard error (`[roomchat] DEBUG: …`). `user_data`
/// stays the caller's (this is
/// `roomchat_client_options_set_log_callback_with_destroy` with a NULL
/// `destroy`): the callback may be called until the last client, view
/// (`roomchat_client_with_options`) and iterator (`roomchat_client_users_iter`)
/// made from these options is freed, in whatever order (an iterator or a view
/// outlives its client's `roomchat_client_free`), so `user_data` must stay
/// valid until all of them are freed. When that moment is hard to know, use
/// `roomchat_client_options_set_log_callback_with_destroy`, which tells you.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_log_callback(
    options: *mut roomchat_client_options,
    callback: roomchat_log_callback,
    user_data: *mut c_void,
    lowest_level: u32,
) -> roomchat_result {
    roomchat_client_options_set_log_callback_with_destroy(
        options,
        callback,
        user_data,
        lowest_level,
        None,
    )
}

/// `roomchat_client_options_set_log_callback` with the library owning
/// `user_data`: it calls `destroy(user_data)` (NULL `destroy`: nothing to call)
/// exactly once, when it no longer holds the callback, and never calls
/// `callback` after that. **When**: once the options and every client, view
/// (`roomchat_client_with_options`) and iterator (`roomchat_client_users_iter`)
/// made from them are gone, in any order: inside whichever of
/// `roomchat_client_options_free`, `roomchat_client_free` and
/// `roomchat_users_iter_free` comes last (or inside the setter call that
/// replaces the callback, see below). **Where**: on the thread making that
/// call, so `destroy` must be callable from any thread. It may free
/// `user_data` and whatever the callback uses; it must not call into the
/// object being freed. **Exactly once** for every call given a `destroy`,
/// whatever the call returns: options never used to build a client run it
/// when they are freed; a call whose callback the options do not keep runs it
/// before returning: NULL `callback` (which turns logging off), a
/// `lowest_level` that is not a `roomchat_log_level` (recorded for
/// `roomchat_client_new`; the previous callback stays), NULL `options`
/// (`ROOMCHAT_RESULT_INVALID_ARGUMENT`). **Set twice**: a later call of either
/// setter replaces the callback, and the replaced one's `destroy` runs during
/// that call if no client, view or iterator holds it, else when the last of
/// them is freed.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_log_callback_with_destroy(
    options: *mut roomchat_client_options,
    callback: roomchat_log_callback,
    user_data: *mut c_void,
    lowest_level: u32,
    destroy: roomchat_destroy_notify,
) -> roomchat_result {
    // Owned before anything can fail or panic: wherever `data` is dropped (kept
    // by the options, or dropped by an early return or an unwinding panic inside
    // `guard`), `destroy` runs exactly once.
    let data = UserData {
        pointer: user_data,
        destroy,
    };
    guard(ptr::null_mut(), move || {
        let options = mut_arg(options, "options")?;
        let outcome = enum_arg(
            lowest_level,
            "lowest_level",
            "roomchat_log_level",
            roomchat_log_level::from_u32,
        )
        .map(|level| {
            let lowest = match level {
                roomchat_log_level::Debug => Level::Debug,
                roomchat_log_level::Warning => Level::Warning,
            };
            options.set_log(callback.map(|callback| {
                Arc::new(LogCallback {
                    callback,
                    data,
                    lowest,
                }) as Arc<dyn Observer>
            }));
        });
        options.record("log_callback", outcome);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{
        roomchat_client_free, roomchat_client_new, roomchat_client_options_free,
        roomchat_client_options_new, roomchat_client_options_set_base_url,
    };
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;
    use std::thread::{self, ThreadId};

    /// What the notifier saw: its calls and the thread of the last.
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    static THREAD: Mutex<Option<ThreadId>> = Mutex::new(None);

    extern "C" fn count_destroy(user_data: *mut c_void) {
        assert_eq!(user_data as usize, 0x5eed);
        CALLS.fetch_add(1, Ordering::SeqCst);
        *THREAD.lock().unwrap() = Some(thread::current().id());
    }

    extern "C" fn ignore_line(_: *mut c_void, _: roomchat_log_level, _: *const c_char) {}

    #[test]
    fn the_last_holder_runs_the_notifier_once_on_its_own_thread() {
        let mut options = ptr::null_mut();
        let key = c"a-private-key";
        assert_eq!(
            roomchat_client_options_new(key.as_ptr(), &mut options, ptr::null_mut()),
            roomchat_result::Ok
        );
        roomchat_client_options_set_base_url(options, c"http://127.0.0.1:9".as_ptr());
        assert_eq!(
            roomchat_client_options_set_log_callback_with_destroy(
                options,
                Some(ignore_line),
                0x5eed as *mut c_void,
                0,
                Some(count_destroy),
            ),
            roomchat_result::Ok
        );
        let mut client = ptr::null_mut();
        assert_eq!(
            roomchat_client_new(options, &mut client, ptr::null_mut()),
            roomchat_result::Ok
        );
        roomchat_client_options_free(options);
        assert_eq!(CALLS.load(Ordering::SeqCst), 0);
        // The client, the last holder, freed on another thread: the notifier runs there.
        let client = client as usize;
        let freer = thread::spawn(move || {
            roomchat_client_free(client as *mut roomchat_client);
            thread::current().id()
        })
        .join()
        .unwrap();
        assert_eq!(CALLS.load(Ordering::SeqCst), 1);
        assert_eq!(*THREAD.lock().unwrap(), Some(freer));
    }
}
