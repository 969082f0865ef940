//! The client from flags, environment (`ROOMCHAT_PRIVATE_KEY`, `ROOMCHAT_PUBLIC_KEY`,
//! `ROOMCHAT_BASE_URL`) and the profile file, as the SDK takes them.
//!
//! Precedence: a flag, then the environment, then the profile
//! (`$XDG_CONFIG_HOME/roomchat/config.toml`, table `[<profile>]`, `default`
//! unless `--profile` or `ROOMCHAT_PROFILE` names another). Keys are never
//! flags (a command line is visible to every user of the machine): they come
//! from the environment or the profile. As ssh does for its files, the profile
//! file, and every folder above it, must be writable by its owner alone (root
//! or the user), whatever it holds; one that holds a key must also be readable
//! by its owner alone.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches};
use roomchat::{Error, ErrorKind};
use serde::Deserialize;

use crate::error::CliError;

mod file_permissions;

/// The environment variable of the private key.
pub const ENV_PRIVATE_KEY: &str = "ROOMCHAT_PRIVATE_KEY";
/// The environment variable of the public key.
pub const ENV_PUBLIC_KEY: &str = "ROOMCHAT_PUBLIC_KEY";
/// The environment variable of the base URL.
pub const ENV_BASE_URL: &str = "ROOMCHAT_BASE_URL";

const HEADING: &str = "Client options";

/// The flags every command takes (profile, base URL, client options, rate
/// budget, dry run): global, so they may come before or after the command.
pub fn global_args() -> Vec<Arg> {
    let value = |id: &'static str, help: &'static str| {
        Arg::new(id)
            .long(id)
            .global(true)
            .help_heading(HEADING)
            .help(help)
    };
    vec![
        value("profile", "The profile of the config file to use [env: ROOMCHAT_PROFILE] (default: default)")
            .value_name("NAME"),
        value("base-url", "The service's base URL [env: ROOMCHAT_BASE_URL]").value_name("URL"),
        value("timeout", "Overall timeout of one attempt, in seconds")
            .value_name("SECS")
            .value_parser(clap::value_parser!(f64)),
        value("connect-timeout", "Connect timeout, in seconds")
            .value_name("SECS")
            .value_parser(clap::value_parser!(f64)),
        value("max-retries", "Retries after the first attempt (0: none)")
            .value_name("N")
            .value_parser(clap::value_parser!(u32)),
        value(
            "max-retry-wait",
            "The longest wait before a retry or for a slot of the rate budget, in seconds",
        )
            .value_name("SECS")
            .value_parser(clap::value_parser!(f64)),
        value(
            "retry-non-idempotent",
            "Also retry calls whose retry class is `never` (a create could happen twice)",
        )
        .action(ArgAction::SetTrue),
        value("base-backoff", "The first retry's backoff, in seconds (doubles each retry; default 0.25)")
            .value_name("SECS")
            .value_parser(clap::value_parser!(f64)),
        value("max-response-bytes", "The largest answer accepted, in bytes")
            .value_name("N")
            .value_parser(clap::value_parser!(u64)),
        value("ca-file", "Also trust the CA certificates of this PEM file").value_name("FILE"),
        value("tls-roots", "The roots https:// trusts: webpki (bundled, the default) or system")
            .value_name("ROOTS")
            .value_parser(["webpki", "system"]),
        value("proxy", "The proxy: a URL, or `none` (default: from the environment, as curl)")
            .value_name("URL"),
        value("no-compression", "Do not ask for gzip-compressed answers").action(ArgAction::SetTrue),
        value("allow-insecure-http", "Allow sending the key over plain http:// to a remote host")
            .action(ArgAction::SetTrue),
        value("rate-limit", "Requests per window this command may send (default: the service's 600)")
            .value_name("N")
            .value_parser(clap::value_parser!(u32).range(1..)),
        value("rate-window", "The rate limit's window, in seconds (default 60)")
            .value_name("SECS")
            .value_parser(clap::value_parser!(u64).range(1..)),
        value(
            "redis-url",
            "Share the key's rate budget through this Redis (redis://, rediss://, redis+sentinel://) [env: ROOMCHAT_REDIS_URL]",
        )
        .value_name("URL"),
        value(
            "redis-on-error",
            "When the Redis budget cannot be reached: local_fallback (default), fail_closed or fail_open",
        )
        .value_name("POLICY")
        .value_parser(["local_fallback", "fail_closed", "fail_open"]),
        value("app-name", "An application name closing the User-Agent").value_name("NAME"),
        value(
            "raw-csv-cells",
            "Write CSV cells as the service sent them: without it, a cell beginning with = + - @, a tab or a line break gets a leading ' so that no spreadsheet runs it as a formula",
        )
        .action(ArgAction::SetTrue),
        value(
            "dry-run",
            "Print the request (method, URL with the key REDACTED, body) and its curl; send nothing",
        )
        .action(ArgAction::SetTrue),
    ]
}

/// Whether `--raw-csv-cells` was given: CSV cells are written as they are,
/// formulas included (see [`crate::safe_text::csv_cell`]).
pub fn raw_csv_cells(matches: &ArgMatches) -> bool {
    switch(matches, "raw-csv-cells")
}

/// One profile of the config file: every setting is optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Profile {
    base_url: Option<String>,
    private_key: Option<String>,
    public_key: Option<String>,
    chat_url: Option<String>,
    timeout: Option<f64>,
    connect_timeout: Option<f64>,
    max_retries: Option<u32>,
    max_retry_wait: Option<f64>,
    retry_non_idempotent: Option<bool>,
    base_backoff: Option<f64>,
    max_response_bytes: Option<u64>,
    ca_file: Option<String>,
    tls_roots: Option<String>,
    proxy: Option<String>,
    compression: Option<bool>,
    allow_insecure_http: Option<bool>,
    rate_limit: Option<u32>,
    rate_window: Option<u64>,
    redis_url: Option<String>,
    redis_on_error: Option<String>,
    app_name: Option<String>,
}

/// The config file's path: `$XDG_CONFIG_HOME/roomchat/config.toml`, else
/// `$HOME/.config/roomchat/config.toml`.
pub fn config_path() -> Option<PathBuf> {
    let base = env("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|home| Path::new(&home).join(".config")))?;
    Some(base.join("roomchat").join("config.toml"))
}

/// A set environment variable; an empty one counts as unset.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

pub(crate) fn config_error(message: String) -> CliError {
    CliError::Sdk(Error::new(ErrorKind::Configuration, message))
}

/// The profile the flags and environment name, from the config file; the
/// default profile of a missing file is empty, a named one is an error.
fn profile(matches: &ArgMatches) -> Result<Profile, CliError> {
    let named = matches
        .try_get_one::<String>("profile")
        .ok()
        .flatten()
        .cloned()
        .or_else(|| env("ROOMCHAT_PROFILE"));
    let Some(path) = config_path() else {
        return match named {
            Some(name) => Err(config_error(format!(
                "profile {name:?}: no config file (set XDG_CONFIG_HOME or HOME)"
            ))),
            None => Ok(Profile::default()),
        };
    };
    let io_error = |source| CliError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut file = match std::fs::File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && named.is_none() => {
            return Ok(Profile::default())
        }
        Err(source) => return Err(io_error(source)),
    };
    // Whatever it holds: a file others can write could point the key at their server
    // (base_url, proxy, ca_file). Checked on the file opened, so it cannot be swapped after.
    file_permissions::refuse_if_others_can_write(&path, &file)?;
    let mut text = String::new();
    std::io::Read::read_to_string(&mut file, &mut text).map_err(io_error)?;
    let shown = path.display().to_string();
    let (table, holds_key) = profiles_of(&text, &shown)?;
    if holds_key {
        file_permissions::refuse_if_others_can_read(&path, &file)?;
    }
    profile_of(table, named.as_deref(), &shown)
}

/// The config file's text as its profiles, and whether one of them holds a key (`shown`
/// names the file in errors). A pure function: the fuzz target calls it with any text.
pub(crate) fn profiles_of(text: &str, shown: &str) -> Result<(toml::Table, bool), CliError> {
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| config_error(format!("{shown}: {}", e.message())))?;
    let holds_key = table.values().any(|profile| {
        profile
            .as_table()
            .is_some_and(|p| p.contains_key("private_key") || p.contains_key("public_key"))
    });
    Ok((table, holds_key))
}

/// The profile `named` (`default` when `None`) of the file's profiles.
fn profile_of(
    mut table: toml::Table,
    named: Option<&str>,
    shown: &str,
) -> Result<Profile, CliError> {
    let name = named.unwrap_or("default").to_owned();
    match table.remove(&name) {
        Some(toml::Value::Table(p)) => p.try_into().map_err(|e: toml::de::Error| {
            config_error(format!("{shown}: [{name}]: {}", e.message()))
        }),
        Some(_) => Err(config_error(format!("{shown}: {name} is not a table"))),
        None if name == "default" => Ok(Profile::default()),
        None => Err(config_error(format!("{shown}: no profile [{name}]"))),
    }
}

/// Every profile of a config file's text read as the command line reads one (the fuzz
/// target's entry point): the first error, if any.
pub(crate) fn check_profiles(text: &str) -> Result<(), CliError> {
    let (table, _) = profiles_of(text, "config.toml")?;
    for name in table.keys() {
        profile_of(table.clone(), Some(name), "config.toml")?;
    }
    Ok(())
}

fn flag<'a>(matches: &'a ArgMatches, id: &str) -> Option<&'a String> {
    matches.try_get_one::<String>(id).ok().flatten()
}

fn number<T: Clone + Send + Sync + 'static>(matches: &ArgMatches, id: &str) -> Option<T> {
    matches.try_get_one::<T>(id).ok().flatten().cloned()
}

fn switch(matches: &ArgMatches, id: &str) -> bool {
    matches.try_get_one::<bool>(id).ok().flatten().copied() == Some(true)
}

fn seconds(value: f64, what: &str) -> Result<Duration, CliError> {
    Duration::try_from_secs_f64(value).map_err(|_| {
        CliError::Usage(format!(
            "{what} must be a number of seconds ≥ 0, not {value}"
        ))
    })
}

/// The base URL the flags, environment and profile give, if any.
pub fn base_url(matches: &ArgMatches) -> Result<Option<String>, CliError> {
    Ok(flag(matches, "base-url")
        .cloned()
        .or_else(|| env(ENV_BASE_URL))
        .or(profile(matches)?.base_url))
}

/// The base URL of a dry run: the flags', environment's or profile's, checked
/// as the client checks it (refused as a run would refuse it: a password in it
/// is never shown), or a stand-in when none is given; the proxy checked as the
/// client checks it too.
pub fn dry_run_base_url(matches: &ArgMatches) -> Result<String, CliError> {
    let p = profile(matches)?;
    let insecure = switch(matches, "allow-insecure-http") || p.allow_insecure_http == Some(true);
    let url = match base_url(matches)? {
        Some(url) => roomchat::check_base_url(&url, insecure)?,
        None => "https://BASE_URL".into(),
    };
    // The proxy as a run checks it (issue 51, item 11: `http://p:0` passed a dry run).
    roomchat::check_proxy(&proxy_of(matches, &p), &url, insecure)?;
    Ok(url)
}

/// The proxy of `--proxy` or the profile's `proxy` (`none`: no proxy), else the
/// environment's: what a run's client is given, and a dry run checks.
fn proxy_of(matches: &ArgMatches, p: &Profile) -> roomchat::Proxy {
    match flag(matches, "proxy")
        .cloned()
        .or(p.proxy.clone())
        .as_deref()
    {
        None => roomchat::Proxy::Environment,
        Some("none") => roomchat::Proxy::None,
        Some(url) => roomchat::Proxy::Url(url.to_owned()),
    }
}

/// The longest wait the flag or the profile allows (`--max-retry-wait`,
/// `max_retry_wait`), if any: for a retry, for a slot of the rate budget, and
/// for a long job's pause on the rate limit.
pub fn max_retry_wait(matches: &ArgMatches) -> Result<Option<Duration>, CliError> {
    max_retry_wait_of(matches, &profile(matches)?)
}

fn max_retry_wait_of(matches: &ArgMatches, p: &Profile) -> Result<Option<Duration>, CliError> {
    number::<f64>(matches, "max-retry-wait")
        .or(p.max_retry_wait)
        .map(|t| seconds(t, "--max-retry-wait"))
        .transpose()
}

/// Whether `--dry-run` was given.
pub fn dry_run(matches: &ArgMatches) -> bool {
    switch(matches, "dry-run")
}

/// The client the command's flags, environment and profile describe.
///
/// Errors: no private key, no base URL, a profile file others may read that
/// holds a key, an unreadable CA file, or a setting the SDK refuses.
pub fn client(matches: &ArgMatches) -> Result<roomchat::Client, CliError> {
    let p = profile(matches)?;
    let max_retry_wait = max_retry_wait_of(matches, &p)?;
    let proxy = proxy_of(matches, &p);
    let key = env(ENV_PRIVATE_KEY).or(p.private_key).ok_or_else(|| {
        config_error(format!(
            "no private key: set {ENV_PRIVATE_KEY} or private_key in a profile of the config file"
        ))
    })?;
    let base_url = flag(matches, "base-url")
        .cloned()
        .or_else(|| env(ENV_BASE_URL))
        .or(p.base_url)
        .ok_or_else(|| {
            config_error(format!(
                "no base URL: set {ENV_BASE_URL}, --base-url, or base_url in a profile"
            ))
        })?;
    let mut builder = roomchat::Client::builder(key).base_url(base_url);
    if let Some(public) = env(ENV_PUBLIC_KEY).or(p.public_key) {
        builder = builder.public_key(public);
    }
    if let Some(url) = env("ROOMCHAT_CHAT_URL").or(p.chat_url) {
        builder = builder.chat_url(url);
    }
    if let Some(t) = number::<f64>(matches, "timeout").or(p.timeout) {
        builder = builder.timeout(seconds(t, "--timeout")?);
    }
    if let Some(t) = number::<f64>(matches, "connect-timeout").or(p.connect_timeout) {
        builder = builder.connect_timeout(seconds(t, "--connect-timeout")?);
    }
    if let Some(n) = number::<u32>(matches, "max-retries").or(p.max_retries) {
        builder = builder.max_retries(n);
    }
    if let Some(wait) = max_retry_wait {
        builder = builder.max_retry_wait(wait);
    }
    if switch(matches, "retry-non-idempotent") || p.retry_non_idempotent == Some(true) {
        builder = builder.retry_non_idempotent(true);
    }
    if let Some(t) = number::<f64>(matches, "base-backoff").or(p.base_backoff) {
        builder = builder.base_backoff(seconds(t, "--base-backoff")?);
    }
    if let Some(n) = number::<u64>(matches, "max-response-bytes").or(p.max_response_bytes) {
        builder = builder.max_response_bytes(n);
    }
    match flag(matches, "tls-roots")
        .cloned()
        .or(p.tls_roots)
        .as_deref()
    {
        None | Some("webpki") => {}
        Some("system") => builder = builder.tls_roots(roomchat::TlsRoots::System),
        Some(other) => {
            return Err(config_error(format!(
                "tls_roots must be webpki or system, not {other:?}"
            )))
        }
    }
    if let Some(file) = flag(matches, "ca-file").cloned().or(p.ca_file) {
        let pem = std::fs::read(&file).map_err(|source| CliError::Io { path: file, source })?;
        builder = builder.add_root_certificates_pem(pem);
    }
    builder = builder.proxy(proxy);
    if switch(matches, "no-compression") || p.compression == Some(false) {
        builder = builder.gzip(false);
    }
    if switch(matches, "allow-insecure-http") || p.allow_insecure_http == Some(true) {
        builder = builder.allow_insecure_http(true);
    }
    let requests = number::<u32>(matches, "rate-limit").or(p.rate_limit);
    let window = number::<u64>(matches, "rate-window").or(p.rate_window);
    if requests.is_some() || window.is_some() || max_retry_wait.is_some() {
        let default = roomchat::RateLimitConfig::default();
        let mut rate_limit = roomchat::RateLimitConfig::new(
            requests.unwrap_or(default.requests),
            window.map_or(default.window, Duration::from_secs),
        );
        // --max-retry-wait bounds every wait, the budget's too: a slot further
        // off fails the call with rate_limited instead of a wait of a minute.
        if let Some(wait) = max_retry_wait {
            rate_limit.when_limited = roomchat::WhenLimited::Wait(wait);
        }
        builder = builder.rate_limit(rate_limit);
    }
    if let Some(url) = flag(matches, "redis-url")
        .cloned()
        .or_else(|| env("ROOMCHAT_REDIS_URL"))
        .or(p.redis_url)
    {
        let mut budget = roomchat::RedisBudget::new(url);
        if let Some(name) = flag(matches, "redis-on-error")
            .cloned()
            .or(p.redis_on_error)
        {
            let policy = roomchat::OnRedisError::from_name(&name).ok_or_else(|| {
                config_error(format!(
                    "redis_on_error must be local_fallback, fail_closed or fail_open, not {name:?}"
                ))
            })?;
            budget = budget.on_error(policy);
        }
        builder = builder.redis_budget(budget);
    }
    if let Some(app) = flag(matches, "app-name").cloned().or(p.app_name) {
        builder = builder.app_name(app);
    }
    builder = builder.sdk_identity(format!("roomchat-cli/{}", env!("CARGO_PKG_VERSION")), None);
    Ok(builder.build()?)
}
