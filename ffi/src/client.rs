//! Client options, the client handle, and what is not a declared operation: the
//! users iterator, the raw request, the rate-limit state, sign-in addresses.
//! The declared operations' functions are generated (generated.rs).

use std::ffi::c_char;
use std::ptr;
use std::sync::Arc;
use std::time::Duration;

use roomchat::instrument::Instrumentation;
use roomchat::{
    BudgetBackend, Client, ClientBuilder, Observer, OnRedisError, Proxy, RateLimitConfig, RawAuth,
    RawRequest, RedisBudget, TlsRoots,
};
use serde_json::Value;

use crate::answer::{respond, roomchat_response_meta, write_meta};
use crate::boundary::{
    borrow_arg, free_box, json_arg, mut_arg, opt_text_arg, out_arg, text_arg, write_out,
    write_string,
};
use crate::error::{
    enum_arg, enum_from_u32, guard, guard_value, roomchat_error, roomchat_result, Failure,
};
use crate::models::roomchat_users_iter;

// ---- options -----------------------------------------------------------------------------

/// Settings for a client, made by `roomchat_client_options_new` and freed
/// with `roomchat_client_options_free`. Setters only record; everything is
/// checked by `roomchat_client_new`. A setter given a bad value records the
/// error (and keeps the setting's previous value); a later valid call of the
/// same setter replaces it, so only the settings' last calls count.
/// Not thread-safe: configure it on one thread.
#[allow(non_camel_case_types)]
pub struct roomchat_client_options {
    builder: ClientBuilder,
    rate_limit: RateLimitConfig,
    /// Set by `roomchat_client_options_set_rate_limit_redis`; the other Redis setters adjust it.
    redis: Option<RedisBudget>,
    /// Set by `roomchat_client_options_set_ca_pem` (its last call counts).
    ca_pem: Option<String>,
    /// The failure of each setter whose last call was invalid, by setter, oldest first.
    errors: Vec<(&'static str, Failure)>,
    /// Set by `roomchat_client_options_set_log_callback[_with_destroy]` (the last call
    /// counts); shared with every client, view and iterator made from the options.
    log: Option<Arc<dyn Observer>>,
    /// Set by `roomchat_client_options_set_observer[_with_destroy]` (the last call
    /// counts); shared like `log`.
    instrumentation: Option<Arc<dyn Instrumentation>>,
}

impl roomchat_client_options {
    fn set(&mut self, change: impl FnOnce(ClientBuilder) -> ClientBuilder) {
        self.builder = change(self.builder.clone());
    }

    /// Sets (or, with `None`, clears) the observer the log callback makes.
    pub(crate) fn set_log(&mut self, log: Option<Arc<dyn Observer>>) {
        self.log = log;
    }

    /// Sets (or, with `None`, clears) the observer callback's instrumentation.
    pub(crate) fn set_instrumentation(
        &mut self,
        instrumentation: Option<Arc<dyn Instrumentation>>,
    ) {
        self.instrumentation = instrumentation;
    }

    /// Puts a header (checked) on every request.
    pub(crate) fn add_header(&mut self, name: &str, value: &str) {
        self.set(|b| b.header(name, value));
    }

    pub(crate) fn set_propagate_trace_context(&mut self, propagate: bool) {
        self.set(|b| b.propagate_trace_context(propagate));
    }

    /// Records a refused call of a setter that adds (each call its own
    /// setting): no later call clears it, so `roomchat_client_new` reports it.
    pub(crate) fn record_refused(&mut self, setter: &'static str, failure: Failure) {
        self.errors.push((setter, failure));
    }

    /// Records the outcome of the last call of `setter`: a success clears the
    /// failure an earlier call of it left.
    pub(crate) fn record(&mut self, setter: &'static str, outcome: Result<(), Failure>) {
        self.errors.retain(|(name, _)| *name != setter);
        if let Err(failure) = outcome {
            self.errors.push((setter, failure));
        }
    }
}

impl roomchat_client_options {
    /// Settings starting from `builder`, everything else at its default.
    fn starting_from(builder: ClientBuilder) -> roomchat_client_options {
        roomchat_client_options {
            builder,
            rate_limit: RateLimitConfig::default(),
            redis: None,
            ca_pem: None,
            errors: Vec::new(),
            log: None,
            instrumentation: None,
        }
    }
}

/// Starts client settings for `private_key` (copied). Writes a new options
/// object to `*options_out` (free with `roomchat_client_options_free`).
#[no_mangle]
pub extern "C" fn roomchat_client_options_new(
    private_key: *const c_char,
    options_out: *mut *mut roomchat_client_options,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    guard(err_out, || {
        out_arg(options_out, "options_out")?;
        let key = text_arg(private_key, "private_key")?;
        write_out(
            options_out,
            roomchat_client_options::starting_from(Client::builder(key)),
        );
        Ok(())
    })
}

/// Starts client settings from the environment, as every roomchat package
/// reads it: `ROOMCHAT_PRIVATE_KEY` and `ROOMCHAT_BASE_URL` (both required),
/// and `ROOMCHAT_CHAT_URL`, `ROOMCHAT_PUBLIC_KEY`, `ROOMCHAT_APP_NAME` when
/// set; an empty variable counts as unset. The values are copied now: a later
/// change of the environment does not reach these options. The setters apply
/// after them (`roomchat_client_options_set_base_url` replaces the variable's
/// URL). Writes a new options object to `*options_out` (free with
/// `roomchat_client_options_free`). Fails with `ROOMCHAT_RESULT_CONFIGURATION`,
/// writing nothing to `*options_out`, when a required variable is unset or a
/// variable is not UTF-8; a value that is set but wrong (a base URL that is not
/// a URL, plain `http://` to another host) makes `roomchat_client_new` fail
/// with `ROOMCHAT_RESULT_CONFIGURATION`, as any other setting would.
/// Reads the environment: do not call it while another thread changes it
/// (`setenv`, `putenv`).
#[no_mangle]
pub extern "C" fn roomchat_client_options_new_from_env(
    options_out: *mut *mut roomchat_client_options,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    guard(err_out, || {
        out_arg(options_out, "options_out")?;
        let builder = ClientBuilder::from_env()?;
        write_out(options_out, roomchat_client_options::starting_from(builder));
        Ok(())
    })
}

/// Frees client settings. `roomchat_client_options_free(NULL)` does nothing.
/// When they held the last hold of their log callback (or observer), its destroy
/// notifier runs now, on this thread (see
/// `roomchat_client_options_set_log_callback_with_destroy`,
/// `roomchat_client_options_set_observer_with_destroy`).
#[no_mangle]
pub extern "C" fn roomchat_client_options_free(options: *mut roomchat_client_options) {
    free_box(options)
}

/// Records a string setting; a bad string is reported by `roomchat_client_new`.
fn set_text(
    options: *mut roomchat_client_options,
    value: *const c_char,
    name: &'static str,
    apply: impl FnOnce(ClientBuilder, String) -> ClientBuilder,
) -> roomchat_result {
    guard(ptr::null_mut(), || {
        let options = mut_arg(options, "options")?;
        let outcome = text_arg(value, name).map(|v| options.set(|b| apply(b, v.to_owned())));
        options.record(name, outcome);
        Ok(())
    })
}

/// Sets the REST base URL (copied), e.g. `https://api.example.com`. Required.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_base_url(
    options: *mut roomchat_client_options,
    url: *const c_char,
) -> roomchat_result {
    set_text(options, url, "base_url", ClientBuilder::base_url)
}

/// Sets the public key (copied): it authenticates `roomchat_client_validate_access_token`
/// and `ROOMCHAT_RAW_AUTH_PUBLIC_KEY` requests (without it they fail with
/// `ROOMCHAT_RESULT_CONFIGURATION` and nothing is sent).
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_public_key(
    options: *mut roomchat_client_options,
    key: *const c_char,
) -> roomchat_result {
    set_text(options, key, "public_key", ClientBuilder::public_key)
}

/// Sets the address rooms are served at to browsers (copied), for the sign-in URL.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_chat_url(
    options: *mut roomchat_client_options,
    url: *const c_char,
) -> roomchat_result {
    set_text(options, url, "chat_url", ClientBuilder::chat_url)
}

/// Sets an application name (copied) appended to the User-Agent.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_app_name(
    options: *mut roomchat_client_options,
    name: *const c_char,
) -> roomchat_result {
    set_text(options, name, "app_name", ClientBuilder::app_name)
}

fn set_value(
    options: *mut roomchat_client_options,
    apply: impl FnOnce(&mut roomchat_client_options),
) -> roomchat_result {
    guard(ptr::null_mut(), || {
        apply(mut_arg(options, "options")?);
        Ok(())
    })
}

/// Sets the connect timeout and the overall timeout of one attempt, in milliseconds
/// (0 keeps the default: 10 000 and 30 000). Any value is safe to pass: one above
/// 10^12 ms (`roomchat::MAX_DURATION`, 10^9 s) makes `roomchat_client_new` fail
/// with `ROOMCHAT_RESULT_CONFIGURATION`.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_timeouts(
    options: *mut roomchat_client_options,
    connect_ms: u64,
    overall_ms: u64,
) -> roomchat_result {
    set_value(options, |o| {
        if connect_ms > 0 {
            o.set(|b| b.connect_timeout(Duration::from_millis(connect_ms)));
        }
        if overall_ms > 0 {
            o.set(|b| b.timeout(Duration::from_millis(overall_ms)));
        }
    })
}

/// Sets the number of retries after the first attempt (default 2) and whether
/// POST may be retried after a 5xx or timeout (default false: it could create twice).
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_retries(
    options: *mut roomchat_client_options,
    max_retries: u32,
    retry_non_idempotent: bool,
) -> roomchat_result {
    set_value(options, |o| {
        o.set(|b| {
            b.max_retries(max_retries)
                .retry_non_idempotent(retry_non_idempotent)
        })
    })
}

/// Sets the client-side rate limit of the key: `requests` per `window_ms`
/// (default 600 per 60 000), and whether a call fails at once (`fail_fast`)
/// or waits up to `max_wait_ms` for a slot when the budget is spent. The
/// longest a slot can take to free is the window plus its jitter allowance
/// (`window_ms / 20`, at most 1000): a `max_wait_ms` of at least that and a
/// second (for contention and the round trip to Redis) never fails a call that
/// waiting would let through (the default, without this call, waits 62 000
/// ms; `roomchat_rate_limit_default_max_wait_ms(window_ms)` is the default
/// for another window). A window or wait above 10^12 ms (10^9 s), or 0 requests or a 0 window,
/// makes `roomchat_client_new` fail with `ROOMCHAT_RESULT_CONFIGURATION`.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_rate_limit(
    options: *mut roomchat_client_options,
    requests: u32,
    window_ms: u64,
    fail_fast: bool,
    max_wait_ms: u64,
) -> roomchat_result {
    set_value(options, |o| {
        let mut config = RateLimitConfig::new(requests, Duration::from_millis(window_ms));
        config.when_limited = if fail_fast {
            roomchat::WhenLimited::Fail
        } else {
            roomchat::WhenLimited::Wait(Duration::from_millis(max_wait_ms))
        };
        o.rate_limit = config;
    })
}

/// The longest a call waits for a slot of a budget whose window is
/// `window_ms` unless `roomchat_client_options_set_rate_limit` says otherwise:
/// the window, its jitter allowance (`window_ms / 20`, at most 1000) and a
/// second, and at least 60 000 (62 000 for the default 60 000 window); at most
/// 10^12 (10^9 s). Every roomchat package waits this long by default: a
/// binding that lets its caller leave the wait unset passes this as
/// `max_wait_ms`. Any value is safe to pass.
#[no_mangle]
pub extern "C" fn roomchat_rate_limit_default_max_wait_ms(window_ms: u64) -> u64 {
    guard_value(0, || {
        let wait = RateLimitConfig::default_max_wait(Duration::from_millis(window_ms));
        u64::try_from(wait.as_millis()).unwrap_or(u64::MAX)
    })
}

/// Also trusts the certificates in `pem` (copied; one or more
/// `-----BEGIN CERTIFICATE-----` blocks) for `https://`, beside the roots of
/// `roomchat_client_options_set_tls_roots`: a private CA, or a TLS-inspecting
/// gateway's. A later call replaces the earlier PEM. PEM without a certificate
/// makes `roomchat_client_new` fail with `ROOMCHAT_RESULT_CONFIGURATION`. The
/// file named by the `SSL_CERT_FILE` environment variable is trusted as well.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_ca_pem(
    options: *mut roomchat_client_options,
    pem: *const c_char,
) -> roomchat_result {
    guard(ptr::null_mut(), || {
        let options = mut_arg(options, "options")?;
        let outcome = text_arg(pem, "pem").map(|pem| options.ca_pem = Some(pem.to_owned()));
        options.record("ca_pem", outcome);
        Ok(())
    })
}

/// Whether to ask for gzip-compressed answers and decompress them (default true,
/// as curl's `--compressed` and browsers do). The response cap applies to the
/// decompressed body.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_gzip(
    options: *mut roomchat_client_options,
    enabled: bool,
) -> roomchat_result {
    set_value(options, |o| o.set(|b| b.gzip(enabled)))
}

/// The roots an `https://` client trusts (see `roomchat_client_options_set_tls_roots`).
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum roomchat_tls_roots {
    /// Mozilla's roots, bundled with the library (default): the same on every machine.
    Webpki = 0,
    /// The operating system's trust store, read when the client is made.
    System = 1,
}
enum_from_u32!(roomchat_tls_roots { Webpki, System });

/// Sets the roots an `https://` client trusts: `roots` is a `roomchat_tls_roots`
/// value (another value is reported by `roomchat_client_new` as
/// `ROOMCHAT_RESULT_INVALID_ARGUMENT`).
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_tls_roots(
    options: *mut roomchat_client_options,
    roots: u32,
) -> roomchat_result {
    guard(ptr::null_mut(), || {
        let options = mut_arg(options, "options")?;
        let outcome = enum_arg(
            roots,
            "roots",
            "roomchat_tls_roots",
            roomchat_tls_roots::from_u32,
        )
        .map(|roots| {
            let roots = match roots {
                roomchat_tls_roots::Webpki => TlsRoots::WebPki,
                roomchat_tls_roots::System => TlsRoots::System,
            };
            options.set(|b| b.tls_roots(roots));
        });
        options.record("tls_roots", outcome);
        Ok(())
    })
}

/// Sets the proxy (copied): `http://[user:password@]host[:port]` or `https://…`;
/// `https://` base URLs are tunnelled with CONNECT. NULL means no proxy, whatever
/// the environment says. Never called, the environment is read as curl and
/// requests read it (`https_proxy`/`HTTPS_PROXY` for https, `http_proxy`/`HTTP_PROXY`
/// for plain http, then `all_proxy`/`ALL_PROXY`, lower case first;
/// `no_proxy`/`NO_PROXY`). Loopback is never proxied, and plain http only with
/// `roomchat_client_options_set_allow_insecure_http`. The user information is a
/// secret: no error or output shows it. A proxy the library cannot use (SOCKS, a
/// bad URL) makes `roomchat_client_new` fail with `ROOMCHAT_RESULT_CONFIGURATION`.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_proxy(
    options: *mut roomchat_client_options,
    url: *const c_char,
) -> roomchat_result {
    guard(ptr::null_mut(), || {
        let options = mut_arg(options, "options")?;
        let outcome = opt_text_arg(url, "url").map(|url| {
            let proxy = url.map_or(Proxy::None, Proxy::url);
            options.set(|b| b.proxy(proxy));
        });
        options.record("proxy", outcome);
        Ok(())
    })
}

/// What the client does while the shared budget in Redis cannot be reached
/// (see `roomchat_client_options_set_redis_policy`).
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum roomchat_redis_policy {
    /// Count in this process alone, at the limit divided by the expected processes (default).
    LocalFallback = 0,
    /// Refuse to send: calls fail with `ROOMCHAT_RESULT_BUDGET_UNAVAILABLE`.
    FailClosed = 1,
    /// Send without counting.
    FailOpen = 2,
}
enum_from_u32!(roomchat_redis_policy {
    LocalFallback,
    FailClosed,
    FailOpen
});

/// Shares the key's rate budget with every process and host through the Redis
/// deployment at `url` (copied): one server (`redis://[[user]:password@]host[:port][/db]`,
/// `rediss://` for TLS, or `redis+unix:///path[?pass=password]` for a unix
/// socket), a Redis Cluster (`redis+cluster://[[user]:password@]host:port[,host:port…]`,
/// `rediss+cluster://`) or the primary that sentinels name
/// (`redis+sentinel://[[user]:password@]host[:port][,…]/service[/db][?sentinel_password=…]`,
/// `rediss+sentinel://`), with the limits of `roomchat_client_options_set_rate_limit`. The
/// password is never shown in any error or log line, in any of its forms. Call it
/// before the other Redis setters: each call starts the Redis settings afresh.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_rate_limit_redis(
    options: *mut roomchat_client_options,
    url: *const c_char,
) -> roomchat_result {
    guard(ptr::null_mut(), || {
        let options = mut_arg(options, "options")?;
        let outcome =
            text_arg(url, "redis url").map(|url| options.redis = Some(RedisBudget::new(url)));
        options.record("redis url", outcome);
        Ok(())
    })
}

/// Applies `change` to the Redis settings as the call of `setter`; without a
/// Redis URL set first, or when `change` fails, the settings stay as they were
/// and the error is reported by `roomchat_client_new`.
fn set_redis(
    options: *mut roomchat_client_options,
    setter: &'static str,
    change: impl FnOnce(RedisBudget) -> Result<RedisBudget, Failure>,
) -> roomchat_result {
    guard(ptr::null_mut(), || {
        let options = mut_arg(options, "options")?;
        let outcome = match &options.redis {
            Some(redis) => change(redis.clone()).map(|redis| options.redis = Some(redis)),
            None => Err(Failure::invalid(format!(
                "{setter}: set the Redis URL (roomchat_client_options_set_rate_limit_redis) before the other Redis settings"
            ))),
        };
        options.record(setter, outcome);
        Ok(())
    })
}

/// Sets what the client does while Redis cannot be reached: `policy` is a
/// `roomchat_redis_policy` value (another value is reported by
/// `roomchat_client_new` as `ROOMCHAT_RESULT_INVALID_ARGUMENT`), and
/// `expected_processes` (0 keeps the default, 4) divides the limit for
/// `ROOMCHAT_REDIS_POLICY_LOCAL_FALLBACK`.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_redis_policy(
    options: *mut roomchat_client_options,
    policy: u32,
    expected_processes: u32,
) -> roomchat_result {
    set_redis(options, "redis policy", |redis| {
        let policy = match enum_arg(
            policy,
            "policy",
            "roomchat_redis_policy",
            roomchat_redis_policy::from_u32,
        )? {
            roomchat_redis_policy::LocalFallback => OnRedisError::LocalFallback,
            roomchat_redis_policy::FailClosed => OnRedisError::FailClosed,
            roomchat_redis_policy::FailOpen => OnRedisError::FailOpen,
        };
        let redis = redis.on_error(policy);
        Ok(if expected_processes > 0 {
            redis.expected_processes(expected_processes)
        } else {
            redis
        })
    })
}

/// Sets the Redis connect timeout, the read/write timeout of each round trip,
/// and how long Redis is left alone after a failure, in milliseconds (0 keeps
/// a default: 500, 500 and 5 000). One above 10^12 ms (10^9 s) makes
/// `roomchat_client_new` fail with `ROOMCHAT_RESULT_CONFIGURATION`.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_redis_timeouts(
    options: *mut roomchat_client_options,
    connect_ms: u64,
    io_ms: u64,
    breaker_cooldown_ms: u64,
) -> roomchat_result {
    set_redis(options, "redis timeouts", |mut redis| {
        if connect_ms > 0 {
            redis = redis.connect_timeout(Duration::from_millis(connect_ms));
        }
        if io_ms > 0 {
            redis = redis.io_timeout(Duration::from_millis(io_ms));
        }
        if breaker_cooldown_ms > 0 {
            redis = redis.breaker_cooldown(Duration::from_millis(breaker_cooldown_ms));
        }
        Ok(redis)
    })
}

/// Sets the prefix of the budget's Redis keys (copied; default `roomchat`).
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_redis_key_prefix(
    options: *mut roomchat_client_options,
    prefix: *const c_char,
) -> roomchat_result {
    set_redis(options, "redis key prefix", |redis| {
        Ok(redis.key_prefix(text_arg(prefix, "prefix")?.to_owned()))
    })
}

/// Sets the largest response body accepted, in bytes (default 16 MiB);
/// `UINT64_MAX` means no cap.
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_max_response_bytes(
    options: *mut roomchat_client_options,
    bytes: u64,
) -> roomchat_result {
    set_value(options, |o| o.set(|b| b.max_response_bytes(bytes)))
}

/// Allows sending the key over plain `http://` to a host that is not loopback (default false).
#[no_mangle]
pub extern "C" fn roomchat_client_options_set_allow_insecure_http(
    options: *mut roomchat_client_options,
    allow: bool,
) -> roomchat_result {
    set_value(options, |o| o.set(|b| b.allow_insecure_http(allow)))
}

// ---- the client ------------------------------------------------------------------------------

/// A client of the chat service. Made by `roomchat_client_new`, freed with
/// `roomchat_client_free`. **Thread-safe**: one client may be used by many
/// threads at once; it shares one connection pool, and every client of the same
/// private key in the process shares one rate-limit budget.
#[allow(non_camel_case_types)]
pub struct roomchat_client {
    pub(crate) client: Client,
}

/// Builds a client from `options` (which stay owned by the caller and may be
/// freed right after). Writes it to `*client_out` (free with `roomchat_client_free`).
/// Fails with `ROOMCHAT_RESULT_CONFIGURATION` on bad settings.
#[no_mangle]
pub extern "C" fn roomchat_client_new(
    options: *const roomchat_client_options,
    client_out: *mut *mut roomchat_client,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    guard(err_out, || {
        out_arg(client_out, "client_out")?;
        let options = borrow_arg(options, "options")?;
        if let Some((_, failure)) = options.errors.first() {
            return Err(Failure::invalid(format!(
                "an option was invalid: {}",
                crate::error::failure_text(failure)
            )));
        }
        let mut builder = options.builder.clone().rate_limit(options.rate_limit);
        if let Some(redis) = &options.redis {
            builder = builder.redis_budget(redis.clone());
        }
        if let Some(pem) = &options.ca_pem {
            builder = builder.add_root_certificates_pem(pem);
        }
        if let Some(log) = &options.log {
            builder = builder.observer(Arc::clone(log));
        }
        if let Some(instrumentation) = &options.instrumentation {
            builder = builder.instrumentation(Arc::clone(instrumentation));
        }
        let client = builder
            .sdk_identity(concat!("roomchat-c/", env!("CARGO_PKG_VERSION")), None)
            .build()?;
        write_out(client_out, roomchat_client { client });
        Ok(())
    })
}

/// Frees a client (or a view). `roomchat_client_free(NULL)` does nothing. No call on it
/// may be running. When it held the last hold of its log callback (or observer), the
/// callback's destroy notifier runs now, on this thread (see
/// `roomchat_client_options_set_log_callback_with_destroy`,
/// `roomchat_client_options_set_observer_with_destroy`).
#[no_mangle]
pub extern "C" fn roomchat_client_free(client: *mut roomchat_client) {
    free_box(client)
}

/// Starts a lazy iteration over every user, `page_size` (1 to 200; 0 = 200) at a time.
/// Writes the iterator to `*iter_out` (free with `roomchat_users_iter_free`); it keeps
/// its own reference to the client.
#[no_mangle]
pub extern "C" fn roomchat_client_users_iter(
    client: *const roomchat_client,
    page_size: u32,
    iter_out: *mut *mut roomchat_users_iter,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    guard(err_out, || {
        out_arg(iter_out, "iter_out")?;
        let client = borrow_arg(client, "client")?;
        let size = if page_size == 0 {
            roomchat::MAX_PAGE_SIZE
        } else {
            page_size
        };
        write_out(
            iter_out,
            roomchat_users_iter {
                users: client.client.users_with_page_size(size),
            },
        );
        Ok(())
    })
}

/// Which key authenticates a raw request.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum roomchat_raw_auth {
    /// The private key as `auth`.
    PrivateKey = 0,
    /// The public key as `publicKey`.
    PublicKey = 1,
    /// No key.
    None = 2,
}
enum_from_u32!(roomchat_raw_auth {
    PrivateKey,
    PublicKey,
    None
});

/// A request to an operation without a documented shape, through the same
/// limits, retries and error decoding. `query_json` (NULL for none) is a JSON
/// array of `["name", "value"]` pairs; `body_json` (NULL for none) is the JSON
/// body. `auth` is a `roomchat_raw_auth` value; another number gives
/// `ROOMCHAT_RESULT_INVALID_ARGUMENT` and nothing is sent. On a 2xx, writes the
/// status to `*status_out` and the body's JSON text to `*body_out` (free with
/// `roomchat_string_free`; `null` for an empty body).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn roomchat_client_raw_request(
    client: *const roomchat_client,
    method: *const c_char,
    path: *const c_char,
    query_json: *const c_char,
    body_json: *const c_char,
    auth: u32,
    status_out: *mut u16,
    body_out: *mut *mut c_char,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    roomchat_client_raw_request_with_response(
        client,
        method,
        path,
        query_json,
        body_json,
        auth,
        status_out,
        body_out,
        ptr::null_mut(),
        err_out,
    )
}

/// `roomchat_client_raw_request` with the answer, every header included (see
/// `roomchat_client_list_users_with_response`).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn roomchat_client_raw_request_with_response(
    client: *const roomchat_client,
    method: *const c_char,
    path: *const c_char,
    query_json: *const c_char,
    body_json: *const c_char,
    auth: u32,
    status_out: *mut u16,
    body_out: *mut *mut c_char,
    meta_out: *mut *mut roomchat_response_meta,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    guard(err_out, || {
        out_arg(body_out, "body_out")?;
        if status_out.is_null() {
            return Err(Failure::invalid("status_out is NULL"));
        }
        let client = borrow_arg(client, "client")?;
        let auth = enum_arg(
            auth,
            "auth",
            "roomchat_raw_auth",
            roomchat_raw_auth::from_u32,
        )?;
        let mut request = RawRequest::new(text_arg(method, "method")?, text_arg(path, "path")?);
        request.auth = match auth {
            roomchat_raw_auth::PrivateKey => RawAuth::PrivateKey,
            roomchat_raw_auth::PublicKey => RawAuth::PublicKey,
            roomchat_raw_auth::None => RawAuth::None,
        };
        if let Some(query) = json_arg(query_json, "query_json")? {
            let pairs = query
                .as_array()
                .ok_or_else(|| Failure::invalid("query_json must be an array of pairs"))?;
            for pair in pairs {
                match pair.as_array().map(Vec::as_slice) {
                    Some([Value::String(n), Value::String(v)]) => {
                        request.query.push((n.clone(), v.clone()))
                    }
                    _ => {
                        return Err(Failure::invalid(
                            "query_json must be an array of [\"name\", \"value\"] pairs",
                        ))
                    }
                }
            }
        }
        request.body = json_arg(body_json, "body_json")?;
        let (response, meta) = respond(&client.client, meta_out, |c| c.raw_request(&request))?;
        // SAFETY: checked non-NULL above.
        unsafe { *status_out = response.status };
        write_string(body_out, response.body.to_string());
        write_meta(meta_out, meta);
        Ok(())
    })
}

/// Where a key's shared rate-limit budget stands.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct roomchat_rate_limit_state {
    /// Requests the client allows itself per window.
    pub limit: u32,
    /// Requests started within the current window.
    pub used: u32,
    /// Requests that may start now.
    pub remaining: u32,
    /// The window the client counts in, in milliseconds.
    pub window_ms: u64,
    /// Milliseconds until the next request may start (0: now).
    pub next_free_in_ms: u64,
    /// Milliseconds every caller is still held off after a 429, or -1 when not held off.
    pub blocked_for_ms: i64,
    /// Where the budget is counted.
    pub backend: roomchat_budget_backend,
    /// Redis is the backend but cannot be reached: the figures are the fallback's.
    pub degraded: bool,
}

/// Where a key's budget is counted.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum roomchat_budget_backend {
    /// In this process (the default).
    #[default]
    Local = 0,
    /// In Redis, shared by every process and host of the key.
    Redis = 1,
}

/// Writes the client's rate-limit state to `*state_out` (a caller-owned struct).
#[no_mangle]
pub extern "C" fn roomchat_client_rate_limit_state(
    client: *const roomchat_client,
    state_out: *mut roomchat_rate_limit_state,
) -> roomchat_result {
    guard(ptr::null_mut(), || {
        let client = borrow_arg(client, "client")?;
        if state_out.is_null() {
            return Err(Failure::invalid("state_out is NULL"));
        }
        let s = client.client.rate_limit_state();
        let ms = |d: Duration| d.as_millis().min(u64::MAX as u128) as u64;
        let state = roomchat_rate_limit_state {
            limit: s.limit,
            used: s.used,
            remaining: s.remaining,
            window_ms: ms(s.window),
            next_free_in_ms: ms(s.next_free_in),
            blocked_for_ms: s
                .blocked_for
                .map_or(-1, |d| ms(d).min(i64::MAX as u64) as i64),
            backend: match s.backend {
                BudgetBackend::Redis => roomchat_budget_backend::Redis,
                _ => roomchat_budget_backend::Local,
            },
            degraded: s.degraded,
        };
        // SAFETY: checked non-NULL.
        unsafe { *state_out = state };
        Ok(())
    })
}

/// Writes the base URL the client sends to, as `roomchat_client_new` checked it
/// (a trailing `/` dropped), to `*url_out` (free with `roomchat_string_free`):
/// what a client made by `roomchat_client_options_new_from_env` read from
/// `ROOMCHAT_BASE_URL`, for one. The same for a view of the client.
#[no_mangle]
pub extern "C" fn roomchat_client_base_url(
    client: *const roomchat_client,
    url_out: *mut *mut c_char,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    guard(err_out, || {
        out_arg(url_out, "url_out")?;
        let client = borrow_arg(client, "client")?;
        write_string(url_out, client.client.base_url().to_owned());
        Ok(())
    })
}

/// The server the client's calls go to, as every span, metric and observation
/// names it: writes the base URL's host (lowercased, an IPv6 address without
/// its brackets: `server.address`) to `*address_out` (free with
/// `roomchat_string_free`) and its port, or its scheme's (`server.port`), to
/// `*port_out`. For a binding that counts a call in flight
/// (`roomchat.client.active_calls`) from its dispatch, before any report of it.
#[no_mangle]
pub extern "C" fn roomchat_client_server(
    client: *const roomchat_client,
    address_out: *mut *mut c_char,
    port_out: *mut u16,
) -> roomchat_result {
    guard(ptr::null_mut(), || {
        out_arg(address_out, "address_out")?;
        if port_out.is_null() {
            return Err(Failure::invalid("port_out is NULL"));
        }
        let client = borrow_arg(client, "client")?;
        write_string(address_out, client.client.server_address().to_owned());
        // SAFETY: checked non-NULL.
        unsafe { *port_out = client.client.server_port() };
        Ok(())
    })
}

/// The browser address that signs the holder of `access_token` in to `room_id`
/// (needs the chat URL option). Writes it to `*url_out` (free with `roomchat_string_free`).
#[no_mangle]
pub extern "C" fn roomchat_client_sign_in_url(
    client: *const roomchat_client,
    room_id: *const c_char,
    access_token: *const c_char,
    url_out: *mut *mut c_char,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    guard(err_out, || {
        out_arg(url_out, "url_out")?;
        let client = borrow_arg(client, "client")?;
        let url = client.client.sign_in_url(
            text_arg(room_id, "room_id")?,
            text_arg(access_token, "access_token")?,
        )?;
        write_string(url_out, url);
        Ok(())
    })
}

/// An `<iframe>` element for the sign-in address, with `width` and `height`
/// (e.g. "100%", "600"), HTML-escaped. Writes it to `*html_out` (free with `roomchat_string_free`).
#[no_mangle]
pub extern "C" fn roomchat_client_iframe_html(
    client: *const roomchat_client,
    room_id: *const c_char,
    access_token: *const c_char,
    width: *const c_char,
    height: *const c_char,
    html_out: *mut *mut c_char,
    err_out: *mut *mut roomchat_error,
) -> roomchat_result {
    guard(err_out, || {
        out_arg(html_out, "html_out")?;
        let client = borrow_arg(client, "client")?;
        let html = client.client.iframe_html(
            text_arg(room_id, "room_id")?,
            text_arg(access_token, "access_token")?,
            text_arg(width, "width")?,
            text_arg(height, "height")?,
        )?;
        write_string(html_out, html);
        Ok(())
    })
}

/// Frees a string this library returned through a `char **` out-parameter.
/// `roomchat_string_free(NULL)` does nothing.
#[no_mangle]
pub extern "C" fn roomchat_string_free(text: *mut c_char) {
    guard_value((), || {
        if !text.is_null() {
            // SAFETY: made by `CString::into_raw` in this library and freed once (documented).
            drop(unsafe { std::ffi::CString::from_raw(text) });
        }
    })
}

/// The library's version, e.g. "0.1.0": static, never freed.
#[no_mangle]
pub extern "C" fn roomchat_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}
