//! The client: configuration, the keep-alive transport, retries and the endpoints.

use std::fmt;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

use crate::budget::ratelimit::{Budget, RateLimitConfig, RateLimitState};
use crate::budget::{Budgets, UnexplainedHolds};
use crate::cancel::{self, CancelToken};
use crate::error::{Error, ErrorKind, Result};
use crate::send::instrument::{self, CallScope, Instrumentation, RequestHeaders};
use crate::send::observe::{Event, EventKind, Observer};
use crate::send::observed::{ClientFacts, Observation};
use crate::send::options::CallOptions;
use crate::send::response::{Capture, ResponseMeta, WithResponse};
use crate::time::{check_duration, instant_after};
use crate::transport::connect::{self, CachingResolver};
use crate::transport::fork::ForkLocal;
use crate::transport::proxy::{is_loopback, Proxy};
use crate::transport::tls::TlsRoots;
use crate::wire::models::{ListUsers, RawAuth, RawRequest, RawResponse};
use crate::wire::view::UserPageView;
use crate::wire::{self, WireRequest, WireResponse};

/// Default connect timeout: 10 s.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default overall timeout of one attempt (connect, send, wait, read): 30 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default number of retries after the first attempt: 2.
pub const DEFAULT_MAX_RETRIES: u32 = 2;
/// Default cap on a response body: 16 MiB.
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 16 * 1024 * 1024;
/// Default longest wait the client sleeps before a retry (`Retry-After` beyond it is returned as an error): 60 s.
pub const DEFAULT_MAX_RETRY_WAIT: Duration = Duration::from_secs(60);
/// Configures a [`Client`]. Made by [`Client::builder`].
#[derive(Clone)]
pub struct ClientBuilder {
    private_key: String,
    public_key: Option<String>,
    base_url: Option<String>,
    chat_url: Option<String>,
    connect_timeout: Duration,
    timeout: Duration,
    max_retries: u32,
    retry_non_idempotent: bool,
    base_backoff: Duration,
    max_retry_wait: Duration,
    rate_limit: RateLimitConfig,
    app_name: Option<String>,
    max_response_bytes: u64,
    allow_insecure_http: bool,
    proxy: Proxy,
    tls_roots: TlsRoots,
    /// Whether `SSL_CERT_FILE` adds roots ([`ClientBuilder::read_ssl_cert_file`]).
    read_ssl_cert_file: bool,
    gzip: bool,
    /// PEM added with `add_root_certificates_pem`, parsed when the client is built.
    root_pems: Vec<Vec<u8>>,
    /// Environment variables naming PEM files of roots to add (read only for TLS).
    roots_from_env: Vec<String>,
    observer: Option<Arc<dyn Observer>>,
    /// Asked for each call's observer ([`ClientBuilder::instrumentation`]).
    instrumentations: Vec<Arc<dyn Instrumentation>>,
    /// On every request ([`ClientBuilder::header`], [`ClientBuilder::headers`]).
    headers: RequestHeaders,
    /// The first header [`ClientBuilder::header`] refused, reported by `build`.
    header_error: Option<Error>,
    /// Whether `traceparent`, `tracestate` and `baggage` may leave the client.
    propagate_trace_context: bool,
    /// The spans and metrics of the feature `opentelemetry` (`None`: off).
    #[cfg(feature = "opentelemetry")]
    opentelemetry: Option<crate::send::otel::OpenTelemetry>,
    /// The product and runtime the `User-Agent` names ([`ClientBuilder::sdk_identity`]).
    sdk: Option<(String, Option<String>)>,
    #[cfg(feature = "redis")]
    redis_budget: Option<crate::budget::shared_budget::RedisBudget>,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("private_key", &"REDACTED")
            .field("base_url", &self.base_url)
            .field("chat_url", &self.chat_url)
            .field("proxy", &self.proxy)
            .finish_non_exhaustive()
    }
}

/// The environment variables [`ClientBuilder::from_env`] reads.
pub const ENV_PRIVATE_KEY: &str = "ROOMCHAT_PRIVATE_KEY";
/// See [`ENV_PRIVATE_KEY`].
pub const ENV_BASE_URL: &str = "ROOMCHAT_BASE_URL";
/// See [`ENV_PRIVATE_KEY`].
pub const ENV_CHAT_URL: &str = "ROOMCHAT_CHAT_URL";
/// See [`ENV_PRIVATE_KEY`].
pub const ENV_PUBLIC_KEY: &str = "ROOMCHAT_PUBLIC_KEY";
/// See [`ENV_PRIVATE_KEY`].
pub const ENV_APP_NAME: &str = "ROOMCHAT_APP_NAME";

impl ClientBuilder {
    /// A builder from the environment: `ROOMCHAT_PRIVATE_KEY` and
    /// `ROOMCHAT_BASE_URL` (both required), and `ROOMCHAT_CHAT_URL`,
    /// `ROOMCHAT_PUBLIC_KEY`, `ROOMCHAT_APP_NAME` when set. An empty variable
    /// counts as unset. Other settings can be changed on the builder afterwards.
    ///
    /// ```no_run
    /// let client = roomchat::ClientBuilder::from_env()?.max_retries(5).build()?;
    /// # Ok::<(), roomchat::Error>(())
    /// ```
    pub fn from_env() -> Result<ClientBuilder> {
        let var = |name: &str| -> Result<Option<String>> {
            match std::env::var(name) {
                Ok(v) if v.is_empty() => Ok(None),
                Ok(v) => Ok(Some(v)),
                Err(std::env::VarError::NotPresent) => Ok(None),
                Err(std::env::VarError::NotUnicode(_)) => Err(Error::configuration(format!(
                    "the environment variable {name} is not valid UTF-8"
                ))),
            }
        };
        let required = |name: &str| {
            var(name)?.ok_or_else(|| {
                Error::configuration(format!("the environment variable {name} is not set"))
            })
        };
        let mut builder =
            Client::builder(required(ENV_PRIVATE_KEY)?).base_url(required(ENV_BASE_URL)?);
        if let Some(url) = var(ENV_CHAT_URL)? {
            builder = builder.chat_url(url);
        }
        if let Some(key) = var(ENV_PUBLIC_KEY)? {
            builder = builder.public_key(key);
        }
        if let Some(app) = var(ENV_APP_NAME)? {
            builder = builder.app_name(app);
        }
        Ok(builder)
    }

    /// Shares the key's rate budget with every process and host through Redis
    /// (see [`RedisBudget`](crate::RedisBudget)), instead of this process alone.
    /// The limits are still those of [`ClientBuilder::rate_limit`].
    #[cfg(feature = "redis")]
    pub fn redis_budget(mut self, budget: crate::budget::shared_budget::RedisBudget) -> Self {
        self.redis_budget = Some(budget);
        self
    }

    /// Whether the client's budget is kept in a Redis reached over TLS.
    fn budget_over_tls(&self) -> bool {
        #[cfg(feature = "redis")]
        if let Some(shared) = &self.redis_budget {
            return shared.over_tls();
        }
        false
    }

    /// The budget this client counts in; a `rediss://` one trusts `roots`, as the client does.
    fn budget_for(
        &self,
        key: &str,
        #[allow(unused_variables)] roots: &ureq::tls::RootCerts,
    ) -> Result<Budgets> {
        #[cfg(feature = "redis")]
        if let Some(shared) = &self.redis_budget {
            return Ok(Budgets::Shared(
                crate::budget::shared_budget::SharedBudget::for_key(
                    key,
                    self.rate_limit,
                    shared,
                    roots,
                )?,
            ));
        }
        Ok(Budgets::Local(Budget::for_key(key, self.rate_limit)))
    }

    /// Receives an event for every attempt, retry and rate-limit wait (see [`Observer`]).
    pub fn observer(mut self, observer: Arc<dyn Observer>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Asks `instrumentation`, at the start of each call of this client (and
    /// of its views), on the calling thread, for an observer of that call: its
    /// attempts, waits and end, with the headers it adds to each attempt (see
    /// [`instrument`](crate::instrument)). Several may be given: each is
    /// asked, in the order given. The C library's observer callback is one.
    pub fn instrumentation(mut self, instrumentation: Arc<dyn Instrumentation>) -> Self {
        self.instrumentations.push(instrumentation);
        self
    }

    /// Puts the header `name: value` on every request of the client (and of
    /// its views): the C and C++ way to send trace context, or anything an
    /// application's gateway wants to see. A scope's or an observer's header
    /// of the same name wins for its calls. [`build`](Self::build) fails with
    /// [`ErrorKind::Configuration`] on a name or value
    /// [`RequestHeaders::insert`] refuses (CR or LF, a reserved name such as
    /// `Host`, `Content-Length` or `Authorization`).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        if let Err(e) = self.headers.insert(name, value) {
            self.header_error
                .get_or_insert(Error::configuration(e.message()));
        }
        self
    }

    /// Puts `headers` on every request of the client, over those set before
    /// (see [`header`](Self::header)).
    pub fn headers(mut self, headers: RequestHeaders) -> Self {
        for (name, value) in headers.iter() {
            // Checked when they were inserted.
            let _ = self.headers.insert(name, value);
        }
        self
    }

    /// Whether trace context leaves the client (default `true`). With `false`,
    /// no request carries `traceparent`, `tracestate` or `baggage`, whoever
    /// added it (an instrumentation, a scope or [`header`](Self::header)): for
    /// teams that send no trace ids to a third party. Spans and metrics are
    /// made as before.
    pub fn propagate_trace_context(mut self, yes: bool) -> Self {
        self.propagate_trace_context = yes;
        self
    }

    /// The OpenTelemetry spans and metrics of the client (feature
    /// `opentelemetry`): by default [`OpenTelemetry::global`](crate::OpenTelemetry::global),
    /// the application's global providers and propagator; another instance
    /// for explicit providers, or [`OpenTelemetry::disabled`](crate::OpenTelemetry::disabled).
    #[cfg(feature = "opentelemetry")]
    pub fn opentelemetry(mut self, opentelemetry: crate::send::otel::OpenTelemetry) -> Self {
        self.opentelemetry = opentelemetry.enabled();
        self
    }

    /// The REST base URL, e.g. `https://api.example.com` (required: no host is baked in).
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = Some(url.into());
        self
    }

    /// The public key: it authenticates [`Client::validate_access_token`] and
    /// [`RawAuth::PublicKey`] requests (without it they fail with
    /// [`ErrorKind::Configuration`] and nothing is sent).
    pub fn public_key(mut self, key: impl Into<String>) -> Self {
        self.public_key = Some(key.into());
        self
    }

    /// The address rooms are served at to browsers (for [`Client::sign_in_url`]).
    pub fn chat_url(mut self, url: impl Into<String>) -> Self {
        self.chat_url = Some(url.into());
        self
    }

    /// Connect timeout (default [`DEFAULT_CONNECT_TIMEOUT`]).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Overall timeout of one attempt (default [`DEFAULT_TIMEOUT`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Retries after the first attempt (default [`DEFAULT_MAX_RETRIES`]; 0 turns retrying off).
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// Also retry POST and PATCH after a 5xx or a read timeout (default `false`:
    /// a retried create-user can create the user twice).
    pub fn retry_non_idempotent(mut self, yes: bool) -> Self {
        self.retry_non_idempotent = yes;
        self
    }

    /// The first retry's backoff before jitter; it doubles each retry (default 250 ms).
    pub fn base_backoff(mut self, backoff: Duration) -> Self {
        self.base_backoff = backoff;
        self
    }

    /// The longest wait slept before a retry (default [`DEFAULT_MAX_RETRY_WAIT`]); a
    /// `Retry-After` beyond it is returned as an error instead.
    pub fn max_retry_wait(mut self, wait: Duration) -> Self {
        self.max_retry_wait = wait;
        self
    }

    /// The client-side rate limit of this key (default [`RateLimitConfig::default`]: 600 per 60 s).
    pub fn rate_limit(mut self, config: RateLimitConfig) -> Self {
        self.rate_limit = config;
        self
    }

    /// An application name closing the `User-Agent`
    /// (`roomchat-rust/0.1.0 (core 0.1.0; linux x86_64) myapp/2.1`).
    pub fn app_name(mut self, name: impl Into<String>) -> Self {
        self.app_name = Some(name.into());
        self
    }

    /// The largest response body accepted (default [`DEFAULT_MAX_RESPONSE_BYTES`];
    /// `u64::MAX` means no cap).
    pub fn max_response_bytes(mut self, bytes: u64) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Allow sending the key over plain `http://` to a host that is not loopback (default `false`).
    pub fn allow_insecure_http(mut self, yes: bool) -> Self {
        self.allow_insecure_http = yes;
        self
    }

    /// The proxy requests go through (default [`Proxy::Environment`]: as requests
    /// and curl read it). Loopback is never proxied, and plain `http://` only with
    /// [`allow_insecure_http`](Self::allow_insecure_http); a proxy the client
    /// cannot use (SOCKS, a bad URL) makes [`build`](Self::build) fail.
    pub fn proxy(mut self, proxy: Proxy) -> Self {
        self.proxy = proxy;
        self
    }

    /// Asks for gzip-compressed answers and decompresses them (default `true`,
    /// as requests and fetch do). [`max_response_bytes`](Self::max_response_bytes)
    /// caps the decompressed body.
    pub fn gzip(mut self, yes: bool) -> Self {
        self.gzip = yes;
        self
    }

    /// The roots an `https://` client trusts (default [`TlsRoots::WebPki`]:
    /// Mozilla's, bundled). Roots added with
    /// [`add_root_certificates_pem`](Self::add_root_certificates_pem) or named by
    /// `SSL_CERT_FILE` are trusted beside them.
    pub fn tls_roots(mut self, roots: TlsRoots) -> Self {
        self.tls_roots = roots;
        self
    }

    /// Whether the file named by `SSL_CERT_FILE` adds roots (default `true`).
    /// `false` keeps a client's trust independent of the environment (Python's
    /// `trust_env=False`). With [`TlsRoots::System`] the operating system's
    /// store is read as the system defines it, which on Linux includes that
    /// variable, so this applies to the bundled roots. A client that makes no
    /// TLS connection (a plain-`http://` base URL, no `https://` proxy, no
    /// `rediss://` budget) reads neither, as curl and requests do.
    pub fn read_ssl_cert_file(mut self, yes: bool) -> Self {
        self.read_ssl_cert_file = yes;
        self
    }

    /// Also trusts the certificates in `pem` (one or more `-----BEGIN
    /// CERTIFICATE-----` blocks): a private CA, or a TLS-inspecting gateway's.
    /// [`build`](Self::build) fails when it holds no certificate.
    ///
    /// ```no_run
    /// let pem = std::fs::read("corporate-ca.pem").unwrap();
    /// let client = roomchat::Client::builder("sk_live_…")
    ///     .base_url("https://api.example.com")
    ///     .add_root_certificates_pem(pem)
    ///     .build()?;
    /// # Ok::<(), roomchat::Error>(())
    /// ```
    pub fn add_root_certificates_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        self.root_pems.push(pem.as_ref().to_vec());
        self
    }

    /// Also trusts the certificates of the PEM file that the environment
    /// variable `name` names, when it is set: a runtime's own convention for
    /// extra roots (Node's `NODE_EXTRA_CA_CERTS`). [`build`](Self::build)
    /// reads it only when the client can make a TLS connection, as
    /// `SSL_CERT_FILE` (see [`read_ssl_cert_file`](Self::read_ssl_cert_file)),
    /// and fails with [`ErrorKind::Configuration`] naming the variable when
    /// the file cannot be read.
    pub fn add_root_certificates_from_env(mut self, name: impl Into<String>) -> Self {
        self.roots_from_env.push(name.into());
        self
    }

    /// Names the package that makes this client in the `User-Agent`, for the
    /// packages built on this crate (the C library, the Python and Node
    /// packages): `product` opens it (`roomchat-python/0.2.0`; by default
    /// `roomchat-rust/<this crate's version>`), and `runtime`, when given, is
    /// named in its comment (`CPython 3.11`). With
    /// [`app_name`](Self::app_name) `my-backend/1.4` the header reads
    /// `roomchat-python/0.2.0 (core 0.2.0; CPython 3.11; linux x86_64) my-backend/1.4`.
    /// [`build`](Self::build) fails on a product that is not `name/version`
    /// of visible ASCII, or a runtime with parentheses, `;` or control characters.
    pub fn sdk_identity(mut self, product: impl Into<String>, runtime: Option<String>) -> Self {
        self.sdk = Some((product.into(), runtime));
        self
    }

    /// Checks the settings and builds the client.
    pub fn build(mut self) -> Result<Client> {
        let key = &self.private_key;
        if key.is_empty() {
            return Err(Error::configuration("the private key is empty"));
        }
        if key.trim() != key {
            return Err(Error::configuration(
                "the private key has surrounding whitespace",
            ));
        }
        if key.chars().any(char::is_control) {
            return Err(Error::configuration(
                "the private key contains control characters",
            ));
        }
        if let Some(public) = &self.public_key {
            if public.is_empty() || public.trim() != public {
                return Err(Error::configuration(
                    "the public key is empty or has surrounding whitespace",
                ));
            }
        }
        let base_url = self
            .base_url
            .clone()
            .ok_or_else(|| Error::configuration("no base URL was given"))?;
        let base_url = check_url("base URL", &base_url, self.allow_insecure_http, key)?;
        let chat_url = match &self.chat_url {
            Some(url) => Some(check_url("chat URL", url, true, key)?),
            None => None,
        };
        self.rate_limit.validate()?;
        if self.timeout.is_zero() || self.connect_timeout.is_zero() {
            return Err(Error::configuration("timeouts must be greater than zero"));
        }
        check_duration("the timeout", self.timeout)?;
        check_duration("the connect timeout", self.connect_timeout)?;
        check_duration("the base backoff", self.base_backoff)?;
        check_duration("the longest retry wait", self.max_retry_wait)?;
        let user_agent = user_agent(&self.sdk, self.app_name.as_deref())?;
        if let Some(e) = self.header_error.take() {
            return Err(e);
        }
        if self.observer.is_none() {
            if let Some(stderr) = crate::send::observe::StderrObserver::from_env() {
                self.observer = Some(Arc::new(stderr));
            }
        }
        let base = BaseUrl::parse(&base_url)?;
        let proxy = crate::transport::proxy::choose(
            &self.proxy,
            base.scheme.as_str(),
            base.authority.host(),
            self.allow_insecure_http,
            |name| std::env::var(name).ok(),
        )?;
        // Trust settings matter only to a client that can make a TLS connection:
        // as curl and requests do, a plain-http one reads none from the
        // environment (a container's SSL_CERT_FILE naming a missing file does
        // not stop it), and takes no system store.
        let needs_tls = base.scheme == ureq::http::uri::Scheme::HTTPS
            || proxy.as_ref().is_some_and(|chosen| chosen.over_tls)
            || self.budget_over_tls();
        let (proxy, proxy_shown, mut secrets) = match proxy {
            Some(chosen) => (Some(chosen.proxy), Some(chosen.shown), chosen.secrets),
            None => (None, None, Vec::new()),
        };
        secrets.insert(0, key.clone());
        // The public key is as secret as the private one in every text shown.
        if let Some(public) = &self.public_key {
            secrets.insert(1, public.clone());
        }
        // The system store reads the variables itself: they stay part of its key.
        let read_env = self.read_ssl_cert_file || self.tls_roots == TlsRoots::System;
        let tls = if needs_tls {
            for name in &self.roots_from_env {
                let Some(path) = std::env::var_os(name).filter(|p| !p.is_empty()) else {
                    continue;
                };
                let pem = std::fs::read(&path).map_err(|e| {
                    Error::new(
                        ErrorKind::Configuration,
                        format!("the file {path:?} named by {name} cannot be read: {e}"),
                    )
                })?;
                self.root_pems.push(pem);
            }
            crate::transport::tls::SharedTls::for_settings(
                self.tls_roots,
                &self.root_pems,
                |name| std::env::var(name).ok().filter(|_| read_env),
            )?
        } else {
            // The added PEMs are still checked: a broken one is the caller's mistake.
            crate::transport::tls::SharedTls::for_settings(
                TlsRoots::WebPki,
                &self.root_pems,
                |_| None,
            )?
        };
        let agent_config = ureq::Agent::config_builder()
            .tls_config(
                ureq::tls::TlsConfig::builder()
                    .root_certs(tls.roots().clone())
                    .build(),
            )
            .accept_encoding(if self.gzip {
                ureq::config::AutoHeaderValue::Default
            } else {
                ureq::config::AutoHeaderValue::None
            })
            .http_status_as_error(false)
            // Always set: left unset, ureq would read the environment its own way.
            .proxy(proxy)
            .timeout_connect(Some(self.connect_timeout))
            .timeout_global(Some(self.timeout))
            // A redirect would carry the key in the URL to wherever it points.
            .max_redirects(0)
            .user_agent(user_agent)
            .max_idle_connections(MAX_IDLE_CONNECTIONS)
            .max_idle_connections_per_host(MAX_IDLE_CONNECTIONS)
            .build();
        // The budgets' locks are held around a fork, before the sockets'.
        #[cfg(unix)]
        {
            crate::budget::ratelimit::init_registry();
            crate::transport::fork::install(|| Box::new(crate::budget::lock_all()));
        }
        let budget = self.budget_for(key, tls.roots())?;
        let mut facts = base.facts(&base_url);
        facts.secrets = secrets
            .iter()
            .filter(|s| !s.is_empty())
            .flat_map(|s| [s.clone(), crate::percent::encode_query_component(s)])
            .collect();
        #[allow(unused_mut)]
        let mut instrumentations = self.instrumentations.clone();
        #[cfg(feature = "opentelemetry")]
        if let Some(otel) = &self.opentelemetry {
            instrumentations.push(Arc::new(otel.clone()));
        }
        let inner = Arc::new(Inner {
            agent: AgentCell::new(agent_config, tls),
            base,
            base_url,
            proxy_shown,
            secrets,
            chat_url,
            budget,
            unexplained_holds: UnexplainedHolds::new(),
            jitter_seed: AtomicU64::new(seed()),
            facts,
            instrumentations,
            config: self,
        });
        #[cfg(feature = "opentelemetry")]
        if let Some(otel) = &inner.config.opentelemetry {
            let weak: std::sync::Weak<Inner> = Arc::downgrade(&inner);
            otel.register_client(&inner.facts, weak);
        }
        Ok(Client {
            inner,
            cancel: None,
            options: CallOptions::default(),
            capture: None,
        })
    }
}

/// The base URL, split once: each request's URI is built from the parsed
/// scheme and authority and its own path and query.
struct BaseUrl {
    scheme: ureq::http::uri::Scheme,
    authority: ureq::http::uri::Authority,
    /// The path prefix (no trailing slash; empty for none).
    path: String,
}

impl BaseUrl {
    fn parse(url: &str) -> Result<BaseUrl> {
        let bad = || Error::configuration("the base URL is not a valid URL");
        let parts = url
            .parse::<ureq::http::Uri>()
            .map_err(|_| bad())?
            .into_parts();
        let path = parts
            .path_and_query
            .map(|p| p.path().trim_end_matches('/').to_owned())
            .unwrap_or_default();
        Ok(BaseUrl {
            scheme: parts.scheme.ok_or_else(bad)?,
            authority: parts.authority.ok_or_else(bad)?,
            path,
        })
    }

    /// What the calls of a client of this base (`url`, as checked) share:
    /// the server's address and port as the HTTP conventions name them, and
    /// a number for the client. The address is the host lowercased, without
    /// an IPv6 address's brackets, as a URL parser gives it (WHATWG's, Python's
    /// `urlsplit(...).hostname`), and as OpenTelemetry's httpx and undici
    /// instrumentations set `server.address`: every span and metric, and the
    /// bindings' gauges, carry this one value.
    fn facts(&self, url: &str) -> ClientFacts {
        static CLIENTS: AtomicU64 = AtomicU64::new(1);
        let host = self.authority.host();
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let https = self.scheme == ureq::http::uri::Scheme::HTTPS;
        ClientFacts {
            base_url: url.to_owned(),
            base_path: self.path.clone(),
            server_address: host.to_ascii_lowercase(),
            server_port: self
                .authority
                .port_u16()
                .unwrap_or(if https { 443 } else { 80 }),
            scheme: if https { "https" } else { "http" },
            client_id: CLIENTS.fetch_add(1, Ordering::Relaxed),
            secrets: Vec::new(),
        }
    }

    /// The URI of `target` (a path under the base, with its query) on this base.
    fn uri(&self, target: &str) -> std::result::Result<ureq::http::Uri, ureq::http::Error> {
        let mut parts = ureq::http::uri::Parts::default();
        parts.scheme = Some(self.scheme.clone());
        parts.authority = Some(self.authority.clone());
        parts.path_and_query = Some(target.parse()?);
        Ok(ureq::http::Uri::from_parts(parts)?)
    }
}

/// The `User-Agent`: `<product> (core <version>; [<runtime>; ]<os> <arch>)[ <app name>]`.
fn user_agent(sdk: &Option<(String, Option<String>)>, app_name: Option<&str>) -> Result<String> {
    let core = env!("CARGO_PKG_VERSION");
    let (product, runtime) = match sdk {
        Some((product, runtime)) => (product.clone(), runtime.as_deref()),
        None => (format!("roomchat-rust/{core}"), None),
    };
    let is_token = |part: &str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?={}".contains(&b))
    };
    if !product
        .split_once('/')
        .is_some_and(|(name, version)| is_token(name) && is_token(version))
    {
        return Err(Error::configuration(format!(
            "the SDK product {product:?} is not name/version in visible ASCII"
        )));
    }
    let mut agent = format!("{product} (core {core}; ");
    if let Some(runtime) = runtime {
        if runtime.trim().is_empty()
            || runtime
                .chars()
                .any(|c| c.is_control() || matches!(c, '(' | ')' | ';'))
        {
            return Err(Error::configuration(format!(
                "the SDK runtime {runtime:?} is empty or has parentheses, ';' or control characters"
            )));
        }
        agent.push_str(runtime.trim());
        agent.push_str("; ");
    }
    agent.push_str(std::env::consts::OS);
    agent.push(' ');
    agent.push_str(std::env::consts::ARCH);
    agent.push(')');
    if let Some(app) = app_name {
        if app.chars().any(|c| c.is_control()) || app.trim().is_empty() {
            return Err(Error::configuration(
                "the application name is empty or has control characters",
            ));
        }
        agent.push(' ');
        agent.push_str(app.trim());
    }
    Ok(agent)
}

/// Idle keep-alive connections kept per client (all to the one base URL).
const MAX_IDLE_CONNECTIONS: usize = 64;

/// The client's ureq agent (connection pool and resolver cache), made anew in
/// a forked child: see [`crate::transport::fork`].
struct AgentCell {
    agent: ForkLocal<ureq::Agent>,
    config: ureq::config::Config,
    tls: crate::transport::tls::SharedTls,
}

impl AgentCell {
    fn new(config: ureq::config::Config, tls: crate::transport::tls::SharedTls) -> AgentCell {
        AgentCell {
            agent: ForkLocal::new(AgentCell::make(&config, &tls)),
            config,
            tls,
        }
    }

    fn make(config: &ureq::config::Config, tls: &crate::transport::tls::SharedTls) -> ureq::Agent {
        ureq::Agent::with_parts(
            config.clone(),
            connect::connector(tls.connector()),
            CachingResolver::default(),
        )
    }

    /// This process's agent.
    fn get(&self) -> &ureq::Agent {
        self.agent.get(|| AgentCell::make(&self.config, &self.tls))
    }
}

fn seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64;
    nanos | 1
}

/// Checks an `http(s)://host[:port][/path]` URL; plain `http://` only to loopback unless allowed.
/// Its errors quote the URL with `secret` (the private key, not empty) taken out.
/// The base URL as [`ClientBuilder::build`] checks it: the URL it would use
/// (without a trailing `/`), or the configuration error it would give (with
/// user information, a password maybe, `REDACTED`). For a tool that shows
/// requests without sending them (a dry run), so that it shows what a client
/// would send, or refuses what a client would refuse.
///
/// ```
/// assert_eq!(roomchat::check_base_url("https://api.example.com/", false)?, "https://api.example.com");
/// let refused = roomchat::check_base_url("https://deploy:pw@api.example.com", false).unwrap_err();
/// assert!(refused.to_string().contains("https://REDACTED@api.example.com"));
/// # Ok::<(), roomchat::Error>(())
/// ```
pub fn check_base_url(url: &str, allow_insecure_http: bool) -> Result<String> {
    check_url("base URL", url, allow_insecure_http, "")
}

/// The proxy as [`ClientBuilder::build`] checks it for a client of `base_url` (a URL
/// [`check_base_url`] accepts; for [`Proxy::Environment`], the environment's proxy for it):
/// `Ok` when a client would take it, or the configuration error it would give (the proxy's
/// user information, a password maybe, `REDACTED`). For a tool that shows requests without
/// sending them (a dry run), so that it refuses what a client would refuse.
///
/// ```
/// use roomchat::{check_proxy, Proxy};
/// let base = "https://api.example.com";
/// check_proxy(&Proxy::url("http://proxy.internal:3128"), base, false)?;
/// let refused = check_proxy(&Proxy::url("socks5://user:pw@p:1080"), base, false).unwrap_err();
/// assert!(refused.to_string().contains("SOCKS") && !refused.to_string().contains("pw"));
/// # Ok::<(), roomchat::Error>(())
/// ```
pub fn check_proxy(proxy: &Proxy, base_url: &str, allow_insecure_http: bool) -> Result<()> {
    let base = BaseUrl::parse(&check_base_url(base_url, allow_insecure_http)?)?;
    crate::transport::proxy::choose(
        proxy,
        base.scheme.as_str(),
        base.authority.host(),
        allow_insecure_http,
        |name| std::env::var(name).ok(),
    )
    .map(|_| ())
}

fn check_url(what: &str, url: &str, allow_insecure: bool, secret: &str) -> Result<String> {
    let url = url.trim_end_matches('/');
    let (scheme, rest) = url.split_once("://").ok_or_else(|| {
        Error::configuration(format!("the {what} must start with https:// or http://"))
    })?;
    let host_port = rest.split('/').next().unwrap_or_default();
    // A URL may carry the key by mistake: never quote it. Nor anything before
    // its last `@`, which may be a password: in a URL refused as not valid
    // (`user:pa#ss@host`, a blank, a query) no URL parser can say where the
    // user information ends, so all of it up to the last `@` is hidden.
    let hide = |text: &str| {
        let text = match text.split_once("://") {
            Some((scheme, rest)) if rest.contains('@') => {
                let host = rest.rsplit('@').next().unwrap_or_default();
                format!("{scheme}://REDACTED@{host}")
            }
            _ => text.to_owned(),
        };
        if secret.is_empty() {
            return text;
        }
        text.replace(secret, "REDACTED")
            .replace(&wire::encode_query_component(secret), "REDACTED")
    };
    if host_port.is_empty()
        || url.contains(['?', '#'])
        || url.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(Error::configuration(format!(
            "the {what} {:?} is not a valid URL",
            hide(url)
        )));
    }
    // `user@host`: the host the request would go to is after the `@`, which
    // the loopback check below must not be fooled about (nor is a user wanted).
    if host_port.contains('@') {
        return Err(Error::configuration(format!(
            "the {what} {:?} must not carry user information (`user@`)",
            // The user information may hold a password: shown as REDACTED.
            hide(url)
        )));
    }
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    match scheme.to_ascii_lowercase().as_str() {
        "https" => {}
        "http" if allow_insecure || is_loopback(host) => {}
        "http" => return Err(Error::insecure_http(what, &hide(host))),
        _ => {
            return Err(Error::configuration(format!(
                "the {what} must start with https:// or http://"
            )))
        }
    }
    Ok(url.to_owned())
}

struct Inner {
    agent: AgentCell,
    base_url: String,
    /// The base URL's parts, parsed once.
    base: BaseUrl,
    /// The proxy requests go through, its user information redacted.
    proxy_shown: Option<String>,
    /// What no error may show: the private key, then the proxy's user information.
    secrets: Vec<String>,
    chat_url: Option<String>,
    budget: Budgets,
    /// How long a 429 that does not say how long to wait holds the key off.
    unexplained_holds: UnexplainedHolds,
    jitter_seed: AtomicU64,
    /// Where the requests go, as the instrumentation names it.
    facts: ClientFacts,
    /// Asked for each call's observers: the builder's, then OpenTelemetry's.
    instrumentations: Vec<Arc<dyn Instrumentation>>,
    config: ClientBuilder,
}

#[cfg(feature = "opentelemetry")]
impl crate::send::otel::RemainingSlots for Inner {
    fn remaining(&self) -> u64 {
        u64::from(self.budget.snapshot().remaining)
    }
}

/// A client of the chat service's REST API.
///
/// Cheap to clone (one `Arc`), `Send + Sync`, and meant to be shared: all
/// clones and threads use one keep-alive connection pool, and every client of
/// the same private key in the process shares one rate-limit budget.
///
/// ```no_run
/// use roomchat::{Client, CreateUser, ListUsers};
///
/// let client = Client::builder("sk_live_…").base_url("https://api.example.com").build()?;
/// let created = client.create_user(&CreateUser::moderator("ann"))?;
/// let page = client.list_users(&ListUsers::page(50, 0))?;
/// for user in client.users() {
///     println!("{:?}", user?.username);
/// }
/// # Ok::<(), roomchat::Error>(())
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
    /// Cancels this handle's calls ([`Client::with_cancel`]).
    cancel: Option<CancelToken>,
    /// This handle's own settings over the client's ([`Client::with_options`]).
    options: CallOptions,
    /// Where this handle's calls leave their answers ([`Client::with_response`]).
    capture: Option<Capture>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.inner.base_url)
            .field("proxy", &self.inner.proxy_shown)
            .field("private_key", &"REDACTED")
            .finish_non_exhaustive()
    }
}

/// Which response headers an answer keeps.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Headers {
    /// Every header (raw requests hand them to the caller).
    All,
    /// Only those the decoders and the budget read ([`read_by_decoders`]).
    ForDecoding,
}

/// `Content-Type` (error messages), `Retry-After` and `X-RateLimit-*` (the budget).
fn read_by_decoders(name: &str) -> bool {
    name.eq_ignore_ascii_case("content-type")
        || name.eq_ignore_ascii_case("retry-after")
        || name
            .get(..12)
            .is_some_and(|p| p.eq_ignore_ascii_case("x-ratelimit-"))
}

/// What a call adds to its requests beyond the client's: the scope's headers,
/// and its observation (with the headers its observers give each attempt).
struct Sent<'s, 'o> {
    scope_headers: Option<&'s RequestHeaders>,
    observation: Option<&'s mut Observation<'o>>,
}

/// How one attempt ended, for the retry decision.
enum Attempt {
    Answered(WireResponse),
    /// Failed before the request could have reached the service.
    NotSent(Error),
    /// Failed after (part of) the request may have been sent.
    MaybeSent(Error),
}

impl Client {
    /// Starts configuring a client authenticated by `private_key`.
    pub fn builder(private_key: impl Into<String>) -> ClientBuilder {
        ClientBuilder {
            private_key: private_key.into(),
            public_key: None,
            base_url: None,
            chat_url: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            timeout: DEFAULT_TIMEOUT,
            max_retries: DEFAULT_MAX_RETRIES,
            retry_non_idempotent: false,
            base_backoff: Duration::from_millis(250),
            max_retry_wait: DEFAULT_MAX_RETRY_WAIT,
            rate_limit: RateLimitConfig::default(),
            app_name: None,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            allow_insecure_http: false,
            proxy: Proxy::Environment,
            tls_roots: TlsRoots::WebPki,
            read_ssl_cert_file: true,
            gzip: true,
            root_pems: Vec::new(),
            roots_from_env: Vec::new(),
            observer: None,
            instrumentations: Vec::new(),
            headers: RequestHeaders::new(),
            header_error: None,
            propagate_trace_context: true,
            #[cfg(feature = "opentelemetry")]
            opentelemetry: crate::send::otel::OpenTelemetry::global().enabled(),
            sdk: None,
            #[cfg(feature = "redis")]
            redis_budget: None,
        }
    }

    /// A client from the environment: see [`ClientBuilder::from_env`].
    pub fn from_env() -> Result<Client> {
        ClientBuilder::from_env()?.build()
    }

    /// The same client (same pool, budget and settings) whose calls `token` cancels.
    /// Iterators made from it carry the token too.
    pub fn with_cancel(&self, token: CancelToken) -> Client {
        Client {
            cancel: Some(token),
            ..self.clone()
        }
    }

    /// A view of this client whose calls use `options` where they are given
    /// (a timeout, retries) and the client's settings elsewhere. Cheap (one
    /// `Arc` cloned), and it shares everything else with the client: the
    /// connection pool, the key's rate-limit budget, the observer. Iterators
    /// made from it carry its options; a view of a view adds its options to
    /// the first's. Fails with [`ErrorKind::Configuration`] on the values
    /// [`ClientBuilder`] refuses (a zero timeout, a duration above [`MAX_DURATION`](crate::MAX_DURATION)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use roomchat::{CallOptions, ListUsers};
    /// # let emu = roomchat_emulator::Emulator::start(Default::default()).unwrap();
    /// # let client = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url()).build()?;
    /// let quick = client.with_options(CallOptions::new().timeout(Duration::from_secs(2)).max_retries(0))?;
    /// quick.list_users(&ListUsers::default())?;
    /// # Ok::<(), roomchat::Error>(())
    /// ```
    pub fn with_options(&self, options: CallOptions) -> Result<Client> {
        options.validate()?;
        Ok(Client {
            options: options.over(self.options),
            ..self.clone()
        })
    }

    /// The options this handle's calls use over the client's (none for the client itself).
    pub fn call_options(&self) -> CallOptions {
        self.options
    }

    /// Runs `call` with a view of this client and returns its result beside the
    /// answer it was decoded from: status, headers (`X-RateLimit-*`,
    /// `X-Request-Id`, `Date`, …) and attempts. Works for every endpoint, as
    /// `|c| c.list_users(&params)` or `|c| c.create_user(&user)`; when `call`
    /// makes several requests, the answer is the last one's. A call that makes
    /// no request (`|c| c.sign_in_url(..)`) fails with [`ErrorKind::Validation`].
    /// On failure the error is returned as it is (it carries the status).
    ///
    /// ```
    /// use roomchat::{ListUsers, WithResponse};
    /// # let emu = roomchat_emulator::Emulator::start(Default::default()).unwrap();
    /// # let client = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url()).build()?;
    /// let WithResponse { value: page, meta } = client.with_response(|c| c.list_users(&ListUsers::default()))?;
    /// assert_eq!((meta.status, meta.attempts), (200, 1));
    /// assert!(meta.request_id().is_some() && meta.header("date").is_some());
    /// # let _ = page;
    /// # Ok::<(), roomchat::Error>(())
    /// ```
    pub fn with_response<T>(
        &self,
        call: impl FnOnce(&Client) -> Result<T>,
    ) -> Result<WithResponse<T>> {
        let capture = Capture::default();
        let view = Client {
            capture: Some(capture.clone()),
            ..self.clone()
        };
        let value = call(&view)?;
        let meta = capture.take().ok_or_else(|| {
            Error::validation(
                "with_response: the call made no request (only the endpoints' calls have an answer)",
            )
        })?;
        Ok(WithResponse { value, meta })
    }

    /// The REST base URL.
    pub fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    /// The `server.address` of this client's spans and metrics: the base
    /// URL's host lowercased, without an IPv6 address's brackets
    /// (`https://API.Example.com` gives `api.example.com`, `http://[::1]:8080`
    /// gives `::1`), as URL parsers and OpenTelemetry's HTTP client
    /// instrumentations give it. A language's own instruments (a budget gauge)
    /// read this value, so that they agree with core's.
    pub fn server_address(&self) -> &str {
        &self.inner.facts.server_address
    }

    /// The base URL's port, or its scheme's (443, 80): `server.port` on every
    /// span and metric, as [`Client::server_address`] is `server.address`.
    pub fn server_port(&self) -> u16 {
        self.inner.facts.server_port
    }

    /// One page of users, handed to `read` as a view borrowed from the
    /// response body ([`crate::wire::view`]) instead of decoded into a
    /// [`UserPage`](crate::UserPage): for code that turns the page into something else at
    /// once. The call (budget, retries, errors) is [`Client::list_users`]'s.
    ///
    /// ```
    /// # let emu = roomchat_emulator::Emulator::start(Default::default()).unwrap();
    /// # let client = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url()).build()?;
    /// # emu.seed_users(3);
    /// use roomchat::ListUsers;
    /// let names = client.list_users_with(&ListUsers::page(50, 0), |page| {
    ///     page.data.iter().filter_map(|u| u.username.as_deref()).collect::<Vec<_>>().join(",")
    /// })?;
    /// assert_eq!(names.split(',').count(), 3);
    /// # Ok::<(), roomchat::Error>(())
    /// ```
    pub fn list_users_with<R>(
        &self,
        params: &ListUsers,
        read: impl FnOnce(UserPageView<'_>) -> R,
    ) -> Result<R> {
        self.call(wire::list_users(params), |response| {
            wire::decode_list_users_view(response).map(read)
        })
    }

    /// A request to an operation the contract names without a shape (section 4.7).
    ///
    /// ```
    /// # let emu = roomchat_emulator::Emulator::start(Default::default()).unwrap();
    /// # let client = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url()).chat_url(emu.chat_url()).public_key(emu.public_key()).build()?;
    /// use roomchat::{CreateUser, RawAuth, RawRequest};
    /// let jon = client.create_user(&CreateUser::regular("jon"))?;
    /// let validate = RawRequest::new("GET", "/consumer/api/v1/validate")
    ///     .query("accessToken", jon.access_token)
    ///     .auth(RawAuth::PublicKey);
    /// assert_eq!(client.raw_request(&validate)?.body["username"], "jon");
    /// # Ok::<(), roomchat::Error>(())
    /// ```
    pub fn raw_request(&self, params: &RawRequest) -> Result<RawResponse> {
        self.call_keeping(wire::raw(params), wire::decode_raw, Headers::All)
    }

    /// Where this key's shared rate-limit budget stands. Never does I/O nor
    /// waits on anything held across I/O: with a Redis budget, the figures are
    /// those the last round trip learned (feature `redis`: see `RedisBudget`).
    ///
    /// ```
    /// # let emu = roomchat_emulator::Emulator::start(Default::default()).unwrap();
    /// # let client = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url()).chat_url(emu.chat_url()).public_key(emu.public_key()).build()?;
    /// use roomchat::ListUsers;
    /// client.list_users(&ListUsers::default())?;
    /// let state = client.rate_limit_state();
    /// assert_eq!((state.used, state.remaining + state.used), (1, state.limit));
    /// # Ok::<(), roomchat::Error>(())
    /// ```
    pub fn rate_limit_state(&self) -> RateLimitState {
        self.inner.budget.snapshot()
    }

    /// The browser address that signs the holder of `access_token` in to `room_id` (section 4.6).
    ///
    /// ```
    /// # let emu = roomchat_emulator::Emulator::start(Default::default()).unwrap();
    /// # let client = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url()).chat_url(emu.chat_url()).public_key(emu.public_key()).build()?;
    /// use roomchat::CreateUser;
    /// let bob = client.create_user(&CreateUser::room_moderator("bob", "bbNiVFoXm"))?;
    /// let url = client.sign_in_url("bbNiVFoXm", &bob.access_token)?;
    /// assert!(url.starts_with(&format!("{}/bbNiVFoXm?accessToken=", emu.chat_url())));
    /// # Ok::<(), roomchat::Error>(())
    /// ```
    pub fn sign_in_url(&self, room_id: &str, access_token: &str) -> Result<String> {
        let chat_url = self.inner.chat_url.as_deref().ok_or_else(|| {
            Error::configuration("no chat URL was configured (ClientBuilder::chat_url)")
        })?;
        crate::wire::signin::sign_in_url(chat_url, room_id, access_token)
    }

    /// An `<iframe>` element showing `room_id` signed in as the holder of `access_token`.
    pub fn iframe_html(
        &self,
        room_id: &str,
        access_token: &str,
        width: &str,
        height: &str,
    ) -> Result<String> {
        let url = self.sign_in_url(room_id, access_token)?;
        crate::wire::signin::iframe_html(&url, width, height)
    }

    /// A declared operation with its JSON params (the service's wire names,
    /// path params included), through the one send path, its answer decoded
    /// into the record `T` (the operation's declared result; another type is
    /// a decode error, [`Value`] takes any JSON): what the typed methods and
    /// the bindings' generated methods call. The params are checked against
    /// the declaration first (a validation error, nothing sent).
    ///
    /// ```
    /// # let emu = roomchat_emulator::Emulator::start(Default::default()).unwrap();
    /// # let client = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url()).build()?;
    /// # emu.seed_users(3);
    /// use roomchat::{wire::Operation, UserPage};
    /// let page: UserPage = client.call_declared(Operation::ListUsers, &serde_json::json!({"limit": 2}))?;
    /// assert_eq!((page.total, page.data.len()), (3, 2));
    /// # Ok::<(), roomchat::Error>(())
    /// ```
    pub fn call_declared<T: crate::wire::Decoded>(
        &self,
        operation: crate::wire::Operation,
        params: &Value,
    ) -> Result<T> {
        self.call(operation.build(params), crate::wire::decode_json::<T>)
    }

    /// [`Client::call_declared`] with the answer decoded by `decode` (e.g.
    /// [`wire::decode_list_users_view`](crate::wire::decode_list_users_view),
    /// for a binding that turns the page into its own objects at once).
    pub fn call_declared_with<R>(
        &self,
        operation: crate::wire::Operation,
        params: &Value,
        decode: impl FnOnce(&WireResponse) -> Result<R>,
    ) -> Result<R> {
        self.call(operation.build(params), decode)
    }

    /// Any operation by its declaration, with its JSON params (the service's
    /// wire names; see [`Operation`](crate::wire::Operation)) and its result as
    /// JSON with the service's field names: what the bindings' generated
    /// methods call. Everything a typed method does (budget, retries by the
    /// operation's class, errors, observation) happens here too.
    ///
    /// ```
    /// # let emu = roomchat_emulator::Emulator::start(Default::default()).unwrap();
    /// # let client = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url()).build()?;
    /// # emu.seed_users(3);
    /// use roomchat::wire::Operation;
    /// let page = client.call_operation(Operation::ListUsers, &serde_json::json!({"limit": 2}))?;
    /// assert_eq!((page["total"].as_u64(), page["data"].as_array().map(Vec::len)), (Some(3), Some(2)));
    /// # Ok::<(), roomchat::Error>(())
    /// ```
    pub fn call_operation(
        &self,
        operation: crate::wire::Operation,
        params: &Value,
    ) -> Result<Value> {
        self.call_operation_as(operation, params, |r| operation.decode(r))
    }

    /// [`call_operation`](Self::call_operation) with the result as JSON text,
    /// written from the typed record at once (no JSON value in between): for a
    /// binding that hands the text on, as the C ABI does.
    pub fn call_operation_text(
        &self,
        operation: crate::wire::Operation,
        params: &Value,
    ) -> Result<String> {
        self.call_operation_as(operation, params, |r| operation.decode_text(r))
    }

    fn call_operation_as<T>(
        &self,
        operation: crate::wire::Operation,
        params: &Value,
        decode: impl FnOnce(&WireResponse) -> Result<T>,
    ) -> Result<T> {
        let headers = if operation == crate::wire::Operation::Raw {
            Headers::All
        } else {
            Headers::ForDecoding
        };
        self.call_keeping(operation.build(params), decode, headers)
    }

    fn call<T>(
        &self,
        request: Result<WireRequest>,
        decode: impl FnOnce(&WireResponse) -> Result<T>,
    ) -> Result<T> {
        self.call_keeping(request, decode, Headers::ForDecoding)
    }

    fn call_keeping<T>(
        &self,
        request: Result<WireRequest>,
        decode: impl FnOnce(&WireResponse) -> Result<T>,
        headers: Headers,
    ) -> Result<T> {
        let request = request?;
        let raw = headers == Headers::All;
        // What observes this call: the client's instrumentation, then the
        // scope's (a language's, for this call); asked now, on this thread.
        let scope = CallScope::current();
        let (scope_instrumentation, scope_headers) = match &scope {
            Some((instrumentation, headers)) => (instrumentation.as_ref(), Some(headers)),
            None => (None, None),
        };
        let mut observation =
            if self.inner.instrumentations.is_empty() && scope_instrumentation.is_none() {
                None
            } else {
                let asked: Vec<&Arc<dyn Instrumentation>> = self
                    .inner
                    .instrumentations
                    .iter()
                    .chain(scope_instrumentation)
                    .collect();
                Observation::start(&asked, &self.inner.facts, &request, raw)
            };
        let span = crate::send::trace::CallSpan::start(&request, raw, &self.inner.facts);
        let _entered = span.enter();
        let sent = Sent {
            scope_headers: scope_headers.filter(|h| !h.is_empty()),
            observation: observation.as_mut(),
        };
        let result = self
            .execute(&request, decode, headers, &span, sent)
            .map_err(|e| {
                e.with_request(&request.method, &request.redacted_target())
                    .scrub_all(&self.inner.secrets)
                    // A service may quote the call's access token back.
                    .scrub_all(&request.access_tokens())
            })
            .inspect_err(|e| span.failed(e));
        if let Some(observation) = observation {
            observation.finish(result.as_ref().err());
        }
        result
    }

    /// The send loop, as ureq's `run` reads: wait for the budget, send one
    /// attempt, classify how it ended, decide on a retry, report the outcome
    /// once to every sink, sleep, again.
    fn execute<T>(
        &self,
        request: &WireRequest,
        decode: impl FnOnce(&WireResponse) -> Result<T>,
        headers: Headers,
        span: &crate::send::trace::CallSpan<'_>,
        sent: Sent<'_, '_>,
    ) -> Result<T> {
        let config = &self.inner.config;
        let target = request.url(&self.inner.base.path, self.key_for(request)?);
        let cancel = self.cancel.as_ref();
        let timeout = self.options.timeout.unwrap_or(config.timeout);
        let policy = RetryPolicy {
            max_retries: self.options.max_retries.unwrap_or(config.max_retries),
            max_wait: self.options.max_retry_wait.unwrap_or(config.max_retry_wait),
        };
        let may_resend = request.is_idempotent() || config.retry_non_idempotent;
        // A view made by `with_response` hands every header to its caller.
        let headers = if self.capture.is_some() {
            Headers::All
        } else {
            headers
        };
        let mut sinks = Sinks {
            events: Events::new(config.observer.as_deref(), request),
            span,
            observation: sent.observation,
        };
        let mut attempt = 1;
        // Whether a request of this call may have reached the service: a cancelled call that
        // sent none says so (Error::never_sent), and had no effect.
        let mut maybe_sent = false;
        loop {
            if let Some(token) = cancel {
                token.check().map_err(|e| e.sent_unless(!maybe_sent))?;
            }
            span.attempt(attempt);
            let started = self
                .wait_for_budget(attempt, timeout, &sinks)
                .map_err(|e| {
                    let cancelled = e.kind() == ErrorKind::Cancelled;
                    e.sent_unless(cancelled && !maybe_sent)
                })?;
            let (outcome, attempt_span) = self.send_attempt(
                request,
                &target,
                headers,
                attempt,
                started,
                sent.scope_headers,
                &mut sinks,
            );
            maybe_sent |= !matches!(outcome, Attempt::NotSent(_));
            // Read only for observers: an unobserved call reads the clock as before.
            let ended = sinks.observation.as_ref().map(|_| Instant::now());
            let mut report = AttemptReport {
                attempt,
                started,
                ended,
                status: None,
                error: None,
                answered: false,
                retry: None,
            };
            if cancel.is_some_and(CancelToken::is_cancelled)
                && !matches!(outcome, Attempt::Answered(_))
            {
                // A request that may have reached the service and must not be
                // sent twice: its caller must know that its outcome is unknown.
                let error = if matches!(outcome, Attempt::MaybeSent(_)) && !request.is_idempotent()
                {
                    cancel::cancelled_outcome_unknown()
                } else {
                    cancel::cancelled()
                }
                .sent_unless(!maybe_sent);
                report.error = Some(&error);
                sinks.cancelled(attempt_span, &report);
                return Err(error);
            }
            let (delivery, error) = match self.settle(outcome, started, may_resend) {
                Ok(response) => {
                    report.status = Some(response.status);
                    report.answered = true;
                    sinks.attempt_ended(attempt_span, &report);
                    if let Some(capture) = &self.capture {
                        capture.put(ResponseMeta {
                            status: response.status,
                            headers: response.headers.clone(),
                            attempts: attempt,
                        });
                    }
                    return decode(&response);
                }
                Err(failed) => failed,
            };
            let retryable = classify(delivery, may_resend) == Verdict::Retryable;
            // Sent again when it may be, after the server's wait or a backoff,
            // unless that is longer than the client waits.
            let retry = decide_retry(retryable, attempt, policy, error.retry_after(), || {
                self.backoff(attempt - 1)
            });
            report.status = error.status();
            report.error = Some(&error);
            report.answered = matches!(delivery, Delivery::Answered(_));
            report.retry = retry;
            sinks.attempt_ended(attempt_span, &report);
            let Some(wait) = retry else {
                return Err(error);
            };
            cancel::sleep(cancel, wait).map_err(|e| e.sent_unless(!maybe_sent))?;
            attempt += 1;
        }
    }

    /// How an attempt started at `started` ended: a 2xx answer, or how far
    /// it got and its error (scrubbed: the observers see it before the
    /// call's error is made). An answer is fed to the budget first.
    fn settle(
        &self,
        outcome: Attempt,
        started: Instant,
        may_resend: bool,
    ) -> std::result::Result<WireResponse, (Delivery, Error)> {
        match outcome {
            Attempt::Answered(response) => {
                let hold = self.observe(&response, started);
                let delivery = Delivery::Answered(response.status);
                if classify(delivery, may_resend) == Verdict::Succeeded {
                    return Ok(response);
                }
                let mut error =
                    wire::decode_error(&response, SystemTime::now()).scrub_all(&self.inner.secrets);
                if error.retry_after().is_none() {
                    // A 429 that said nothing: the wait is the hold the budget keeps.
                    error = error.with_retry_after(hold);
                }
                Err((delivery, error))
            }
            Attempt::NotSent(error) => {
                let error = error.scrub_all(&self.inner.secrets);
                Err((Delivery::NotSent(error.kind()), error))
            }
            Attempt::MaybeSent(error) => {
                Err((Delivery::MaybeSent, error.scrub_all(&self.inner.secrets)))
            }
        }
    }

    /// The key a request is authenticated by: the private key, the public key
    /// (a configuration error when none was given), or none.
    fn key_for(&self, request: &WireRequest) -> Result<Option<&str>> {
        let config = &self.inner.config;
        Ok(match request.auth {
            RawAuth::PrivateKey => Some(config.private_key.as_str()),
            RawAuth::PublicKey => Some(config.public_key.as_deref().ok_or_else(|| {
                Error::configuration(
                    "no public key was configured: this call is authenticated by the account's \
                     public key (ClientBuilder::public_key; public_key= in Python, publicKey in \
                     Node, roomchat_client_options_set_public_key in C, or ROOMCHAT_PUBLIC_KEY)",
                )
            })?),
            RawAuth::None => None,
        })
    }

    /// Waits for a slot of the key's budget for `attempt` (each wait and each
    /// failure of a budget in Redis reported to `sinks`); returns the instant
    /// the slot was taken, from which the attempt is timed.
    fn wait_for_budget(
        &self,
        attempt: u32,
        timeout: Duration,
        sinks: &Sinks<'_, '_, '_>,
    ) -> Result<Instant> {
        let asked = Instant::now();
        let started = self.inner.budget.acquire(
            self.cancel.as_ref(),
            instant_after(Instant::now(), timeout),
            |wait| sinks.rate_limit_wait(attempt, wait),
            |error| sinks.budget_degraded(attempt, error),
        )?;
        sinks
            .span
            .waited_for_budget(started.saturating_duration_since(asked));
        Ok(started)
    }

    /// Sends attempt `attempt` (its slot taken at `started`) once, with the
    /// client's, the scope's and the observers' headers, while the cancel
    /// token allows; returns how it ended and its span.
    #[allow(clippy::too_many_arguments)]
    fn send_attempt(
        &self,
        request: &WireRequest,
        target: &str,
        headers: Headers,
        attempt: u32,
        started: Instant,
        scope_headers: Option<&RequestHeaders>,
        sinks: &mut Sinks<'_, '_, '_>,
    ) -> (Attempt, crate::send::trace::AttemptSpan) {
        let config = &self.inner.config;
        let propagate = config.propagate_trace_context;
        let attempt_headers = match sinks.observation.as_deref_mut() {
            Some(observation) => observation.attempt_start(attempt, started, propagate),
            None => RequestHeaders::new(),
        };
        let extra = [Some(&config.headers), scope_headers, Some(&attempt_headers)];
        let attempt_span = sinks.span.attempt_start(attempt);
        let outcome = cancel::while_in_flight(self.cancel.as_ref(), || {
            self.send_once(request, target, headers, &extra, propagate)
        });
        (outcome, attempt_span)
    }

    /// Feeds a 429 and the `X-RateLimit-*` headers into the shared budget, for
    /// the answer to a request started at `started`; returns how long a 429
    /// holds every caller of the key off.
    ///
    /// A hold the server asks for is believed only up to
    /// [`ClientBuilder::max_retry_wait`] or two windows, whichever is longer:
    /// past that it is implausible (a server sending milliseconds where seconds
    /// are due, or an epoch in milliseconds as `X-RateLimit-Reset`), and would
    /// hold every caller of the key off for hours or years. Such a value counts
    /// as absent: a 429 then holds as one without `Retry-After` does
    /// ([`UnexplainedHolds`]: 1 s growing to the window), and an exhausted
    /// `X-RateLimit-Remaining` holds nothing (the next 429 will say more).
    fn observe(&self, response: &WireResponse, started: Instant) -> Option<Duration> {
        let now = SystemTime::now();
        let window = self.inner.budget.window();
        let longest = self
            .inner
            .config
            .max_retry_wait
            .max(window.saturating_mul(2));
        let plausible = |hold: Duration| (hold <= longest).then_some(hold);
        if response.status == 429 {
            let hold = response
                .header("retry-after")
                .and_then(|v| wire::parse_retry_after(v, now))
                .and_then(plausible)
                .unwrap_or_else(|| self.inner.unexplained_holds.hold(started, window));
            self.inner.budget.block_for(hold);
            return Some(hold);
        }
        self.inner.unexplained_holds.answered(started);
        if let Some(headers) = wire::rate_limit_headers(response, now) {
            if let (Some(0), Some(reset)) = (headers.remaining, headers.reset.and_then(plausible)) {
                self.inner.budget.block_for(reset);
            }
        }
        None
    }

    /// Exponential backoff with equal jitter: a random wait in [b/2, b],
    /// b = base × 2^retry, capped at 8 s (at least half the backoff is always
    /// waited; full jitter would draw from [0, b]).
    fn backoff(&self, retry: u32) -> Duration {
        let base = self
            .inner
            .config
            .base_backoff
            .saturating_mul(1 << retry.min(16))
            .min(Duration::from_secs(8));
        let x = next_jitter(&self.inner.jitter_seed);
        let fraction = 0.5 + (x % 1000) as f64 / 2000.0;
        base.mul_f64(fraction)
    }
    /// `request` with this view's timeouts, when they differ from the agent's
    /// (a request of the client itself is left as it is: no per-request config).
    fn with_timeouts<S: ureq::AsSendBody>(
        &self,
        agent: &ureq::Agent,
        request: ureq::http::Request<S>,
    ) -> ureq::http::Request<S> {
        let CallOptions {
            timeout,
            connect_timeout,
            ..
        } = self.options;
        if timeout.is_none() && connect_timeout.is_none() {
            return request;
        }
        let mut config = agent.configure_request(request);
        if let Some(timeout) = timeout {
            config = config.timeout_global(Some(timeout));
        }
        if let Some(timeout) = connect_timeout {
            config = config.timeout_connect(Some(timeout));
        }
        config.build()
    }

    fn send_once(
        &self,
        request: &WireRequest,
        target: &str,
        headers: Headers,
        extra: &[Option<&RequestHeaders>],
        propagate_trace_context: bool,
    ) -> Attempt {
        use ureq::http::{header, HeaderValue, Method, Request};
        // The extra headers, in layers: a later layer's header replaces an
        // earlier one's of the same name; trace context only when allowed.
        let add_extra = |map: &mut ureq::http::HeaderMap| {
            for layer in extra.iter().flatten() {
                for (name, value) in layer.entries() {
                    if propagate_trace_context || !instrument::is_trace_context(name.as_str()) {
                        map.insert(name.clone(), value.clone());
                    }
                }
            }
        };
        let not_built = || {
            Attempt::NotSent(Error::validation(
                "the request could not be built from its URL and method",
            ))
        };
        let (Ok(method), Ok(uri)) = (
            Method::from_bytes(request.method.as_bytes()),
            self.inner.base.uri(target),
        ) else {
            return not_built();
        };
        let agent = self.inner.agent.get();
        let result = match &request.body {
            Some(body) => {
                let mut r = Request::new(body.as_bytes());
                *r.method_mut() = method;
                *r.uri_mut() = uri;
                add_extra(r.headers_mut());
                r.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                agent.run(self.with_timeouts(agent, r))
            }
            // A POST or PUT without a body says `Content-Length: 0` (as curl, requests
            // and fetch do): ureq sends a body of unknown size as an empty chunked
            // one, which some servers and proxies refuse.
            None if method == Method::POST || method == Method::PUT || method == Method::PATCH => {
                let mut r = Request::new(&[][..]);
                *r.method_mut() = method;
                *r.uri_mut() = uri;
                add_extra(r.headers_mut());
                agent.run(self.with_timeouts(agent, r))
            }
            None => {
                let mut r = Request::new(());
                *r.method_mut() = method;
                *r.uri_mut() = uri;
                add_extra(r.headers_mut());
                agent.run(self.with_timeouts(agent, r))
            }
        };
        let mut response = match result {
            Ok(response) => response,
            Err(e) => return classify_transport_error(e),
        };
        let status = response.status().as_u16();
        // A raw answer keeps every header; the others only those the decoders read.
        let kept: Vec<(String, String)> = response
            .headers()
            .iter()
            .filter(|(n, _)| headers == Headers::All || read_by_decoders(n.as_str()))
            .filter_map(|(n, v)| {
                v.to_str()
                    .ok()
                    .map(|v| (n.as_str().to_owned(), v.to_owned()))
            })
            .collect();
        let cap = self.inner.config.max_response_bytes;
        let too_large = || {
            Error::new(
                ErrorKind::ResponseTooLarge,
                format!("the response body is larger than the cap of {cap} bytes"),
            )
            .with_status(status)
        };
        let declared = response
            .headers()
            .get("content-length")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > cap) {
            return Attempt::MaybeSent(too_large());
        }
        match read_body(&mut response.body_mut().as_reader(), declared, cap) {
            Ok(body) if body.len() as u64 > cap => Attempt::MaybeSent(too_large()),
            Ok(body) => Attempt::Answered(WireResponse::new(status, kept, body)),
            Err(e) => {
                let timed_out = e.kind() == std::io::ErrorKind::TimedOut
                    || e.get_ref()
                        .and_then(|inner| inner.downcast_ref::<ureq::Error>())
                        .is_some_and(|u| matches!(u, ureq::Error::Timeout(_)));
                let kind = if timed_out {
                    ErrorKind::Timeout
                } else {
                    ErrorKind::Decode
                };
                let what = if timed_out {
                    "timed out while reading the response body"
                } else {
                    "the response body was cut off"
                };
                Attempt::MaybeSent(Error::new(kind, format!("{what} ({e})")).with_status(status))
            }
        }
    }
}

/// The largest body read into a buffer of its declared size at once.
const PREALLOCATE_UP_TO: usize = DEFAULT_MAX_RESPONSE_BYTES as usize;

/// Reads a body to its end: of `declared` length straight into a buffer of
/// that size (no growing, no zeroing twice), else up to one byte past `cap`,
/// to tell "exactly the cap" from "over it". The read that finds the end is
/// the one on which ureq hands the connection back to its pool.
fn read_body(reader: &mut impl Read, declared: Option<u64>, cap: u64) -> std::io::Result<Vec<u8>> {
    let Some(length) = declared.and_then(|n| usize::try_from(n).ok()) else {
        let mut body = Vec::new();
        reader.take(cap.saturating_add(1)).read_to_end(&mut body)?;
        return Ok(body);
    };
    if length > PREALLOCATE_UP_TO {
        // A huge Content-Length under a huge cap is not trusted with one
        // allocation: the body is read as it comes, and must match it.
        let mut body = Vec::with_capacity(PREALLOCATE_UP_TO);
        reader.take(length as u64 + 1).read_to_end(&mut body)?;
        return match body.len().cmp(&length) {
            std::cmp::Ordering::Equal => Ok(body),
            std::cmp::Ordering::Less => Err(std::io::ErrorKind::UnexpectedEof.into()),
            std::cmp::Ordering::Greater => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "the body is longer than its Content-Length",
            )),
        };
    }
    let mut body = vec![0; length];
    let mut filled = 0;
    while filled < body.len() {
        match reader.read(&mut body[filled..]) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let mut past_the_end = [0u8; 1];
    loop {
        match reader.read(&mut past_the_end) {
            Ok(0) => return Ok(body),
            Ok(_) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "the body is longer than its Content-Length",
                ))
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// What the observer's event of one call carries besides its kind: named,
/// each `None` or empty unless the event has it.
#[derive(Clone, Copy)]
struct EventFacts<'e> {
    attempt: u32,
    /// The answer's status.
    status: Option<u16>,
    error: Option<&'e Error>,
    /// When the attempt began (its elapsed time is counted from it).
    started: Option<Instant>,
    /// How long the call now waits.
    wait: Option<Duration>,
}

impl EventFacts<'_> {
    /// An event of `attempt` with nothing else.
    fn of(attempt: u32) -> EventFacts<'static> {
        EventFacts {
            attempt,
            status: None,
            error: None,
            started: None,
            wait: None,
        }
    }
}

/// The observer's view of one call: events are built only when the observer wants their level.
struct Events<'a> {
    observer: Option<&'a dyn Observer>,
    request: &'a WireRequest,
    /// The redacted path, made on the first event.
    path: std::cell::OnceCell<String>,
}

impl<'a> Events<'a> {
    fn new(observer: Option<&'a dyn Observer>, request: &'a WireRequest) -> Events<'a> {
        Events {
            observer,
            request,
            path: std::cell::OnceCell::new(),
        }
    }

    /// The event `kind` of `facts`, to the observer and as a tracing event,
    /// when either wants its level.
    fn emit(&self, kind: EventKind, facts: EventFacts<'_>) {
        let observer = self.observer.filter(|o| o.enabled(kind.level()));
        let traced = crate::send::trace::wants(kind.level());
        if observer.is_none() && !traced {
            return;
        }
        let path = self.path.get_or_init(|| self.request.redacted_target());
        let now = Instant::now();
        let event = Event {
            kind,
            method: &self.request.method,
            path,
            attempt: facts.attempt,
            status: facts.status,
            error: facts.error,
            elapsed: facts
                .started
                .map_or(Duration::ZERO, |s| now.duration_since(s)),
            started_at: facts.started.unwrap_or(now),
            wait: facts.wait,
        };
        if traced {
            crate::send::trace::event(&event);
        }
        if let Some(observer) = observer {
            observer.event(&event);
        }
    }
}

/// Where one call's outcomes are reported: the observer's events, the
/// `tracing` spans, and the instrumentation's observers. Each outcome is one
/// report, told to all three here.
struct Sinks<'a, 's, 'o> {
    events: Events<'a>,
    span: &'a crate::send::trace::CallSpan<'a>,
    observation: Option<&'s mut Observation<'o>>,
}

/// How one attempt ended, as every sink is told it.
struct AttemptReport<'e> {
    attempt: u32,
    /// When its budget slot was taken.
    started: Instant,
    /// When it ended (read only for an observed call).
    ended: Option<Instant>,
    /// The answer's status, or the failed attempt's error's.
    status: Option<u16>,
    error: Option<&'e Error>,
    /// An answer came (the observer's event then shows its status, not the error).
    answered: bool,
    /// The call sends again after this wait.
    retry: Option<Duration>,
}

impl Sinks<'_, '_, '_> {
    /// The call waits `wait` for the budget before `attempt`.
    fn rate_limit_wait(&self, attempt: u32, wait: Duration) {
        self.span.rate_limit_wait();
        self.events.emit(
            EventKind::RateLimitWait,
            EventFacts {
                wait: Some(wait),
                ..EventFacts::of(attempt)
            },
        );
        if let Some(observation) = self.observation.as_deref() {
            observation.rate_limit_wait(attempt);
        }
    }

    /// The budget in Redis failed with `error` before `attempt`.
    fn budget_degraded(&self, attempt: u32, error: &Error) {
        self.events.emit(
            EventKind::BudgetDegraded,
            EventFacts {
                error: Some(error),
                ..EventFacts::of(attempt)
            },
        );
        if let Some(observation) = self.observation.as_deref() {
            observation.budget_degraded(attempt, error);
        }
    }

    /// An attempt ended, answered or failed (and the retry that follows, if any).
    fn attempt_ended(
        &mut self,
        attempt_span: crate::send::trace::AttemptSpan,
        report: &AttemptReport<'_>,
    ) {
        if report.answered {
            if let Some(status) = report.status {
                self.span.status(status);
            }
        }
        self.events.emit(
            EventKind::Attempt,
            EventFacts {
                status: report.status,
                // An answer's event shows its status; the error is the retry's.
                error: report.error.filter(|_| !report.answered),
                started: Some(report.started),
                ..EventFacts::of(report.attempt)
            },
        );
        self.end_spans(attempt_span, report);
        if let Some(wait) = report.retry {
            self.events.emit(
                EventKind::Retry,
                EventFacts {
                    status: report.status,
                    error: report.error,
                    wait: Some(wait),
                    ..EventFacts::of(report.attempt)
                },
            );
            self.span.waited_before_retry(wait);
        }
    }

    /// An attempt that got no answer was cancelled: its spans end (the
    /// observer's events say nothing of it; the call's error does).
    fn cancelled(
        &mut self,
        attempt_span: crate::send::trace::AttemptSpan,
        report: &AttemptReport<'_>,
    ) {
        self.end_spans(attempt_span, report);
    }

    fn end_spans(
        &mut self,
        attempt_span: crate::send::trace::AttemptSpan,
        report: &AttemptReport<'_>,
    ) {
        self.span
            .attempt_end(attempt_span, report.status, report.error);
        if let Some(observation) = self.observation.as_deref_mut() {
            observation.attempt_end(
                report.attempt,
                report.started,
                report.ended.unwrap_or(report.started),
                report.status,
                report.error,
                report.retry,
            );
        }
    }
}

/// How far one attempt got, as far as retrying it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Delivery {
    /// The service answered with this status.
    Answered(u16),
    /// It failed, with this kind, before the request could have reached the service.
    NotSent(ErrorKind),
    /// It failed after (part of) the request may have been sent.
    MaybeSent,
}

/// What an attempt's end means for the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// A 2xx answer: the call's result.
    Succeeded,
    /// A failure that sending again may mend, and that sending again cannot do twice.
    Retryable,
    /// A failure the call returns.
    Final,
}

/// Classifies an attempt's end: a 2xx succeeded; a 429 was not served and is
/// retried, any method; a 500, 502, 503 or 504 and a failure after the
/// request may have left are retried only when sending again is harmless
/// (`may_resend`: an idempotent method, or
/// [`ClientBuilder::retry_non_idempotent`]); a failure to connect (or its
/// timeout) before anything was sent is retried, any method; the rest is final.
fn classify(delivery: Delivery, may_resend: bool) -> Verdict {
    match delivery {
        Delivery::Answered(200..=299) => Verdict::Succeeded,
        Delivery::Answered(429) => Verdict::Retryable,
        Delivery::Answered(500 | 502 | 503 | 504) if may_resend => Verdict::Retryable,
        Delivery::Answered(_) => Verdict::Final,
        Delivery::NotSent(ErrorKind::Connection | ErrorKind::Timeout) => Verdict::Retryable,
        Delivery::NotSent(_) => Verdict::Final,
        Delivery::MaybeSent if may_resend => Verdict::Retryable,
        Delivery::MaybeSent => Verdict::Final,
    }
}

/// How many times, and how long at most, a call waits to send again.
#[derive(Debug, Clone, Copy)]
struct RetryPolicy {
    /// Retries after the first attempt.
    max_retries: u32,
    /// The longest wait slept before a retry.
    max_wait: Duration,
}

/// Whether attempt `attempt` (from 1), `retryable`, is sent again, and after
/// what wait: the server's (`server_wait`, from `Retry-After` or a 429's
/// hold) or else `backoff()` (drawn only then), while retries are left and
/// the wait is at most the policy's longest; `None`: the call ends.
fn decide_retry(
    retryable: bool,
    attempt: u32,
    policy: RetryPolicy,
    server_wait: Option<Duration>,
    backoff: impl FnOnce() -> Duration,
) -> Option<Duration> {
    if !retryable || attempt > policy.max_retries {
        return None;
    }
    let wait = server_wait.unwrap_or_else(backoff);
    (wait <= policy.max_wait).then_some(wait)
}

/// The next draw of the jitter generator `seed` (xorshift: jitter needs
/// spread, not cryptographic randomness), advanced in one atomic step, so
/// that retries drawing at once each get a draw of their own.
fn next_jitter(seed: &AtomicU64) -> u64 {
    let step = |mut x: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let previous = seed
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |x| Some(step(x)))
        .unwrap_or_else(|x| x);
    step(previous)
}

fn classify_transport_error(e: ureq::Error) -> Attempt {
    use ureq::Timeout as T;
    // Before anything is sent, and never retried (not a connection failure).
    if let Some(tls) = crate::transport::tls::tls_failure(&e) {
        return Attempt::NotSent(tls);
    }
    match e {
        ureq::Error::Timeout(T::Resolve | T::Connect) => Attempt::NotSent(Error::new(
            ErrorKind::Timeout,
            format!("timed out connecting ({e})"),
        )),
        ureq::Error::Timeout(_) => {
            Attempt::MaybeSent(Error::new(ErrorKind::Timeout, format!("timed out ({e})")))
        }
        ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => Attempt::NotSent(Error::new(
            ErrorKind::Connection,
            format!("could not connect ({e})"),
        )),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            Attempt::NotSent(Error::new(
                ErrorKind::Connection,
                format!("the connection was refused ({io})"),
            ))
        }
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
            Attempt::MaybeSent(Error::new(ErrorKind::Timeout, format!("timed out ({io})")))
        }
        ureq::Error::Io(io) => Attempt::MaybeSent(Error::new(
            ErrorKind::Connection,
            format!("the connection broke before an answer came ({io})"),
        )),
        ureq::Error::BodyExceedsLimit(n) => Attempt::MaybeSent(Error::new(
            ErrorKind::ResponseTooLarge,
            format!("the response is larger than {n} bytes"),
        )),
        ureq::Error::Protocol(_) | ureq::Error::LargeResponseHeader(..) => {
            Attempt::MaybeSent(Error::new(
                ErrorKind::Decode,
                format!("the answer is not valid HTTP ({e})"),
            ))
        }
        ureq::Error::BadUri(_) | ureq::Error::Http(_) => Attempt::NotSent(Error::configuration(
            "the request URL is not valid (check the base URL)",
        )),
        other => Attempt::MaybeSent(Error::new(
            ErrorKind::Connection,
            format!("the request failed ({other})"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_by_status_idempotency_and_how_far_it_got() {
        use Delivery::{Answered, MaybeSent, NotSent};
        use Verdict::{Final, Retryable, Succeeded};
        // (how it ended, may it be sent again (idempotent or allowed), verdict)
        let table = [
            (Answered(200), false, Succeeded),
            (Answered(201), true, Succeeded),
            (Answered(204), false, Succeeded),
            (Answered(299), false, Succeeded),
            (Answered(304), true, Final),
            (Answered(400), true, Final),
            (Answered(401), true, Final),
            (Answered(404), true, Final),
            (Answered(409), true, Final),
            // Not served: retried whatever the method.
            (Answered(429), false, Retryable),
            (Answered(429), true, Retryable),
            (Answered(500), true, Retryable),
            (Answered(500), false, Final),
            (Answered(501), true, Final),
            (Answered(502), true, Retryable),
            (Answered(502), false, Final),
            (Answered(503), true, Retryable),
            (Answered(503), false, Final),
            (Answered(504), true, Retryable),
            (Answered(504), false, Final),
            (Answered(505), true, Final),
            // Nothing left: retried whatever the method, when connecting failed.
            (NotSent(ErrorKind::Connection), false, Retryable),
            (NotSent(ErrorKind::Timeout), false, Retryable),
            (NotSent(ErrorKind::Connection), true, Retryable),
            (NotSent(ErrorKind::Tls), true, Final),
            (NotSent(ErrorKind::Configuration), true, Final),
            (NotSent(ErrorKind::Validation), true, Final),
            // Maybe sent: only when sending twice is harmless.
            (MaybeSent, true, Retryable),
            (MaybeSent, false, Final),
        ];
        for (delivery, may_resend, verdict) in table {
            assert_eq!(
                classify(delivery, may_resend),
                verdict,
                "{delivery:?}, may resend: {may_resend}"
            );
        }
    }

    #[test]
    fn decide_retry_by_retries_left_the_servers_wait_and_the_longest_wait() {
        let ms = Duration::from_millis;
        let policy = RetryPolicy {
            max_retries: 2,
            max_wait: ms(1000),
        };
        // (retryable, attempt, server's wait, decision), the backoff being 250 ms.
        let table = [
            (false, 1, None, None),
            (false, 1, Some(ms(10)), None),
            (true, 1, None, Some(ms(250))),
            (true, 2, None, Some(ms(250))),
            // Two retries made: the third attempt is the last.
            (true, 3, None, None),
            (true, 3, Some(ms(10)), None),
            // The server's wait wins over the backoff, also when shorter.
            (true, 1, Some(ms(10)), Some(ms(10))),
            (true, 1, Some(ms(0)), Some(ms(0))),
            (true, 1, Some(ms(1000)), Some(ms(1000))),
            // Longer than the client waits: the call ends with the error.
            (true, 1, Some(ms(1001)), None),
        ];
        for (retryable, attempt, server_wait, decision) in table {
            let drawn = std::cell::Cell::new(false);
            let backoff = || {
                drawn.set(true);
                ms(250)
            };
            assert_eq!(
                decide_retry(retryable, attempt, policy, server_wait, backoff),
                decision,
                "retryable {retryable}, attempt {attempt}, server's wait {server_wait:?}"
            );
            // The jitter is drawn only for a wait the server did not give.
            assert_eq!(
                drawn.get(),
                retryable && attempt <= 2 && server_wait.is_none(),
                "attempt {attempt}, {server_wait:?}"
            );
        }
        let none_left = RetryPolicy {
            max_retries: 0,
            ..policy
        };
        assert_eq!(decide_retry(true, 1, none_left, None, || ms(1)), None);
        let over = RetryPolicy {
            max_wait: ms(100),
            ..policy
        };
        assert_eq!(decide_retry(true, 1, over, None, || ms(250)), None);
    }

    #[test]
    fn concurrent_draws_of_the_jitter_each_advance_the_generator() {
        // Each draw advances the generator one step, whichever thread takes it:
        // after N draws it is N steps on. Read, then written, two threads
        // drawing at once draw the same value and advance it once.
        const THREADS: usize = 2;
        const DRAWS: usize = 1_000_000;
        let start = seed();
        let generator = AtomicU64::new(start);
        let barrier = std::sync::Barrier::new(THREADS);
        std::thread::scope(|s| {
            for _ in 0..THREADS {
                s.spawn(|| {
                    barrier.wait();
                    for _ in 0..DRAWS {
                        next_jitter(&generator);
                    }
                });
            }
        });
        let alone = AtomicU64::new(start);
        let mut last = start;
        for _ in 0..THREADS * DRAWS {
            last = next_jitter(&alone);
        }
        assert_eq!(generator.load(Ordering::Relaxed), last, "draws were lost");
    }
}
