#![deny(clippy::all)]
//! The native half of the `roomchat` npm package (napi-rs).
//!
//! It only translates: the JS layer (`index.js`) hands over arguments as JSON
//! text, a blocking core call runs on the package's own threads (see
//! `pool.rs`), and its outcome comes back to the event loop as JSON text through
//! one thread-safe function per JS environment (the main thread and each
//! worker thread), which also carries the observer's log lines in order.
//!
//! Everything here is internal to the package: its API is documented in
//! `index.d.ts`.

mod args;
mod models;
mod ops;
mod paged;
mod pool;
mod records;
mod shape;
mod telemetry;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use roomchat::wire::{self, Operation, WireResponse};
use roomchat::{
    CancelToken, Client, ErrorKind, Event, Level, Observer, UserPages, Users, MAX_PAGE_SIZE,
};

use crate::args::{invalid, Args};
use crate::telemetry::{HookTsfn, JobTrace};

/// The addon's own allocations (a page's models, its JSON text, the HTTP
/// buffers) come from mimalloc: they are made on pool threads and often freed
/// on the event loop's, where glibc's arenas cost the most. Node's own memory
/// is untouched. Measured side by side (list users, 50 a page), the process's
/// CPU per call fell by 5-15% and the time per call by 2-15% (alternating
/// pairs, one call at a time and 16 in flight), for 3-7 MiB more resident
/// memory with 16 calls in flight.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Outcome statuses passed to the JS callback with the call's id and a payload.
const OUTCOME_OK: u32 = 0;
const OUTCOME_ERROR: u32 = 1;
const OUTCOME_LOG_DEBUG: u32 = 2;
const OUTCOME_LOG_WARNING: u32 = 3;

/// Prefix of the message of an error thrown by a synchronous native function:
/// the rest is the error's JSON (see [`shape::error`]), turned into a
/// `RoomchatError` by the JS layer.
const ERROR_MARK: &str = "\u{1}roomchat-error:";

struct Outcome {
    id: u32,
    status: u32,
    payload: String,
    /// What the call's telemetry recorded (`telemetry.rs`), when it was observed.
    observed: Option<String>,
}

/// An outcome's text as a JS string. ASCII text (every shape's JSON unless a
/// value holds other characters, most messages) is copied in as Latin-1,
/// which V8 takes as it is; other text goes through UTF-8 decoding.
pub struct Payload(String);

impl ToNapiValue for Payload {
    unsafe fn to_napi_value(env: napi::sys::napi_env, val: Self) -> Result<napi::sys::napi_value> {
        let text = val.0;
        if !text.is_ascii() {
            // SAFETY: the caller's environment, as given.
            return unsafe { String::to_napi_value(env, text) };
        }
        let mut value = std::ptr::null_mut();
        // SAFETY: `text` outlives the call, which copies `len` bytes from it.
        let status = unsafe {
            napi::sys::napi_create_string_latin1(
                env,
                text.as_ptr().cast(),
                text.len() as isize,
                &mut value,
            )
        };
        check(status, "could not make an outcome's string")?;
        Ok(value)
    }
}

/// Weak (unref'd): the JS layer refs it only while calls are in flight, so an
/// idle client never keeps a process alive.
type Tsfn = ThreadsafeFunction<Outcome, (), OutcomeArgs, Status, false, true, 0>;

/// What the JS callback gets: `(id, status, payload, observed)`.
type OutcomeArgs = FnArgs<(u32, u32, Payload, Option<Payload>)>;

fn deliver(
    tsfn: &Tsfn,
    id: u32,
    result: std::result::Result<String, roomchat::Error>,
    observed: Option<String>,
) {
    let (status, payload) = match result {
        Ok(payload) => (OUTCOME_OK, payload),
        Err(e) => (OUTCOME_ERROR, shape::error(&e)),
    };
    // Unbounded queue: only fails when the environment is gone (a worker
    // thread that ended), and then there is nobody to tell.
    let _ = tsfn.call(
        Outcome {
            id,
            status,
            payload,
            observed,
        },
        ThreadsafeFunctionCallMode::NonBlocking,
    );
}

/// What a call's telemetry asks of the native side, as the JS layer passes
/// it: `flags` ([`telemetry::PREMADE`], [`telemetry::HOOK`]; none: not
/// observed) and the scope's headers (flattened `[name, value, …]`).
struct TraceArgs(Option<u32>, Option<Vec<String>>);

/// The native half of one JS environment: its outcomes' and its hook's channels.
struct Channels {
    outcomes: Arc<Tsfn>,
    hook: Arc<HookTsfn>,
}

/// Runs `f` on a pool thread and delivers its result as call `id`, observed
/// for the JS layer's telemetry as `trace` asks. A panic in core becomes an
/// error instead of a promise that never settles.
fn spawn<F>(channels: &Channels, id: u32, trace: TraceArgs, f: F)
where
    F: FnOnce() -> std::result::Result<String, roomchat::Error> + Send + 'static,
{
    let tsfn = Arc::clone(&channels.outcomes);
    let trace = match trace {
        TraceArgs(None, None) => None,
        // Headers alone: the baggage of a context no span records.
        TraceArgs(flags, headers) => Some(JobTrace::new(id, flags, headers, &channels.hook)),
    };
    pool::submit(Box::new(move || {
        let run = std::panic::AssertUnwindSafe(|| match &trace {
            Some(trace) => trace.run(f),
            None => f(),
        });
        let result = std::panic::catch_unwind(run).unwrap_or_else(|_| {
            Err(roomchat::Error::new(
                ErrorKind::Decode,
                "internal error: the call panicked (please report it)",
            ))
        });
        let observed = trace.and_then(|t| t.record());
        pool::finishing();
        deliver(&tsfn, id, result, observed);
    }));
}

fn throw(e: &roomchat::Error) -> napi::Error {
    napi::Error::new(
        Status::GenericFailure,
        format!("{ERROR_MARK}{}", shape::error(e)),
    )
}

/// The outcome channel of one JS environment.
#[napi]
pub struct Dispatcher {
    channels: Arc<Channels>,
}

#[napi]
impl Dispatcher {
    /// `callback(id, status, payload, observed)` receives every outcome, on
    /// the JS thread (`observed`: the JSON of what the call's telemetry
    /// recorded, or null); `hook(id, question)` is asked for the headers of an
    /// attempt about to be sent (`telemetry.rs`), on the JS thread too, and
    /// returns them flattened (`[name, value, …]`) or null.
    #[napi(
        constructor,
        ts_args_type = "callback: (id: number, status: number, payload: string, observed: string | null) => void, hook: (id: number, question: string) => string[] | null"
    )]
    pub fn new(
        callback: Function<OutcomeArgs, ()>,
        hook: Function<FnArgs<(u32, Payload)>, Option<Vec<String>>>,
    ) -> Result<Self> {
        let tsfn = callback
            .build_threadsafe_function::<Outcome>()
            .weak::<true>()
            .callee_handled::<false>()
            .build_callback(
                |ctx: napi::threadsafe_function::ThreadsafeCallContext<Outcome>| {
                    let o = ctx.value;
                    Ok(FnArgs::from((
                        o.id,
                        o.status,
                        Payload(o.payload),
                        o.observed.map(Payload),
                    )))
                },
            )?;
        Ok(Dispatcher {
            channels: Arc::new(Channels {
                outcomes: Arc::new(tsfn),
                hook: Arc::new(telemetry::hook_channel(hook)?),
            }),
        })
    }

    /// Keeps the event loop alive (while calls are in flight).
    #[napi(js_name = "ref")]
    pub fn refer(&self, env: Env) -> Result<()> {
        // SAFETY: called on the environment's own thread with its live tsfn.
        check(
            unsafe {
                napi::sys::napi_ref_threadsafe_function(env.raw(), self.channels.outcomes.raw())
            },
            REF_FAILED,
        )
    }

    /// Lets the event loop end (no call in flight).
    #[napi]
    pub fn unref(&self, env: Env) -> Result<()> {
        // SAFETY: as in `refer`.
        check(
            unsafe {
                napi::sys::napi_unref_threadsafe_function(env.raw(), self.channels.outcomes.raw())
            },
            REF_FAILED,
        )
    }
}

fn check(status: napi::sys::napi_status, what: &str) -> Result<()> {
    if status == napi::sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::new(Status::from(status), what))
    }
}

const REF_FAILED: &str = "could not change the event loop reference";

/// Cancels the calls made with it (an `AbortSignal`'s native half).
#[napi]
pub struct CancelHandle {
    token: CancelToken,
}

#[napi]
impl CancelHandle {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        CancelHandle {
            token: CancelToken::new(),
        }
    }

    /// Cancels: a rate-limit wait or backoff is abandoned at once, a request on the wire within 50 ms.
    #[napi]
    pub fn cancel(&self) {
        self.token.cancel();
    }
}

/// Forwards core's events, as core renders them, to the JS layer.
struct JsObserver {
    tsfn: Arc<Tsfn>,
    serial: u32,
    debug: AtomicBool,
    warning: AtomicBool,
}

impl Observer for JsObserver {
    fn enabled(&self, level: Level) -> bool {
        match level {
            Level::Debug => self.debug.load(Ordering::Relaxed),
            Level::Warning => self.warning.load(Ordering::Relaxed),
        }
    }

    fn event(&self, event: &Event<'_>) {
        let status = match event.level() {
            Level::Debug => OUTCOME_LOG_DEBUG,
            Level::Warning => OUTCOME_LOG_WARNING,
        };
        let _ = self.tsfn.call(
            Outcome {
                id: self.serial,
                status,
                payload: event.message(),
                observed: None,
            },
            ThreadsafeFunctionCallMode::NonBlocking,
        );
    }
}

/// A core client bound to one JS environment's dispatcher.
#[napi]
pub struct NativeClient {
    client: Client,
    channels: Arc<Channels>,
}

#[napi]
impl NativeClient {
    /// `options`: the JSON of the client options; `fromEnv`: start from the
    /// environment; `serial`: the id log lines are delivered with; `debug`,
    /// `warning`: which log levels the JS layer wants; `runtime`: the
    /// `User-Agent`'s name for it (`Node 20.11.1`).
    #[napi(constructor)]
    pub fn new(
        dispatcher: &Dispatcher,
        options: String,
        from_env: bool,
        serial: u32,
        debug: bool,
        warning: bool,
        runtime: String,
    ) -> Result<Self> {
        let mut builder = ops::builder(&options, from_env)
            .map_err(|e| throw(&e))?
            .sdk_identity(
                concat!("roomchat-node/", env!("CARGO_PKG_VERSION")),
                Some(runtime),
            );
        if debug || warning {
            builder = builder.observer(Arc::new(JsObserver {
                tsfn: Arc::clone(&dispatcher.channels.outcomes),
                serial,
                debug: AtomicBool::new(debug),
                warning: AtomicBool::new(warning),
            }));
        }
        let client = builder.build().map_err(|e| throw(&e))?;
        Ok(NativeClient {
            client,
            channels: Arc::clone(&dispatcher.channels),
        })
    }

    /// Starts the raw request (`rawRequest`) with `params` (JSON); its outcome
    /// comes as `id`. `settings`, `withResponse`, `cancel`, `traceFlags` and
    /// `traceHeaders` as `callOperation` takes them.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn call_raw(
        &self,
        id: u32,
        params: String,
        settings: Option<String>,
        with_response: bool,
        cancel: Option<&CancelHandle>,
        trace_flags: Option<u32>,
        trace_headers: Option<Vec<String>>,
    ) -> Result<()> {
        let client = self.for_call("rawRequest", cancel, settings)?;
        let trace = TraceArgs(trace_flags, trace_headers);
        spawn(&self.channels, id, trace, move || {
            if with_response {
                ops::run_raw_with_response(&client, &params)
            } else {
                ops::run_raw(&client, &params)
            }
        });
        Ok(())
    }

    /// Starts `operation` (core's stable snake_case name), any declared one, with
    /// `params` (the JSON of its params object, the method's own arguments
    /// included); `settings` (the JSON of `{timeoutMs?, connectTimeoutMs?,
    /// maxRetries?, maxRetryWaitMs?}`, or none), the answer beside the result when
    /// `withResponse` (`{data, response}`), cancellable through `cancel` when given.
    /// What the generated methods (operations.js) call: the operation's declaration
    /// in core checks the params, sends and decodes; the answer comes as the JSON of
    /// what the method returns. An unknown name or bad settings throw at once.
    /// `traceFlags` (given: the call is observed for the JS layer's telemetry,
    /// its record delivered with the outcome) and `traceHeaders` (flattened
    /// `[name, value, …]`: sent on each attempt) are the telemetry's (`telemetry.rs`).
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn call_operation(
        &self,
        operation: String,
        id: u32,
        params: String,
        settings: Option<String>,
        with_response: bool,
        cancel: Option<&CancelHandle>,
        trace_flags: Option<u32>,
        trace_headers: Option<Vec<String>>,
    ) -> Result<()> {
        let op = Operation::parse(&operation).map_err(|e| throw(&e))?;
        let client = self.for_call(op.name(), cancel, settings)?;
        let trace = TraceArgs(trace_flags, trace_headers);
        spawn(&self.channels, id, trace, move || {
            if with_response {
                ops::run_operation_with_response(&client, op, &params)
            } else {
                ops::run_operation(&client, op, &params)
            }
        });
        Ok(())
    }

    /// A view of this client whose calls use `settings` (as `callOperation` takes them):
    /// the same pool, budget and log channel.
    #[napi]
    pub fn with_options(&self, settings: String) -> Result<NativeClient> {
        let options = ops::call_options("withOptions", &settings).map_err(|e| throw(&e))?;
        let client = self.client.with_options(options).map_err(|e| throw(&e))?;
        Ok(NativeClient {
            client,
            channels: Arc::clone(&self.channels),
        })
    }

    /// The client of one call or iterator: cancellable through `cancel`, with its
    /// per-call `settings`, if any (bad ones throw, naming `what`).
    fn for_call(
        &self,
        what: &str,
        cancel: Option<&CancelHandle>,
        settings: Option<String>,
    ) -> Result<Client> {
        let client = self.with_optional_cancel(cancel);
        match settings {
            None => Ok(client),
            Some(settings) => {
                let options = ops::call_options(what, &settings).map_err(|e| throw(&e))?;
                client.with_options(options).map_err(|e| throw(&e))
            }
        }
    }

    /// Every user, lazily: `params` is the JSON of `{pageSize?}`; `settings` as `callOperation` takes them.
    #[napi]
    pub fn users(
        &self,
        params: String,
        cancel: Option<&CancelHandle>,
        settings: Option<String>,
    ) -> Result<UsersIterator> {
        let size = page_size("users", &params)?;
        let users = self
            .for_call("users", cancel, settings)?
            .users_with_page_size(size);
        Ok(UsersIterator {
            inner: Arc::new(Mutex::new(users)),
            channels: Arc::clone(&self.channels),
        })
    }

    /// The listing page by page: `params` is the JSON of `{pageSize?}`; `settings` as `callOperation` takes them.
    #[napi]
    pub fn user_pages(
        &self,
        params: String,
        cancel: Option<&CancelHandle>,
        settings: Option<String>,
    ) -> Result<UserPagesIterator> {
        let size = page_size("userPages", &params)?;
        let pages = self
            .for_call("userPages", cancel, settings)?
            .user_pages(size);
        Ok(UserPagesIterator {
            inner: Arc::new(Mutex::new(pages)),
            channels: Arc::clone(&self.channels),
        })
    }

    /// The lazy iterator of a listing that pages (`iterRoomMessages`,
    /// `roomMessagesPages`, …): `operation` is its stable name, `what` the
    /// method's, `items` over its records (else page by page), `params` the JSON
    /// of the method's arguments and params object (`pageSize`, `skip`, the
    /// listing's other params); `settings` as `callOperation` takes them.
    #[napi]
    pub fn paged(
        &self,
        operation: String,
        what: String,
        items: bool,
        params: String,
        cancel: Option<&CancelHandle>,
        settings: Option<String>,
    ) -> Result<PagedIterator> {
        let op = Operation::parse(&operation).map_err(|e| throw(&e))?;
        let client = self.for_call(&what, cancel, settings)?;
        let steps = args::parse(&what, &params)
            .and_then(|params| records::open_paged(&client, op, &what, items, &params))
            .map_err(|e| throw(&e))?;
        Ok(PagedIterator {
            inner: Arc::new(Mutex::new(steps)),
            channels: Arc::clone(&self.channels),
        })
    }

    fn with_optional_cancel(&self, cancel: Option<&CancelHandle>) -> Client {
        match cancel {
            Some(handle) => self.client.with_cancel(handle.token.clone()),
            None => self.client.clone(),
        }
    }

    /// `args`: the JSON of `[roomId, accessToken]`.
    #[napi]
    pub fn sign_in_url(&self, args: String) -> Result<String> {
        let a = args::strings("signInUrl", &args, 2).map_err(|e| throw(&e))?;
        self.client.sign_in_url(&a[0], &a[1]).map_err(|e| throw(&e))
    }

    /// `args`: the JSON of `[roomId, accessToken, width, height]`.
    #[napi]
    pub fn iframe_html(&self, args: String) -> Result<String> {
        let a = args::strings("iframeHtml", &args, 4).map_err(|e| throw(&e))?;
        self.client
            .iframe_html(&a[0], &a[1], &a[2], &a[3])
            .map_err(|e| throw(&e))
    }

    /// The JSON of the key's rate-limit budget.
    #[napi]
    pub fn rate_limit_state(&self) -> String {
        shape::rate_limit_state(&self.client.rate_limit_state())
    }

    /// The REST base URL.
    #[napi(getter)]
    pub fn base_url(&self) -> String {
        self.client.base_url().to_owned()
    }

    /// `server.address` as core names it (the host lowercased, without an
    /// IPv6 address's brackets): what every span, metric and gauge carries.
    #[napi(getter)]
    pub fn server_address(&self) -> String {
        self.client.server_address().to_owned()
    }

    /// `server.port` as core names it (the base URL's port, or its scheme's).
    #[napi(getter)]
    pub fn server_port(&self) -> u32 {
        u32::from(self.client.server_port())
    }
}

fn page_size(what: &str, params: &str) -> Result<u32> {
    let read = || {
        let value = args::parse(what, params)?;
        let p = Args::new(what, &value)?;
        p.only(&["pageSize"])?;
        Ok::<_, roomchat::Error>(
            p.whole("pageSize", 1, u64::from(MAX_PAGE_SIZE))?
                .unwrap_or(u64::from(MAX_PAGE_SIZE)) as u32,
        )
    };
    read().map_err(|e| throw(&e))
}

/// An iterator's lock: taken only on pool threads, since a `next` holds it for
/// a whole page fetch (the event loop would stall behind it).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Core's `Users` iterator; each `next` runs on a pool thread.
#[napi]
pub struct UsersIterator {
    /// Held by a pool thread for a whole page fetch: never taken on the JS thread.
    inner: Arc<Mutex<Users>>,
    channels: Arc<Channels>,
}

#[napi]
impl UsersIterator {
    /// The next user (JSON), or `null` at the end, delivered as `id`;
    /// `traceFlags` and `traceHeaders` as `callOperation` takes them (for the
    /// call of the page it fetches, if it fetches one).
    #[napi]
    pub fn next(&self, id: u32, trace_flags: Option<u32>, trace_headers: Option<Vec<String>>) {
        let inner = Arc::clone(&self.inner);
        let trace = TraceArgs(trace_flags, trace_headers);
        spawn(&self.channels, id, trace, move || {
            match lock(&inner).next() {
                None => Ok("null".to_owned()),
                Some(Ok(user)) => Ok(shape::js_text(&user)),
                Some(Err(e)) => Err(e),
            }
        });
    }
}

/// Core's `UserPages` iterator; each `next` runs on a pool thread.
#[napi]
pub struct UserPagesIterator {
    /// Held by a pool thread for a whole page fetch: never taken on the JS thread.
    inner: Arc<Mutex<UserPages>>,
    channels: Arc<Channels>,
}

#[napi]
impl UserPagesIterator {
    /// The next page (JSON), or `null` at the end, delivered as `id`;
    /// `traceFlags` and `traceHeaders` as `UsersIterator.next` takes them.
    #[napi]
    pub fn next(&self, id: u32, trace_flags: Option<u32>, trace_headers: Option<Vec<String>>) {
        let inner = Arc::clone(&self.inner);
        let trace = TraceArgs(trace_flags, trace_headers);
        spawn(&self.channels, id, trace, move || {
            match lock(&inner).next() {
                None => Ok("null".to_owned()),
                Some(Ok(page)) => Ok(shape::js_text(&page)),
                Some(Err(e)) => Err(e),
            }
        });
    }
}

/// Core's iterator of a listing that pages; each `next` runs on a pool thread.
#[napi]
pub struct PagedIterator {
    /// Held by a pool thread for a whole page fetch: never taken on the JS thread.
    inner: Arc<Mutex<Box<dyn paged::PagedSteps>>>,
    channels: Arc<Channels>,
}

#[napi]
impl PagedIterator {
    /// The next step (JSON: `{skip, items}` or `{skip, page}`), or `null` at
    /// the end, delivered as `id`; `traceFlags` and `traceHeaders` as
    /// `UsersIterator.next` takes them.
    #[napi]
    pub fn next(&self, id: u32, trace_flags: Option<u32>, trace_headers: Option<Vec<String>>) {
        let inner = Arc::clone(&self.inner);
        let trace = TraceArgs(trace_flags, trace_headers);
        spawn(&self.channels, id, trace, move || {
            match lock(&inner).step() {
                None => Ok("null".to_owned()),
                Some(result) => result,
            }
        });
    }
}

/// The stable snake_case names of core's error kinds, in numeric order (1, 2, …).
#[napi]
pub fn error_kinds() -> Vec<String> {
    ErrorKind::ALL.iter().map(|k| k.name().to_owned()).collect()
}

/// The wire request of `operation` (core's snake_case name) for `params`
/// (JSON), as JSON `{method, path, query, body, auth[, url]}`; `url` when
/// `urlArgs` (JSON `[baseUrl]` or `[baseUrl, key]`) is given.
#[napi]
pub fn wire_build(operation: String, params: String, url_args: Option<String>) -> Result<String> {
    let build = || {
        let op = Operation::parse(&operation)?;
        let params = args::parse("wire.buildRequest", &params)?;
        let request = op.build(&params)?;
        let mut out = request.to_json();
        if let Some(url_args) = url_args {
            // `[baseUrl]` or `[baseUrl, key]`.
            let a = args::parse("wire.buildRequest", &url_args)?;
            let text = |i: usize| a.get(i).and_then(|v| v.as_str());
            let base_url =
                text(0).ok_or_else(|| invalid("wire.buildRequest: baseUrl must be a string"))?;
            if a.get(1).is_some_and(|v| !v.is_null() && !v.is_string()) {
                return Err(invalid("wire.buildRequest: key must be a string"));
            }
            out["url"] = request.url(base_url, text(1)).into();
        }
        Ok::<_, roomchat::Error>(shape::json(&out))
    };
    build().map_err(|e| throw(&e))
}

/// Decodes a response to `operation` into the JSON of what the client's
/// method returns; a non-2xx answer throws the error it stands for.
/// `headers`: JSON list of `[name, value]` pairs.
#[napi]
pub fn wire_decode(
    operation: String,
    status: u32,
    headers: String,
    body: Buffer,
) -> Result<String> {
    let decode = || {
        let op = Operation::parse(&operation)?;
        let status = u16::try_from(status)
            .ok()
            .filter(|s| (100..=999).contains(s))
            .ok_or_else(|| {
                invalid("wire.decodeResponse: status must be an HTTP status (100 to 999)")
            })?;
        let headers = args::parse("wire.decodeResponse", &headers)?;
        let bad_headers =
            || invalid("wire.decodeResponse: headers must be [name, value] string pairs");
        let headers = headers
            .as_array()
            .ok_or_else(bad_headers)?
            .iter()
            .map(|pair| match pair.as_array().map(Vec::as_slice) {
                Some([serde_json::Value::String(n), serde_json::Value::String(v)]) => {
                    Ok((n.clone(), v.clone()))
                }
                _ => Err(bad_headers()),
            })
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let response = WireResponse::new(status, headers, body.to_vec());
        match op {
            // The escape hatch: whatever the caller sent.
            Operation::Raw => wire::decode_raw(&response).map(|r| shape::raw_response(&r)),
            // As the operation's method returns it.
            declared => records::answer(declared, &response),
        }
    };
    decode().map_err(|e| throw(&e))
}

/// The package's `roomchat` command (`bin/roomchat.js`): runs the command line
/// of `roomchat-cli` (the same `roomchat_cli::run` as the binary of `cargo
/// install roomchat-cli`) on `argv`, the arguments after the program's name,
/// on this thread, which it blocks until the command ends; output goes to the
/// process's stdout and stderr. Returns the exit code.
#[napi]
pub fn cli_main(argv: Vec<String>) -> i32 {
    roomchat_cli::run(
        std::iter::once("roomchat".to_owned())
            .chain(argv)
            .map(Into::into),
    )
}

/// The wall clock now, in milliseconds since the epoch (fractional): the
/// clock core's call and attempt times are read from, for the spans the JS
/// layer makes at dispatch.
#[napi]
pub fn wall_clock() -> f64 {
    telemetry::now_millis()
}

/// The name of an attempt span of `operation` (core's stable name), as the
/// HTTP conventions make it from its declaration: `GET /consumer/api/v2/users`
/// (core's own, at the attempt's end, also has the base URL's path if it has
/// one); `null` for a name core does not declare.
#[napi]
pub fn operation_span_name(operation: String) -> Option<String> {
    let spec = Operation::from_name(&operation)?.spec()?;
    Some(format!("{} {}", spec.method, spec.path))
}

/// Sets the most threads the package's pool runs at once (1 to 1024); returns the previous maximum.
#[napi]
pub fn set_max_threads(max: u32) -> Result<u32> {
    let max = max as usize;
    if !(1..=pool::MAX_THREADS_LIMIT).contains(&max) {
        return Err(throw(&invalid(format!(
            "setMaxThreads: the maximum must be a whole number from 1 to {}",
            pool::MAX_THREADS_LIMIT
        ))));
    }
    Ok(pool::set_max_threads(max) as u32)
}

/// The pool's state.
#[napi(object)]
pub struct ThreadPoolStats {
    /// Threads alive.
    pub threads: u32,
    /// Threads waiting for work.
    pub idle: u32,
    /// Calls waiting for a thread.
    pub queued: u32,
    /// The most threads it runs.
    pub max_threads: u32,
}

/// The pool's state now.
#[napi]
pub fn thread_pool_stats() -> ThreadPoolStats {
    let (threads, idle, queued, max) = pool::stats();
    ThreadPoolStats {
        threads: threads as u32,
        idle: idle as u32,
        queued: queued as u32,
        max_threads: max as u32,
    }
}
