//! The calls: JavaScript arguments to core's parameters, core's results to JSON text.

use roomchat::wire::Operation;
use roomchat::{
    CallOptions, Client, ClientBuilder, Error, OnRedisError, Proxy, RateLimitConfig, RawAuth,
    RawRequest, RedisBudget, TlsRoots, WhenLimited,
};
use serde_json::Value;

use crate::args::{self, invalid, Args};
use crate::{records, shape};

/// Runs a declared operation with the JSON text of its params object (wire
/// names, the method's own arguments included) through core's one send path:
/// the params checked against the declaration (a params object in an older
/// Node shape made core's JSON params first, [`records::params_of`]), the answer
/// as the JSON text of what the method returns ([`records::answer`]). Runs on a
/// pool thread: parsing and validation happen here too, so the event loop only
/// hands over a string.
pub fn run_operation(client: &Client, op: Operation, params: &str) -> Result<String, Error> {
    let mut value = args::parse(op.name(), params)?;
    if let Some(shape) = records::params_of(op) {
        value = args::core_params(op.name(), value, shape)?;
    }
    client.call_declared_with(op, &value, |response| records::answer(op, response))
}

/// `run_operation`, with the answer's status and headers beside the result.
pub fn run_operation_with_response(
    client: &Client,
    op: Operation,
    params: &str,
) -> Result<String, Error> {
    let answer = client.with_response(|c| run_operation(c, op, params))?;
    Ok(shape::with_response(&answer.value, &answer.meta))
}

/// Runs the raw request (`rawRequest`: the escape hatch, not a declared
/// operation) with the JSON text of its params; on a pool thread, as `run_operation`.
pub fn run_raw(client: &Client, params: &str) -> Result<String, Error> {
    let value = args::parse(RAW, params)?;
    let request = raw_request(&Args::new(RAW, &value)?)?;
    client
        .raw_request(&request)
        .map(|r| shape::raw_response(&r))
}

/// `run_raw`, with the answer's status and headers beside the result.
pub fn run_raw_with_response(client: &Client, params: &str) -> Result<String, Error> {
    let answer = client.with_response(|c| run_raw(c, params))?;
    Ok(shape::with_response(&answer.value, &answer.meta))
}

const RAW: &str = "rawRequest";

/// The per-call settings a call or `withOptions` takes: the JSON of
/// `{timeoutMs?, connectTimeoutMs?, maxRetries?, maxRetryWaitMs?}` (the JS layer
/// keeps `signal` and `withResponse`).
pub fn call_options(what: &str, settings: &str) -> Result<CallOptions, Error> {
    let value = args::parse(what, settings)?;
    let p = Args::new(what, &value)?;
    p.only(&CALL_OPTIONS)?;
    let mut options = CallOptions::new();
    if let Some(t) = p.millis("timeoutMs")? {
        options = options.timeout(t);
    }
    if let Some(t) = p.millis("connectTimeoutMs")? {
        options = options.connect_timeout(t);
    }
    if let Some(n) = p.whole("maxRetries", 0, 100)? {
        options = options.max_retries(n as u32);
    }
    if let Some(t) = p.millis("maxRetryWaitMs")? {
        options = options.max_retry_wait(t);
    }
    Ok(options)
}

/// The settings a view or one call may change (see [`call_options`]).
pub const CALL_OPTIONS: [&str; 4] = [
    "timeoutMs",
    "connectTimeoutMs",
    "maxRetries",
    "maxRetryWaitMs",
];

fn raw_request(p: &Args<'_>) -> Result<RawRequest, Error> {
    p.only(&["method", "path", "query", "body", "auth"])?;
    let auth = match p.string("auth")?.as_deref() {
        None | Some("private") => RawAuth::PrivateKey,
        Some("public") => RawAuth::PublicKey,
        Some("none") => RawAuth::None,
        Some(_) => return Err(p.bad("auth", "\"private\", \"public\" or \"none\"")),
    };
    let mut request =
        RawRequest::new(p.required_string("method")?, p.required_string("path")?).auth(auth);
    let must = "an object of strings or a list of [name, value] string pairs";
    match p.get("query") {
        None => {}
        Some(Value::Object(map)) => {
            for (name, value) in map {
                match value {
                    Value::String(v) => request.query.push((name.clone(), v.clone())),
                    Value::Number(n) => request.query.push((name.clone(), n.to_string())),
                    Value::Bool(b) => request.query.push((name.clone(), b.to_string())),
                    _ => return Err(p.bad("query", must)),
                }
            }
        }
        Some(Value::Array(pairs)) => {
            for pair in pairs {
                match pair.as_array().map(Vec::as_slice) {
                    Some([Value::String(n), Value::String(v)]) => {
                        request.query.push((n.clone(), v.clone()))
                    }
                    _ => return Err(p.bad("query", must)),
                }
            }
        }
        Some(_) => return Err(p.bad("query", must)),
    }
    request.body = p.get("body").cloned();
    Ok(request)
}

/// Options of `new Client(...)` (everything but `logger` and the
/// OpenTelemetry providers, which stay in JS).
pub const CLIENT_OPTIONS: [&str; 23] = [
    "privateKey",
    "baseUrl",
    "chatUrl",
    "publicKey",
    "timeoutMs",
    "connectTimeoutMs",
    "maxRetries",
    "retryNonIdempotent",
    "baseBackoffMs",
    "maxRetryWaitMs",
    "rateLimit",
    "appName",
    "maxResponseBytes",
    "allowInsecureHttp",
    "ca",
    "tlsRoots",
    "proxy",
    "gzip",
    "propagateTraceContext",
    // Handled by the JS layer (never sent here); listed so that the message names every option.
    "logger",
    "openTelemetry",
    "tracerProvider",
    "meterProvider",
];

/// The `rateLimit` options that only mean something with `redisUrl`.
const REDIS_ONLY: [&str; 6] = [
    "onRedisError",
    "expectedProcesses",
    "redisKeyPrefix",
    "redisConnectTimeoutMs",
    "redisTimeoutMs",
    "redisBreakerCooldownMs",
];

/// A client builder from the options' JSON text; `from_env` starts from the environment.
pub fn builder(options: &str, from_env: bool) -> Result<ClientBuilder, Error> {
    let what = if from_env {
        "Client.fromEnv"
    } else {
        "new Client"
    };
    let value = args::parse(what, options)?;
    let p = Args::new(what, &value)?;
    p.only(&CLIENT_OPTIONS)?;
    let mut b = if from_env {
        if p.has("privateKey") || p.has("baseUrl") {
            return Err(invalid(
                "Client.fromEnv: privateKey and baseUrl come from ROOMCHAT_PRIVATE_KEY and ROOMCHAT_BASE_URL",
            ));
        }
        ClientBuilder::from_env()?
    } else {
        let key = p.required_string("privateKey")?;
        let base_url = p.required_string("baseUrl")?;
        Client::builder(key).base_url(base_url)
    };
    if let Some(url) = p.string("chatUrl")? {
        b = b.chat_url(url);
    }
    if let Some(key) = p.string("publicKey")? {
        b = b.public_key(key);
    }
    if let Some(t) = p.millis("timeoutMs")? {
        b = b.timeout(t);
    }
    if let Some(t) = p.millis("connectTimeoutMs")? {
        b = b.connect_timeout(t);
    }
    if let Some(n) = p.whole("maxRetries", 0, 100)? {
        b = b.max_retries(n as u32);
    }
    if let Some(yes) = p.boolean("retryNonIdempotent")? {
        b = b.retry_non_idempotent(yes);
    }
    if let Some(t) = p.millis("baseBackoffMs")? {
        b = b.base_backoff(t);
    }
    if let Some(t) = p.millis("maxRetryWaitMs")? {
        b = b.max_retry_wait(t);
    }
    if let Some(name) = p.string("appName")? {
        b = b.app_name(name);
    }
    // A JS number is exact up to MAX_SAFE_INTEGER (8 PiB: no cap in practice).
    if let Some(n) = p.whole("maxResponseBytes", 1, args::MAX_SAFE_INTEGER)? {
        b = b.max_response_bytes(n);
    }
    if let Some(yes) = p.boolean("allowInsecureHttp")? {
        b = b.allow_insecure_http(yes);
    }
    match p.get("ca") {
        None | Some(Value::Null) => {}
        Some(Value::String(pem)) => b = b.add_root_certificates_pem(pem),
        Some(Value::Array(pems)) if pems.iter().all(Value::is_string) => {
            for pem in pems.iter().filter_map(Value::as_str) {
                b = b.add_root_certificates_pem(pem);
            }
        }
        Some(_) => return Err(p.bad("ca", "PEM text or a Buffer of it, or an array of them")),
    }
    // Node's own convention for extra roots, as `node` itself reads it (only
    // when the client can make a TLS connection, as SSL_CERT_FILE).
    b = b.add_root_certificates_from_env("NODE_EXTRA_CA_CERTS");
    if let Some(yes) = p.boolean("gzip")? {
        b = b.gzip(yes);
    }
    if let Some(yes) = p.boolean("propagateTraceContext")? {
        b = b.propagate_trace_context(yes);
    }
    if let Some(roots) = p.string("tlsRoots")? {
        let roots = TlsRoots::from_name(&roots)
            .ok_or_else(|| p.bad("tlsRoots", "\"webpki\" or \"system\""))?;
        b = b.tls_roots(roots);
    }
    // `null` is meaningful here: no proxy, whatever the environment says.
    match p.raw("proxy") {
        None => {}
        Some(Value::Null) => b = b.proxy(Proxy::None),
        Some(Value::String(url)) => b = b.proxy(Proxy::url(url.as_str())),
        Some(_) => return Err(p.bad("proxy", "a proxy URL, or null for none")),
    }
    if let Some(limit) = p.get("rateLimit") {
        let what = format!("{what}: rateLimit");
        let r = Args::new(&what, limit)?;
        let known: Vec<&str> = [
            "requests",
            "windowMs",
            "whenLimited",
            "maxWaitMs",
            "redisUrl",
        ]
        .into_iter()
        .chain(REDIS_ONLY)
        .collect();
        r.only(&known)?;
        let requests = r
            .whole("requests", 1, u64::from(u32::MAX))?
            .ok_or_else(|| r.bad("requests", "given"))?;
        let window = r
            .millis("windowMs")?
            .ok_or_else(|| r.bad("windowMs", "given"))?;
        let mut config = RateLimitConfig::new(requests as u32, window);
        match r.string("whenLimited")?.as_deref() {
            None | Some("wait") => {
                if let Some(max) = r.millis("maxWaitMs")? {
                    config.when_limited = WhenLimited::Wait(max);
                }
            }
            Some("fail") => {
                if r.has("maxWaitMs") {
                    return Err(r.bad("maxWaitMs", "left out when whenLimited is \"fail\""));
                }
                config = config.fail_fast();
            }
            Some(_) => return Err(r.bad("whenLimited", "\"wait\" or \"fail\"")),
        }
        b = b.rate_limit(config);
        match r.string("redisUrl")? {
            Some(url) => {
                let mut redis = RedisBudget::new(url);
                if let Some(policy) = r.string("onRedisError")? {
                    redis = redis.on_error(OnRedisError::from_name(&policy).ok_or_else(|| {
                        r.bad(
                            "onRedisError",
                            "\"local_fallback\", \"fail_closed\" or \"fail_open\"",
                        )
                    })?);
                }
                if let Some(n) = r.whole("expectedProcesses", 1, u64::from(u32::MAX))? {
                    redis = redis.expected_processes(n as u32);
                }
                if let Some(prefix) = r.string("redisKeyPrefix")? {
                    redis = redis.key_prefix(prefix);
                }
                if let Some(t) = r.millis("redisConnectTimeoutMs")? {
                    redis = redis.connect_timeout(t);
                }
                if let Some(t) = r.millis("redisTimeoutMs")? {
                    redis = redis.io_timeout(t);
                }
                if let Some(t) = r.millis("redisBreakerCooldownMs")? {
                    redis = redis.breaker_cooldown(t);
                }
                b = b.redis_budget(redis);
            }
            None => {
                if let Some(name) = REDIS_ONLY.into_iter().find(|n| r.has(n)) {
                    return Err(r.bad(name, "given only with redisUrl"));
                }
            }
        }
    }
    Ok(b)
}
