//! `roomchat.Client`, `RateLimit`, `CancelToken` and the users iterators.
//!
//! Every method converts its arguments while it holds the GIL, then calls core with
//! the GIL released (`Python::detach`), then wraps the result. The client handle is
//! read under the GIL only; the one lock held across I/O, an iterator's for a page
//! fetch, records its process, so a child forked meanwhile fails instead of waiting.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple, PyType};
use roomchat::{
    CallOptions, CancelToken as CoreToken, ClientBuilder, OnRedisError, RateLimitConfig, RawAuth,
    RawRequest, RedisBudget, WhenLimited, WithResponse, MAX_PAGE_SIZE,
};

use crate::convert::{flag, opt_text, seconds, text, to_json, whole};
use crate::dispatch::{Deliver, Dispatcher};
use crate::errors::{configuration, to_py, validation, wrong_type, IntoPyResult};
use crate::logging::{self, LoggingObserver};
use crate::models::{RateLimitState, RawResponse};
use crate::models_declared::{User, UserPage};
use crate::response::APIResponse;
use crate::telemetry::{self, Captured, Interruptible};

// ---- RateLimit ------------------------------------------------------------------------

/// The client-side rate limit of a private key: `requests` per `window` seconds; when
/// the budget is spent, `when_limited="wait"` waits up to `max_wait` seconds for a slot
/// (by default the window plus its jitter allowance, the longest a slot can take to free,
/// and a second for contention, at least 60 s: 62 s for the default 60 s window), `"fail"`
/// raises `RateLimitedError` at once.
///
/// With `redis_url`, the budget is kept in Redis and shared by every process and host
/// on the key (gunicorn workers, `multiprocessing`, several machines): one server
/// (`redis://[:password@]host[:port][/db]`, `rediss://`), a Redis Cluster
/// (`redis+cluster://[:password@]host:port[,host:port…]`) or the primary that sentinels
/// name (`redis+sentinel://[:password@]host[:port][,…]/service[/db]`); while Redis
/// cannot be reached, `on_redis_error` says what happens: `"local_fallback"` (count in
/// this process at `requests / expected_processes`), `"fail_closed"` (raise
/// `BudgetUnavailableError`) or `"fail_open"` (send without counting).
#[pyclass(frozen, module = "roomchat")]
#[derive(Clone)]
pub struct RateLimit {
    pub(crate) config: RateLimitConfig,
    pub(crate) redis: Option<RedisBudget>,
}

#[pymethods]
impl RateLimit {
    #[new]
    #[pyo3(signature = (
        requests=None, window=None, when_limited=None, max_wait=None, *, redis_url=None,
        on_redis_error=None, expected_processes=None, redis_key_prefix=None,
        redis_connect_timeout=None, redis_timeout=None, redis_breaker_cooldown=None
    ))]
    #[pyo3(
        text_signature = "(requests=600, window=60.0, when_limited='wait', max_wait=None, *, \
        redis_url=None, on_redis_error='local_fallback', expected_processes=4, \
        redis_key_prefix='roomchat', redis_connect_timeout=0.5, redis_timeout=0.5, \
        redis_breaker_cooldown=5.0)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        requests: Option<&Bound<'_, PyAny>>,
        window: Option<&Bound<'_, PyAny>>,
        when_limited: Option<&Bound<'_, PyAny>>,
        max_wait: Option<&Bound<'_, PyAny>>,
        redis_url: Option<&Bound<'_, PyAny>>,
        on_redis_error: Option<&Bound<'_, PyAny>>,
        expected_processes: Option<&Bound<'_, PyAny>>,
        redis_key_prefix: Option<&Bound<'_, PyAny>>,
        redis_connect_timeout: Option<&Bound<'_, PyAny>>,
        redis_timeout: Option<&Bound<'_, PyAny>>,
        redis_breaker_cooldown: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<RateLimit> {
        let requests = match requests {
            Some(r) => whole("requests", r, 1, u32::MAX.into())? as u32,
            None => 600,
        };
        let window = match window {
            Some(w) => seconds("window", w)?,
            None => Duration::from_secs(60),
        };
        let max_wait = match max_wait {
            Some(w) if !w.is_none() => Some(seconds("max_wait", w)?),
            _ => None,
        };
        let mut config = RateLimitConfig::new(requests, window);
        config.when_limited = match opt_text("when_limited", when_limited)?.as_deref() {
            // Unset: core's default, the window plus its jitter allowance.
            None | Some("wait") => max_wait.map_or(config.when_limited, WhenLimited::Wait),
            Some("fail") => WhenLimited::Fail,
            Some(other) => {
                return Err(configuration(
                    py,
                    format!("when_limited must be \"wait\" or \"fail\", not {other:?}"),
                ))
            }
        };
        if window.is_zero() {
            return Err(configuration(py, "window must be more than 0 seconds"));
        }
        let redis_only = [
            ("on_redis_error", on_redis_error),
            ("expected_processes", expected_processes),
            ("redis_key_prefix", redis_key_prefix),
            ("redis_connect_timeout", redis_connect_timeout),
            ("redis_timeout", redis_timeout),
            ("redis_breaker_cooldown", redis_breaker_cooldown),
        ];
        let redis = match opt_text("redis_url", redis_url)? {
            None => {
                if let Some((name, _)) = redis_only
                    .iter()
                    .find(|(_, v)| v.is_some_and(|v| !v.is_none()))
                {
                    return Err(configuration(
                        py,
                        format!("{name} is given only with redis_url"),
                    ));
                }
                None
            }
            Some(url) => {
                let mut redis = RedisBudget::new(url);
                if let Some(policy) = opt_text("on_redis_error", on_redis_error)? {
                    redis = redis.on_error(OnRedisError::from_name(&policy).ok_or_else(|| {
                        configuration(
                            py,
                            format!(
                                "on_redis_error must be \"local_fallback\", \"fail_closed\" or \"fail_open\", not {policy:?}"
                            ),
                        )
                    })?);
                }
                if let Some(n) = expected_processes.filter(|v| !v.is_none()) {
                    redis =
                        redis.expected_processes(
                            whole("expected_processes", n, 1, u32::MAX.into())? as u32,
                        );
                }
                if let Some(prefix) = opt_text("redis_key_prefix", redis_key_prefix)? {
                    redis = redis.key_prefix(prefix);
                }
                if let Some(t) = redis_connect_timeout.filter(|v| !v.is_none()) {
                    redis = redis.connect_timeout(seconds("redis_connect_timeout", t)?);
                }
                if let Some(t) = redis_timeout.filter(|v| !v.is_none()) {
                    redis = redis.io_timeout(seconds("redis_timeout", t)?);
                }
                if let Some(t) = redis_breaker_cooldown.filter(|v| !v.is_none()) {
                    redis = redis.breaker_cooldown(seconds("redis_breaker_cooldown", t)?);
                }
                Some(redis)
            }
        };
        Ok(RateLimit { config, redis })
    }

    /// Requests allowed per window.
    #[getter]
    fn requests(&self) -> u32 {
        self.config.requests
    }
    /// The window, in seconds.
    #[getter]
    fn window(&self) -> f64 {
        self.config.window.as_secs_f64()
    }
    /// `"wait"` or `"fail"`.
    #[getter]
    fn when_limited(&self) -> &'static str {
        match self.config.when_limited {
            WhenLimited::Wait(_) => "wait",
            WhenLimited::Fail => "fail",
        }
    }
    /// The longest wait for a slot, in seconds (`None` with `"fail"`).
    #[getter]
    fn max_wait(&self) -> Option<f64> {
        match self.config.when_limited {
            WhenLimited::Wait(w) => Some(w.as_secs_f64()),
            WhenLimited::Fail => None,
        }
    }
    /// The Redis URL of a shared budget, its password shown as `REDACTED` (`None`: in-process).
    #[getter]
    fn redis_url(&self) -> Option<String> {
        self.redis.as_ref().map(RedisBudget::redacted_url)
    }
    /// What happens while Redis cannot be reached (`None` without `redis_url`).
    #[getter]
    fn on_redis_error(&self) -> Option<&'static str> {
        self.redis.as_ref().map(|r| r.policy().name())
    }
    fn __eq__(&self, other: &Self) -> bool {
        self.config == other.config && self.redis == other.redis
    }
    fn __hash__(&self) -> u64 {
        u64::from(self.config.requests) ^ self.config.window.as_millis() as u64
    }
    fn __repr__(&self) -> String {
        let redis = match &self.redis {
            Some(r) => format!(
                ", redis_url='{}', on_redis_error='{}'",
                r.redacted_url(),
                r.policy().name()
            ),
            None => String::new(),
        };
        let limit = match self.config.when_limited {
            WhenLimited::Wait(w) => format!(
                "RateLimit(requests={}, window={}, when_limited='wait', max_wait={}",
                self.config.requests,
                self.config.window.as_secs_f64(),
                w.as_secs_f64()
            ),
            WhenLimited::Fail => format!(
                "RateLimit(requests={}, window={}, when_limited='fail'",
                self.config.requests,
                self.config.window.as_secs_f64()
            ),
        };
        format!("{limit}{redis})")
    }
}

// ---- CancelToken ------------------------------------------------------------------------

/// Cancels the calls of a client made with `Client.with_cancel(token)`, from any thread:
/// a rate-limit wait or retry backoff is abandoned at once, and a request on the wire is
/// given up within 50 ms (its connection is closed). The call raises `CancelledError`.
#[pyclass(frozen, module = "roomchat")]
pub struct CancelToken {
    inner: CoreToken,
}

#[pymethods]
impl CancelToken {
    #[new]
    fn new() -> CancelToken {
        CancelToken {
            inner: CoreToken::new(),
        }
    }
    /// Cancels every call made with this token, now and later.
    fn cancel(&self) {
        self.inner.cancel();
    }
    /// Whether `cancel()` was called.
    #[getter]
    fn cancelled(&self) -> bool {
        self.inner.is_cancelled()
    }
    fn __repr__(&self) -> String {
        format!(
            "CancelToken(cancelled={})",
            if self.cancelled() { "True" } else { "False" }
        )
    }
}

// ---- Client --------------------------------------------------------------------------------

/// A client of the chat service's REST API (see the package docs).
#[pyclass(frozen, subclass, module = "roomchat")]
pub struct Client {
    /// `None` once closed. Read (and cloned: one `Arc`) under the GIL only. Shared
    /// (weakly) with the budget gauge of its OpenTelemetry (`telemetry::watch`).
    inner: Arc<RwLock<Option<roomchat::Client>>>,
    /// Made by `with_cancel` (or from a view that was): its calls run with the
    /// application's token, never one of the telemetry's own.
    cancellable: bool,
    /// Made for `with_raw_response`: every call returns an `APIResponse`.
    raw: bool,
}

/// The settings `Client(...)` and `Client.from_env(...)` take besides the key and URLs.
struct Settings<'a, 'py> {
    timeout: Option<&'a Bound<'py, PyAny>>,
    connect_timeout: Option<&'a Bound<'py, PyAny>>,
    max_retries: Option<&'a Bound<'py, PyAny>>,
    retry_non_idempotent: Option<&'a Bound<'py, PyAny>>,
    rate_limit: Option<&'a Bound<'py, PyAny>>,
    allow_insecure_http: Option<&'a Bound<'py, PyAny>>,
    max_retry_wait: Option<&'a Bound<'py, PyAny>>,
    base_backoff: Option<&'a Bound<'py, PyAny>>,
    max_response_bytes: Option<&'a Bound<'py, PyAny>>,
    ca_bundle: Option<&'a Bound<'py, PyAny>>,
    tls_roots: Option<&'a Bound<'py, PyAny>>,
    proxy: Option<&'a Bound<'py, PyAny>>,
    trust_env: Option<&'a Bound<'py, PyAny>>,
    gzip: Option<&'a Bound<'py, PyAny>>,
    propagate_trace_context: Option<&'a Bound<'py, PyAny>>,
    telemetry: telemetry::Options<'a, 'py>,
}

fn given<'py>(value: Option<&Bound<'py, PyAny>>) -> Option<Bound<'py, PyAny>> {
    value.filter(|v| !v.is_none()).cloned()
}

/// The Python the package runs on, for the `User-Agent`: `CPython 3.11`.
fn runtime(py: Python<'_>) -> PyResult<String> {
    let implementation: String = py
        .import("platform")?
        .call_method0("python_implementation")?
        .extract()?;
    let version = py.import("sys")?.getattr("version_info")?;
    let (major, minor): (u32, u32) = (
        version.getattr("major")?.extract()?,
        version.getattr("minor")?.extract()?,
    );
    Ok(format!("{implementation} {major}.{minor}"))
}

impl Settings<'_, '_> {
    /// The builder with these settings, and the Python side of the client's
    /// OpenTelemetry (if any: [`telemetry::watch`] it once the client is built).
    fn apply(
        &self,
        py: Python<'_>,
        builder: ClientBuilder,
    ) -> PyResult<(ClientBuilder, Option<Py<PyAny>>)> {
        let mut builder = builder.sdk_identity(
            concat!("roomchat-python/", env!("CARGO_PKG_VERSION")),
            Some(runtime(py)?),
        );
        if let Some(v) = given(self.timeout) {
            builder = builder.timeout(seconds("timeout", &v)?);
        }
        if let Some(v) = given(self.connect_timeout) {
            builder = builder.connect_timeout(seconds("connect_timeout", &v)?);
        }
        if let Some(v) = given(self.max_retries) {
            builder = builder.max_retries(whole("max_retries", &v, 0, 100)? as u32);
        }
        if let Some(v) = given(self.retry_non_idempotent) {
            builder = builder.retry_non_idempotent(flag("retry_non_idempotent", &v)?);
        }
        if let Some(v) = given(self.allow_insecure_http) {
            builder = builder.allow_insecure_http(flag("allow_insecure_http", &v)?);
        }
        if let Some(v) = given(self.max_retry_wait) {
            builder = builder.max_retry_wait(seconds("max_retry_wait", &v)?);
        }
        if let Some(v) = given(self.base_backoff) {
            builder = builder.base_backoff(seconds("base_backoff", &v)?);
        }
        if let Some(v) = given(self.max_response_bytes) {
            builder = builder.max_response_bytes(whole(
                "max_response_bytes",
                &v,
                1,
                u64::MAX.into(),
            )? as u64);
        }
        if let Some(v) = given(self.ca_bundle) {
            let py = v.py();
            let path: std::path::PathBuf = v
                .extract()
                .map_err(|_| wrong_type("ca_bundle", "a path (str or os.PathLike)", &v))?;
            let pem = std::fs::read(&path).map_err(|e| {
                configuration(
                    py,
                    format!(
                        "ca_bundle {:?} cannot be read: {e}",
                        path.display().to_string()
                    ),
                )
            })?;
            builder = builder.add_root_certificates_pem(pem);
        }
        if let Some(v) = given(self.tls_roots) {
            let name = text("tls_roots", &v)?;
            let roots = roomchat::TlsRoots::from_name(&name).ok_or_else(|| {
                configuration(
                    v.py(),
                    format!("tls_roots must be \"webpki\" or \"system\" (got {name:?})"),
                )
            })?;
            builder = builder.tls_roots(roots);
        }
        if let Some(v) = given(self.gzip) {
            builder = builder.gzip(flag("gzip", &v)?);
        }
        let trust_env = match given(self.trust_env) {
            Some(v) => flag("trust_env", &v)?,
            None => true,
        };
        match given(self.proxy) {
            Some(v) => builder = builder.proxy(roomchat::Proxy::url(text("proxy", &v)?)),
            None if !trust_env => builder = builder.proxy(roomchat::Proxy::None),
            None => {}
        }
        // As httpx's trust_env: the environment's CA file is ignored too.
        builder = builder.read_ssl_cert_file(trust_env);
        if let Some(v) = given(self.rate_limit) {
            let limit = v
                .cast::<RateLimit>()
                .map_err(|_| wrong_type("rate_limit", "a roomchat.RateLimit", &v))?;
            builder = builder.rate_limit(limit.get().config);
            if let Some(redis) = &limit.get().redis {
                builder = builder.redis_budget(redis.clone());
            }
        }
        if let Some(v) = given(self.propagate_trace_context) {
            builder = builder.propagate_trace_context(flag("propagate_trace_context", &v)?);
        }
        let mut telemetry = None;
        if let Some((instrumentation, python)) = self.telemetry.instrumentation(py)? {
            builder = builder.instrumentation(instrumentation);
            telemetry = Some(python);
        }
        Ok((builder.observer(Arc::new(LoggingObserver)), telemetry))
    }
}

impl Client {
    fn wrap(client: roomchat::Client) -> Client {
        Client {
            inner: Arc::new(RwLock::new(Some(client))),
            raw: false,
            cancellable: false,
        }
    }

    /// The client `builder` builds, its budget reported by its OpenTelemetry's gauge.
    fn built(
        py: Python<'_>,
        (builder, telemetry): (ClientBuilder, Option<Py<PyAny>>),
    ) -> PyResult<Client> {
        let client = Client::wrap(build(py, builder)?);
        if let Some(telemetry) = telemetry {
            let server_address = client.core(py)?.server_address().to_owned();
            telemetry::watch(py, &telemetry, &client.inner, &server_address)?;
        }
        Ok(client)
    }

    /// Another handle (a view) of the same kind as this one.
    fn like(&self, client: roomchat::Client) -> Client {
        Client {
            inner: Arc::new(RwLock::new(Some(client))),
            raw: self.raw,
            cancellable: self.cancellable,
        }
    }

    /// Runs `call` now with the GIL released, or, given `_submit=(dispatcher, future,
    /// token)` (how `AsyncClient` calls), queues it on the dispatcher's threads with the
    /// token's cancellation and returns `None`; `wrap` makes the Python result.
    pub(crate) fn finish<T: Send + 'static>(
        &self,
        py: Python<'_>,
        submit: Option<&Bound<'_, PyAny>>,
        call: impl FnOnce(&roomchat::Client) -> roomchat::Result<T> + Send + 'static,
        wrap: fn(Python<'_>, T) -> PyResult<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let client = self.core(py)?;
        // An AsyncClient call is cancelled through its task's token.
        let cancellable = move |token: Option<CoreToken>| match token {
            Some(token) => client.with_cancel(token),
            None => client,
        };
        if self.raw {
            return run_or_submit(
                py,
                submit,
                !self.cancellable,
                move |token| {
                    let client = cancellable(token);
                    move || client.with_response(call).map(|r| (r, wrap))
                },
                wrap_api_response::<T>,
            );
        }
        run_or_submit(
            py,
            submit,
            !self.cancellable,
            move |token| {
                let client = cancellable(token);
                move || call(&client)
            },
            wrap,
        )
    }

    /// The core client, for one call (and the logging levels for it, read now).
    pub(crate) fn core(&self, py: Python<'_>) -> PyResult<roomchat::Client> {
        let client = self
            .inner
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| configuration(py, "the client is closed"))?;
        logging::refresh(py);
        Ok(client)
    }
}

/// Builds the client without the GIL: building takes core's process-wide registries
/// of budgets, whose locks other calls hold while they wait.
fn build(py: Python<'_>, builder: ClientBuilder) -> PyResult<roomchat::Client> {
    crate::exiting::detach(py, move || builder.build()).or_raise(py)
}

/// `(dispatcher, future, token)` of a `_submit=` argument.
fn submit_parts<'py>(
    submit: &Bound<'py, PyAny>,
) -> PyResult<(
    Bound<'py, Dispatcher>,
    Bound<'py, PyAny>,
    Bound<'py, CancelToken>,
)> {
    submit.extract().map_err(|_| {
        wrong_type(
            "_submit",
            "a (Dispatcher, Future, CancelToken) tuple",
            submit,
        )
    })
}

/// Runs the call `make` gives now, with the GIL released, and wraps its result; or,
/// given `_submit=(dispatcher, future, token)` (how `AsyncClient` calls), queues it on
/// the dispatcher's threads (`make` is given the token) and returns `None`.
///
/// `own_token`: a call run now may be given a token of its own (`make` then gets it),
/// which the telemetry's hooks cancel when a signal's handler interrupts the call
/// (`telemetry::Interrupt`); false for a call whose client or iterator may carry the
/// application's token, which a token given to `make` would replace.
pub(crate) fn run_or_submit<T: Send + 'static, F>(
    py: Python<'_>,
    submit: Option<&Bound<'_, PyAny>>,
    own_token: bool,
    make: impl FnOnce(Option<CoreToken>) -> F,
    wrap: fn(Python<'_>, T) -> PyResult<Py<PyAny>>,
) -> PyResult<Py<PyAny>>
where
    F: FnOnce() -> roomchat::Result<T> + Send + 'static,
{
    // The OpenTelemetry context of the call, on the caller's thread (an AsyncClient
    // call's: its task's), wherever the call then runs.
    let captured = Captured::now(py, crate::logging::current() != 0);
    let Some(submit) = submit.filter(|s| !s.is_none()) else {
        let captured = if own_token {
            captured
        } else {
            captured.without_token()
        };
        let call = make(captured.token());
        let result = crate::exiting::detach(py, move || captured.run(call)).into_result()?;
        return wrap(py, result.or_raise(py)?);
    };
    let (dispatcher, future, token) = submit_parts(submit)?;
    let token = token.get().inner.clone();
    let call = make(Some(token.clone()));
    // The token `AsyncClient` made for this call (or iterator step) alone: ours.
    let captured = captured.with_token(token);
    submit_job(py, &dispatcher, future, move || captured.run(call), wrap)?;
    Ok(py.None())
}

/// Queues `call` on `dispatcher`; its result (made by `wrap` on the loop thread) completes
/// `future`, or what interrupted it fails it.
fn submit_job<T: Send + 'static>(
    py: Python<'_>,
    dispatcher: &Bound<'_, Dispatcher>,
    future: Bound<'_, PyAny>,
    call: impl FnOnce() -> Interruptible<roomchat::Result<T>> + Send + 'static,
    wrap: fn(Python<'_>, T) -> PyResult<Py<PyAny>>,
) -> PyResult<()> {
    let levels = logging::current();
    dispatcher.get().submit(
        py,
        future.unbind(),
        Box::new(move || {
            logging::set(levels);
            let result = call();
            Box::new(move |py: Python<'_>| match result.into_result()? {
                Ok(value) => wrap(py, value),
                Err(e) => Err(to_py(py, &e)),
            }) as Deliver
        }),
    )
}

/// How a call's result becomes a Python object.
type Wrap<T> = fn(Python<'_>, T) -> PyResult<Py<PyAny>>;

/// A call's result, made by its own `wrap`, inside an `APIResponse` with the answer.
fn wrap_api_response<T>(
    py: Python<'_>,
    (response, wrap): (WithResponse<T>, Wrap<T>),
) -> PyResult<Py<PyAny>> {
    let (value, meta) = response.into_parts();
    let value = wrap(py, value)?;
    Ok(Py::new(py, APIResponse::new(meta, value))?.into_any())
}

fn wrap_page(py: Python<'_>, page: roomchat::UserPage) -> PyResult<Py<PyAny>> {
    Ok(Py::new(py, UserPage::from(page))?.into_any())
}

fn wrap_raw(py: Python<'_>, inner: roomchat::RawResponse) -> PyResult<Py<PyAny>> {
    Ok(Py::new(py, RawResponse { inner })?.into_any())
}

fn wrap_users(py: Python<'_>, users: Vec<roomchat::User>) -> PyResult<Py<PyAny>> {
    let list = PyList::empty(py);
    for u in users {
        list.append(Py::new(py, User { inner: Arc::new(u) })?)?;
    }
    Ok(list.into_any().unbind())
}

fn wrap_next_page(py: Python<'_>, page: Option<roomchat::UserPage>) -> PyResult<Py<PyAny>> {
    match page {
        Some(page) => wrap_page(py, page),
        None => Ok(py.None()),
    }
}

/// `page_size` of the users iterators.
fn page_size(name: &str, value: &Bound<'_, PyAny>) -> PyResult<u32> {
    Ok(whole(name, value, 1, MAX_PAGE_SIZE.into())? as u32)
}

/// A `str` or `int` query value, as text.
fn query_value(name: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    if value.is_instance_of::<PyString>() {
        return text(name, value);
    }
    if value.is_instance_of::<pyo3::types::PyInt>()
        && !value.is_instance_of::<pyo3::types::PyBool>()
    {
        return Ok(value.str()?.to_string());
    }
    Err(wrong_type(name, "a str or an int", value))
}

#[pymethods]
impl Client {
    #[new]
    #[pyo3(signature = (
        private_key, *, base_url, chat_url=None, public_key=None, timeout=None,
        connect_timeout=None, max_retries=None, retry_non_idempotent=None, rate_limit=None,
        app_name=None, allow_insecure_http=None, max_retry_wait=None, base_backoff=None,
        max_response_bytes=None, ca_bundle=None, tls_roots=None, proxy=None, trust_env=None, gzip=None,
        propagate_trace_context=None, opentelemetry=None, tracer_provider=None, meter_provider=None
    ))]
    #[pyo3(
        text_signature = "(private_key, *, base_url, chat_url=None, public_key=None, \
        timeout=30.0, connect_timeout=10.0, max_retries=2, retry_non_idempotent=False, \
        rate_limit=None, app_name=None, allow_insecure_http=False, max_retry_wait=60.0, \
        base_backoff=0.25, max_response_bytes=16777216, ca_bundle=None, tls_roots='webpki', \
        proxy=None, trust_env=True, gzip=True, propagate_trace_context=True, opentelemetry=True, \
        tracer_provider=None, meter_provider=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        private_key: &Bound<'_, PyAny>,
        base_url: &Bound<'_, PyAny>,
        chat_url: Option<&Bound<'_, PyAny>>,
        public_key: Option<&Bound<'_, PyAny>>,
        timeout: Option<&Bound<'_, PyAny>>,
        connect_timeout: Option<&Bound<'_, PyAny>>,
        max_retries: Option<&Bound<'_, PyAny>>,
        retry_non_idempotent: Option<&Bound<'_, PyAny>>,
        rate_limit: Option<&Bound<'_, PyAny>>,
        app_name: Option<&Bound<'_, PyAny>>,
        allow_insecure_http: Option<&Bound<'_, PyAny>>,
        max_retry_wait: Option<&Bound<'_, PyAny>>,
        base_backoff: Option<&Bound<'_, PyAny>>,
        max_response_bytes: Option<&Bound<'_, PyAny>>,
        ca_bundle: Option<&Bound<'_, PyAny>>,
        tls_roots: Option<&Bound<'_, PyAny>>,
        proxy: Option<&Bound<'_, PyAny>>,
        trust_env: Option<&Bound<'_, PyAny>>,
        gzip: Option<&Bound<'_, PyAny>>,
        propagate_trace_context: Option<&Bound<'_, PyAny>>,
        opentelemetry: Option<&Bound<'_, PyAny>>,
        tracer_provider: Option<&Bound<'_, PyAny>>,
        meter_provider: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Client> {
        let py = private_key.py();
        let mut builder = roomchat::Client::builder(text("private_key", private_key)?)
            .base_url(text("base_url", base_url)?);
        if let Some(url) = opt_text("chat_url", chat_url)? {
            builder = builder.chat_url(url);
        }
        if let Some(key) = opt_text("public_key", public_key)? {
            builder = builder.public_key(key);
        }
        if let Some(app) = opt_text("app_name", app_name)? {
            builder = builder.app_name(app);
        }
        let builder = Settings {
            timeout,
            connect_timeout,
            max_retries,
            retry_non_idempotent,
            rate_limit,
            allow_insecure_http,
            max_retry_wait,
            base_backoff,
            max_response_bytes,
            ca_bundle,
            tls_roots,
            proxy,
            trust_env,
            gzip,
            propagate_trace_context,
            telemetry: telemetry::Options {
                enabled: opentelemetry,
                tracer_provider,
                meter_provider,
            },
        }
        .apply(py, builder)?;
        Client::built(py, builder)
    }

    /// A client from `ROOMCHAT_PRIVATE_KEY` and `ROOMCHAT_BASE_URL` (required) and
    /// `ROOMCHAT_CHAT_URL`, `ROOMCHAT_PUBLIC_KEY`, `ROOMCHAT_APP_NAME` (optional; empty
    /// counts as unset), with the other settings as keyword arguments.
    #[classmethod]
    #[pyo3(signature = (
        *, timeout=None, connect_timeout=None, max_retries=None, retry_non_idempotent=None,
        rate_limit=None, allow_insecure_http=None, max_retry_wait=None, base_backoff=None,
        max_response_bytes=None, ca_bundle=None, tls_roots=None, proxy=None, trust_env=None, gzip=None,
        propagate_trace_context=None, opentelemetry=None, tracer_provider=None, meter_provider=None
    ))]
    #[pyo3(
        text_signature = "(*, timeout=30.0, connect_timeout=10.0, max_retries=2, \
        retry_non_idempotent=False, rate_limit=None, allow_insecure_http=False, \
        max_retry_wait=60.0, base_backoff=0.25, max_response_bytes=16777216, ca_bundle=None, \
        tls_roots='webpki', proxy=None, trust_env=True, gzip=True, propagate_trace_context=True, \
        opentelemetry=True, tracer_provider=None, meter_provider=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn from_env<'py>(
        cls: &Bound<'py, PyType>,
        timeout: Option<&Bound<'py, PyAny>>,
        connect_timeout: Option<&Bound<'py, PyAny>>,
        max_retries: Option<&Bound<'py, PyAny>>,
        retry_non_idempotent: Option<&Bound<'py, PyAny>>,
        rate_limit: Option<&Bound<'py, PyAny>>,
        allow_insecure_http: Option<&Bound<'py, PyAny>>,
        max_retry_wait: Option<&Bound<'py, PyAny>>,
        base_backoff: Option<&Bound<'py, PyAny>>,
        max_response_bytes: Option<&Bound<'py, PyAny>>,
        ca_bundle: Option<&Bound<'py, PyAny>>,
        tls_roots: Option<&Bound<'py, PyAny>>,
        proxy: Option<&Bound<'py, PyAny>>,
        trust_env: Option<&Bound<'py, PyAny>>,
        gzip: Option<&Bound<'py, PyAny>>,
        propagate_trace_context: Option<&Bound<'py, PyAny>>,
        opentelemetry: Option<&Bound<'py, PyAny>>,
        tracer_provider: Option<&Bound<'py, PyAny>>,
        meter_provider: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, Client>> {
        let py = cls.py();
        let builder = ClientBuilder::from_env().or_raise(py)?;
        let builder = Settings {
            timeout,
            connect_timeout,
            max_retries,
            retry_non_idempotent,
            rate_limit,
            allow_insecure_http,
            max_retry_wait,
            base_backoff,
            max_response_bytes,
            ca_bundle,
            tls_roots,
            proxy,
            trust_env,
            gzip,
            propagate_trace_context,
            telemetry: telemetry::Options {
                enabled: opentelemetry,
                tracer_provider,
                meter_provider,
            },
        }
        .apply(py, builder)?;
        Bound::new(py, Client::built(py, builder)?)
    }

    /// The same client (same connections, budget and settings) whose calls `token` cancels.
    fn with_cancel(&self, py: Python<'_>, token: &CancelToken) -> PyResult<Client> {
        let client = self.core(py)?;
        Ok(Client {
            cancellable: true,
            ..self.like(client.with_cancel(token.inner.clone()))
        })
    }

    /// A view of this client whose calls use the settings given here (seconds, as for
    /// `Client(...)`) and the client's elsewhere. It shares the client's connections,
    /// rate-limit budget and logging: its calls count in `rate_limit_state()` of both.
    /// Cheap: make one per call if you like. A bad value raises as `Client(...)` does.
    #[pyo3(signature = (*, timeout=None, connect_timeout=None, max_retries=None, max_retry_wait=None))]
    #[pyo3(
        text_signature = "(self, *, timeout=None, connect_timeout=None, max_retries=None, max_retry_wait=None)"
    )]
    fn with_options(
        &self,
        py: Python<'_>,
        timeout: Option<&Bound<'_, PyAny>>,
        connect_timeout: Option<&Bound<'_, PyAny>>,
        max_retries: Option<&Bound<'_, PyAny>>,
        max_retry_wait: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Client> {
        let mut options = CallOptions::new();
        if let Some(v) = given(timeout) {
            options = options.timeout(seconds("timeout", &v)?);
        }
        if let Some(v) = given(connect_timeout) {
            options = options.connect_timeout(seconds("connect_timeout", &v)?);
        }
        if let Some(v) = given(max_retries) {
            options = options.max_retries(whole("max_retries", &v, 0, 100)? as u32);
        }
        if let Some(v) = given(max_retry_wait) {
            options = options.max_retry_wait(seconds("max_retry_wait", &v)?);
        }
        let view = self.core(py)?.with_options(options).or_raise(py)?;
        Ok(self.like(view))
    }

    /// The same client whose methods return an `APIResponse` (status, headers,
    /// request id, attempts, and `parse()` for the result) instead of the result alone:
    /// `client.with_raw_response.list_users(limit=10)`.
    #[getter]
    fn with_raw_response<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        slf.py()
            .import("roomchat._raw")?
            .getattr("ClientWithRawResponse")?
            .call1((slf,))
    }

    /// A handle of this client whose calls return `APIResponse`s (for `roomchat._raw`).
    fn _raw_view(&self, py: Python<'_>) -> PyResult<Client> {
        Ok(Client {
            inner: Arc::new(RwLock::new(Some(self.core(py)?))),
            raw: true,
            cancellable: self.cancellable,
        })
    }

    /// The REST base URL.
    #[getter]
    fn base_url(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.core(py)?.base_url().to_owned())
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.inner
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .is_none()
    }

    /// Lets go of this handle's connections; later calls raise `ConfigurationError`.
    fn close(&self, py: Python<'_>) {
        let client = self.inner.write().unwrap_or_else(|p| p.into_inner()).take();
        // Without the GIL: closing sockets takes core's registry locks.
        crate::exiting::detach(py, move || drop(client));
    }

    fn __enter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> bool {
        self.close(py);
        false
    }

    fn __repr__(&self) -> String {
        match &*self.inner.read().unwrap_or_else(|p| p.into_inner()) {
            Some(client) => format!("Client(base_url={:?})", client.base_url()).replace('"', "'"),
            None => "Client(closed)".to_owned(),
        }
    }

    /// Every user, fetched lazily `page_size` at a time (1 to 200); a user id is never yielded twice.
    #[pyo3(signature = (page_size=None))]
    #[pyo3(text_signature = "(self, page_size=200)")]
    fn users(
        &self,
        py: Python<'_>,
        page_size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<UserIterator> {
        let size = match page_size {
            Some(p) => self::page_size("page_size", p)?,
            None => MAX_PAGE_SIZE,
        };
        let users = self.core(py)?.users_with_page_size(size);
        Ok(UserIterator {
            state: Arc::new(IterLock::new(UsersState {
                users,
                pending: None,
                held: VecDeque::new(),
            })),
        })
    }

    /// The users listing page by page, `page_size` at a time (1 to 200).
    #[pyo3(signature = (page_size=None))]
    #[pyo3(text_signature = "(self, page_size=200)")]
    fn user_pages(
        &self,
        py: Python<'_>,
        page_size: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<UserPageIterator> {
        let size = match page_size {
            Some(p) => self::page_size("page_size", p)?,
            None => MAX_PAGE_SIZE,
        };
        let pages = self.core(py)?.user_pages(size);
        Ok(UserPageIterator {
            pages: Arc::new(IterLock::new(UserPagesState { pages, held: None })),
        })
    }

    /// A request to an endpoint the contract names without a shape, through the same
    /// limits, retries and errors. `query`: a mapping or pairs (the key is added by the
    /// client); `json`: the body; `auth`: `"private"`, `"public"` or `"none"`.
    #[pyo3(signature = (method, path, *, query=None, json=None, auth=None, _submit=None))]
    #[pyo3(text_signature = "(self, method, path, *, query=None, json=None, auth='private')")]
    #[allow(clippy::too_many_arguments)]
    fn raw_request(
        &self,
        py: Python<'_>,
        method: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        query: Option<&Bound<'_, PyAny>>,
        json: Option<&Bound<'_, PyAny>>,
        auth: Option<&Bound<'_, PyAny>>,
        _submit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let auth = match opt_text("auth", auth)?.as_deref() {
            None | Some("private") => RawAuth::PrivateKey,
            Some("public") => RawAuth::PublicKey,
            Some("none") => RawAuth::None,
            Some(other) => {
                return Err(validation(
                    py,
                    format!("auth must be \"private\", \"public\" or \"none\", not {other:?}"),
                ))
            }
        };
        let mut request = RawRequest::new(text("method", method)?, text("path", path)?).auth(auth);
        if let Some(query) = query.filter(|q| !q.is_none()) {
            let pairs: Vec<Bound<'_, PyAny>> = if let Ok(dict) = query.cast::<PyDict>() {
                dict.items().iter().collect()
            } else if query.is_instance_of::<PyList>() || query.is_instance_of::<PyTuple>() {
                query.try_iter()?.collect::<PyResult<_>>()?
            } else {
                return Err(wrong_type(
                    "query",
                    "a dict or a list of (name, value) pairs",
                    query,
                ));
            };
            for pair in pairs {
                let pair = pair
                    .cast_into::<PyTuple>()
                    .ok()
                    .filter(|t| t.len() == 2)
                    .ok_or_else(|| {
                        wrong_type("query", "a dict or a list of (name, value) pairs", query)
                    })?;
                let name = text("query name", &pair.get_item(0)?)?;
                let value = query_value("query value", &pair.get_item(1)?)?;
                request = request.query(name, value);
            }
        }
        if let Some(body) = json.filter(|j| !j.is_none()) {
            request = request.body(to_json("json", body)?);
        }
        self.finish(py, _submit, move |c| c.raw_request(&request), wrap_raw)
    }

    /// Where this key's shared rate-limit budget stands.
    fn rate_limit_state(&self, py: Python<'_>) -> PyResult<RateLimitState> {
        let client = self.core(py)?;
        // Without the GIL: the state sits behind the budget's locks, which other calls
        // hold while they wait on Redis.
        Ok(crate::exiting::detach(py, move || client.rate_limit_state()).into())
    }

    /// The browser address that signs the holder of `access_token` in to `room_id`
    /// (needs `chat_url`).
    fn sign_in_url(
        &self,
        py: Python<'_>,
        room_id: &Bound<'_, PyAny>,
        access_token: &Bound<'_, PyAny>,
    ) -> PyResult<String> {
        let (room, token) = (
            text("room_id", room_id)?,
            text("access_token", access_token)?,
        );
        self.core(py)?.sign_in_url(&room, &token).or_raise(py)
    }

    /// An `<iframe>` showing `room_id` signed in as the holder of `access_token`.
    #[pyo3(signature = (room_id, access_token, *, width=None, height=None))]
    #[pyo3(text_signature = "(self, room_id, access_token, *, width='100%', height='600')")]
    fn iframe_html(
        &self,
        py: Python<'_>,
        room_id: &Bound<'_, PyAny>,
        access_token: &Bound<'_, PyAny>,
        width: Option<&Bound<'_, PyAny>>,
        height: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        let (room, token) = (
            text("room_id", room_id)?,
            text("access_token", access_token)?,
        );
        let width = opt_text("width", width)?.unwrap_or_else(|| "100%".to_owned());
        let height = opt_text("height", height)?.unwrap_or_else(|| "600".to_owned());
        self.core(py)?
            .iframe_html(&room, &token, &width, &height)
            .or_raise(py)
    }
}

// ---- iterators ---------------------------------------------------------------------------

/// An iterator's state behind a lock that is held for a whole page fetch, and that
/// knows which process holds it: after `fork()` in the middle of a fetch by another
/// thread, the child's copy of the lock stays held for good (the thread holding it
/// does not exist there), so the child gets an error instead of waiting forever.
pub(crate) struct IterLock<T> {
    state: Mutex<T>,
    /// The id of the process whose thread holds `state`, or 0 when it is free.
    holder: AtomicU32,
}

/// The lock of an [`IterLock`]: marks it free again before unlocking.
pub(crate) struct IterGuard<'a, T> {
    state: MutexGuard<'a, T>,
    holder: &'a AtomicU32,
}

impl<T> IterLock<T> {
    pub(crate) fn new(state: T) -> IterLock<T> {
        IterLock {
            state: Mutex::new(state),
            holder: AtomicU32::new(0),
        }
    }

    /// Fails when a thread of the parent process held the lock at the fork (checked
    /// with the GIL held, before waiting for the lock: in the child, nothing can change
    /// `holder` any more).
    pub(crate) fn check_not_forked_mid_fetch(&self) -> PyResult<()> {
        match self.holder.load(Ordering::Acquire) {
            0 => Ok(()),
            pid if pid == std::process::id() => Ok(()),
            _ => Err(PyRuntimeError::new_err(
                "this iterator was fetching a page in another thread when the process forked: \
                 its state is the parent's, half-way; start a new one in this process",
            )),
        }
    }

    /// Locks the state: only ever with the GIL released (see `UserIterator`).
    pub(crate) fn lock(&self) -> IterGuard<'_, T> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        self.holder.store(std::process::id(), Ordering::Release);
        IterGuard {
            state,
            holder: &self.holder,
        }
    }
}

impl<T> std::ops::Deref for IterGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.state
    }
}

impl<T> std::ops::DerefMut for IterGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.state
    }
}

impl<T> Drop for IterGuard<'_, T> {
    fn drop(&mut self) {
        // Before the mutex itself is released (the field is dropped after this).
        self.holder.store(0, Ordering::Release);
    }
}

struct UsersState {
    users: roomchat::Users,
    /// An error met by a batch after it had users to return: raised next time.
    pending: Option<roomchat::Error>,
    /// The users a step fetched when a signal's handler (or a telemetry hook's
    /// `KeyboardInterrupt`, `SystemExit`) interrupted it: the next steps yield them
    /// first, so none is lost and none is fetched twice.
    held: VecDeque<roomchat::User>,
}

impl UsersState {
    /// The next user (`__next__`'s step), kept for the next step when the call was
    /// interrupted (see [`telemetry::interrupted`]).
    fn next(&mut self) -> Option<roomchat::Result<roomchat::User>> {
        let next = match self.held.pop_front() {
            Some(user) => Some(Ok(user)),
            None => match self.pending.take() {
                Some(e) => Some(Err(e)),
                None => self.users.next(),
            },
        };
        match next {
            Some(Ok(user)) if telemetry::interrupted() => {
                self.held.push_front(user);
                None
            }
            next => next,
        }
    }

    /// `_next_batch`'s step: [`UsersState::batch`], kept for the next step when the
    /// call was interrupted.
    fn step(
        &mut self,
        n: usize,
        cancel: Option<&CoreToken>,
    ) -> roomchat::Result<Vec<roomchat::User>> {
        let batch = self.batch(n, cancel)?;
        if !telemetry::interrupted() {
            return Ok(batch);
        }
        for user in batch.into_iter().rev() {
            self.held.push_front(user);
        }
        Ok(Vec::new())
    }

    /// Up to `n` users (empty at the end), a page fetched meanwhile cancelled by
    /// `cancel` when given (this step's token); an error after some users is kept for
    /// the next call, but for a cancel (the canceller knows of it already). Users an
    /// interrupted step kept come first, alone (before the error that followed them).
    fn batch(
        &mut self,
        n: usize,
        cancel: Option<&CoreToken>,
    ) -> roomchat::Result<Vec<roomchat::User>> {
        if !self.held.is_empty() {
            let k = self.held.len().min(n.max(1));
            return Ok(self.held.drain(..k).collect());
        }
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        let mut users = Vec::new();
        while users.len() < n.max(1) {
            let next = match cancel {
                Some(token) => self.users.next_with_cancel(token),
                None => self.users.next(),
            };
            match next {
                None => break,
                Some(Ok(user)) => users.push(user),
                Some(Err(e)) if users.is_empty() => return Err(e),
                Some(Err(e)) if e.kind() == roomchat::ErrorKind::Cancelled => break,
                Some(Err(e)) => {
                    self.pending = Some(e);
                    break;
                }
            }
        }
        Ok(users)
    }
}

/// Every user, fetched lazily page by page (`Client.users()`). An error never ends the
/// iteration: the step raises it, and the next step fetches the same page again.
///
/// The state is locked only with the GIL released, since a step holds the lock for a
/// whole page fetch and may need the GIL inside it (to log). In a child forked while
/// another thread was fetching a page, a step raises `RuntimeError` (see [`IterLock`]).
#[pyclass(frozen, module = "roomchat")]
pub struct UserIterator {
    state: Arc<IterLock<UsersState>>,
}

#[pymethods]
impl UserIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<User>> {
        logging::refresh(py);
        self.state.check_not_forked_mid_fetch()?;
        let state = self.state.clone();
        // A page fetched now belongs to the context `next()` is called in.
        // The iterator's client may carry the application's token: none of ours.
        let captured = Captured::now(py, crate::logging::current() != 0).without_token();
        // Interrupted: the exception is the caller's, the user fetched the next step's.
        let next = crate::exiting::detach(py, move || captured.run(|| state.lock().next()))
            .into_result()?;
        match next {
            None => Ok(None),
            Some(Ok(user)) => Ok(Some(User {
                inner: Arc::new(user),
            })),
            Some(Err(e)) => Err(to_py(py, &e)),
        }
    }

    /// Up to `n` users in one call (an empty list at the end): `n` at the page size
    /// fetches at most one page in the usual case. `AsyncClient` takes a page per hop,
    /// each with its own token: cancelling one step cancels no other.
    #[pyo3(signature = (n, *, _submit=None))]
    fn _next_batch(
        &self,
        py: Python<'_>,
        n: usize,
        _submit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        logging::refresh(py);
        self.state.check_not_forked_mid_fetch()?;
        let state = self.state.clone();
        run_or_submit(
            py,
            _submit,
            false,
            |token| move || state.lock().step(n, token.as_ref()),
            wrap_users,
        )
    }

    /// Does nothing: the next step after an error fetches the failed page again by
    /// itself. Kept for code written when an error ended the iteration.
    fn resume(&self) {}
}

/// The users listing page by page (`Client.user_pages()`). An error never ends the
/// iteration: the next step fetches the failed page again. Locked as `UserIterator` is.
#[pyclass(frozen, module = "roomchat")]
pub struct UserPageIterator {
    pages: Arc<IterLock<UserPagesState>>,
}

/// A `UserPageIterator`'s pages, and the page a step fetched when a signal's handler
/// (or a telemetry hook's `KeyboardInterrupt`, `SystemExit`) interrupted it: the next
/// step yields it, so none is lost and none is fetched twice.
struct UserPagesState {
    pages: roomchat::UserPages,
    held: Option<roomchat::UserPage>,
}

impl UserPagesState {
    fn next_page(
        &mut self,
        cancel: Option<&CoreToken>,
    ) -> roomchat::Result<Option<roomchat::UserPage>> {
        let page = match self.held.take() {
            Some(page) => Some(page),
            None => match cancel {
                Some(token) => self.pages.next_with_cancel(token),
                None => self.pages.next(),
            }
            .transpose()?,
        };
        Ok(self.keep_if_interrupted(page))
    }

    /// `page`, or None once kept for the next step when the call was interrupted.
    fn keep_if_interrupted(
        &mut self,
        page: Option<roomchat::UserPage>,
    ) -> Option<roomchat::UserPage> {
        match page {
            Some(page) if telemetry::interrupted() => {
                self.held = Some(page);
                None
            }
            page => page,
        }
    }
}

#[pymethods]
impl UserPageIterator {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        let page = self._next_page(py, None)?;
        Ok((!page.is_none(py)).then_some(page))
    }

    /// The next page, or `None` at the end; fetched with `_submit`'s token, if any, as
    /// this step's only.
    #[pyo3(signature = (*, _submit=None))]
    fn _next_page(
        &self,
        py: Python<'_>,
        _submit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        logging::refresh(py);
        self.pages.check_not_forked_mid_fetch()?;
        let pages = self.pages.clone();
        run_or_submit(
            py,
            _submit,
            false,
            |token| {
                // Interrupted: the exception is the caller's, the page the next step's.
                move || pages.lock().next_page(token.as_ref())
            },
            wrap_next_page,
        )
    }

    /// Does nothing, as `UserIterator.resume()`.
    fn resume(&self) {}
}
