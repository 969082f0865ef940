//! One rate budget per private key across processes and hosts, kept in Redis
//! (cargo feature `redis`).
//!
//! # Design
//!
//! Every request start is one call of a Lua script (one round trip), which
//! reads Redis's own clock (`TIME`, never a client's), keeps the start times of
//! the key's last `limit` requests in a capped list (newest first), and admits
//! a start only when the oldest of those `limit` starts has left the window:
//! so at most `limit` starts fall in any rolling window, counted across every
//! process and host. The limit and window carry the same reserve and jitter
//! margin as the in-process budget. A denied start gets the exact wait back;
//! the caller sleeps it (plus a little jitter) and tries again, while the other
//! callers of its process wait on a local gate instead of polling Redis: one
//! caller per process asks Redis at a time until a start is admitted.
//!
//! A 429 anywhere sets the hold key to the end of the `Retry-After` (or the
//! window) on Redis's clock; the same script refuses every start until then.
//!
//! Keys are `{prefix}:{<hash>}:starts` and `{prefix}:{<hash>}:hold`, where
//! `<hash>` is the first 128 bits of SHA-256 of the private key: the key
//! itself never reaches Redis, and the braces are a Redis Cluster hash tag, so
//! both keys of a budget live in one slot. Both expire together when idle
//! (see [`ACQUIRE`] for why together). Older versions kept the hold as a
//! `:block` key whose expiry was the hold: a process of an older version shares
//! the count with newer ones, but not their 429 holds.
//!
//! # When Redis fails
//!
//! A failed or slow call (connect, read and write timeouts, 500 ms by default)
//! opens a circuit breaker: for the next [`RedisBudget::breaker_cooldown`] (5 s)
//! no call goes to Redis, and then one caller tries it again. Meanwhile the
//! [`OnRedisError`] policy applies: the in-process budget at `limit ÷
//! expected_processes` (the default), a typed error, or no limit. A script
//! cache emptied by a Redis restart (`NOSCRIPT`) is reloaded on the fly.
//!
//! A round trip's I/O (a connect, Sentinel's questions or a cluster's
//! redirects included, and the script) ends within the connect and I/O
//! timeouts together. A failure makes every pooled connection made before it
//! stale (closed, never reused: after a failover they all point at the dead
//! primary), so one probe after one cooldown finds the new primary whatever
//! the number of threads; a caller waiting for a slot of the local fallback
//! stops waiting when the cooldown ends, to try Redis first. A pooled
//! connection found closed (Redis's `timeout`, a proxy's idle limit) is no
//! failure: the round trip is made once more on a new connection. Every start
//! admitted through Redis is noted in the fallback too, and with it at least
//! the process's share of every process's starts Redis counted (stamped as late
//! as they can have been), so a fall back goes on from the window as Redis last
//! counted it, not from this process's starts alone (processes that had shared
//! the window unevenly would admit their whole shares beside it); the fallback
//! also waits out a time Redis said the budget was spent until. The first round
//! trip back enters the fallback's starts of the window into Redis before it
//! admits anything — once for each expected process, since the others fell back
//! as long and count locally until they come back and enter their own (counting
//! them twice then holds the key at most one window). One caller carries them;
//! the others of the process wait for its round trip, and a start Redis
//! admitted while the fallback admitted others is not used (Redis's count did
//! not hold them). A process that loses Redis alone, while the others reach
//! it, can spend its share beside their whole count until it is back: the
//! policy bounds each process, not what processes it cannot see spend.
//!
//! # Connections
//!
//! The budgets of every key on one Redis URL share a process's connections to
//! it (up to 16, opened as concurrency needs them, one connect at a time): no
//! lock is held across I/O, a caller waiting for a connection gives up at its
//! call's deadline or cancel, and a failure opens the breaker for every
//! waiting caller at once. [`Client::rate_limit_state`](crate::Client::rate_limit_state)
//! does no I/O: it shows what the last round trip learned. After `fork()` the
//! child opens connections of its own, and the parent's sockets are pointed
//! at `/dev/null` in it (on Unix): the client makes each socket itself (see
//! [`connection`]), so it knows their numbers, and touches no other; a
//! cluster's node connections too, which the redis crate's cluster client makes
//! through [`redis::cluster::Connect`]. The three deployments (one server,
//! Cluster, Sentinel) are in [`deployment`].

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use once_cell::sync::Lazy;
use sha2::{Digest, Sha256};

use crate::budget::ratelimit::{
    Budget, BudgetBackend, RateLimitConfig, RateLimitState, WhenLimited,
};
use crate::cancel::{self, CancelToken};
use crate::error::{Error, ErrorKind, Result};
use crate::secrets::{passwords_of, redacted_url, scrub};
use crate::time::{check_duration, instant_after};
use crate::transport::fork::ForkLocal;

mod connection;
mod deployment;
use deployment::{Deployment, Pooled};

/// What the client does while the shared budget in Redis cannot be reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OnRedisError {
    /// Count in this process alone, at the limit ÷ [`RedisBudget::expected_processes`] (default).
    #[default]
    LocalFallback,
    /// Refuse to send: calls fail with [`ErrorKind::BudgetUnavailable`].
    FailClosed,
    /// Send without counting (the service's 429s still hold every caller off).
    FailOpen,
}

impl OnRedisError {
    /// The stable name: `local_fallback`, `fail_closed` or `fail_open`.
    pub fn name(self) -> &'static str {
        match self {
            OnRedisError::LocalFallback => "local_fallback",
            OnRedisError::FailClosed => "fail_closed",
            OnRedisError::FailOpen => "fail_open",
        }
    }

    /// The policy called `name`.
    pub fn from_name(name: &str) -> Option<OnRedisError> {
        [
            OnRedisError::LocalFallback,
            OnRedisError::FailClosed,
            OnRedisError::FailOpen,
        ]
        .into_iter()
        .find(|p| p.name() == name)
    }
}

/// Where and how the key's budget is shared: a Redis deployment reached by URL.
///
/// # Deployments
///
/// The URL names one of three:
/// - **one server**: `redis://[[user]:password@]host[:port][/db]`, `rediss://…`
///   for TLS, `redis+unix:///path?pass=…`;
/// - **Redis Cluster**: `redis+cluster://[[user]:password@]host:port[,host:port…]`
///   (`rediss+cluster://` for TLS): seed nodes, from which the redis crate's
///   cluster client learns the slots. Both keys share one slot, so an acquire
///   stays one EVALSHA, sent to the slot's primary; `MOVED` and `ASK` (a slot
///   being resharded) are followed there and never reach a caller. A primary
///   that fails fails the round trip: the circuit breaker and the [`OnRedisError`] policy hold until a
///   fresh cluster connection finds the promoted replica. Up to 16 connections
///   per node, as for one server (each pooled cluster connection holds one to
///   each node it has used).
/// - **Sentinel**: `redis+sentinel://[[user]:password@]host[:port][,host[:port]…]/service[/db]`
///   (default port 26379; `rediss+sentinel://` for TLS to the sentinels and the
///   primary; `?sentinel_password=…[&sentinel_username=…]` when the sentinels
///   need their own credentials). Each new connection asks the sentinels in
///   order for the service's primary and checks that it says it is one (`ROLE`);
///   after a failover the old primary's refusals (or silence) fail the round
///   trip, and the next connection asks the sentinels again.
///
/// # Redis permissions
///
/// With Redis ACLs (Redis 6 and later check every command a script runs), the
/// user needs this, on the data nodes (one line; `>secret` is its password):
///
/// ```text
/// ACL SETUSER roomchat on >secret ~roomchat:* +evalsha +script|load +ping +time +get +set +lpush +ltrim +llen +lindex +pexpire
/// ```
///
/// (`~roomchat:*` is the default [`RedisBudget::key_prefix`]). On a cluster add
/// `+cluster|slots +asking`; behind Sentinel add `+role`; with a database other
/// than 0 in the URL add `+select`. On the sentinels (when they use ACLs), a
/// user with `+sentinel|get-master-addr-by-name +ping +auth +hello`. A refusal
/// (`NOPERM`) fails the round trip with an error that says so.
///
/// ```no_run
/// use roomchat::{Client, OnRedisError, RedisBudget};
/// let client = Client::builder("sk_live_…")
///     .base_url("https://api.example.com")
///     .redis_budget(RedisBudget::new("redis://:password@10.0.0.5:6379/0")
///         .on_error(OnRedisError::LocalFallback)
///         .expected_processes(8))
///     .build()?;
/// // A Redis Cluster, from three of its nodes:
/// let budget = RedisBudget::new("redis+cluster://:password@10.0.0.5:6379,10.0.0.6:6379,10.0.0.7:6379");
/// // The primary that three sentinels name for the service `budget`:
/// let budget = RedisBudget::new(
///     "redis+sentinel://:password@10.0.1.5,10.0.1.6,10.0.1.7/budget?sentinel_password=other",
/// );
/// # Ok::<(), roomchat::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct RedisBudget {
    url: String,
    key_prefix: String,
    on_error: OnRedisError,
    expected_processes: u32,
    connect_timeout: Duration,
    io_timeout: Duration,
    breaker_cooldown: Duration,
}

impl fmt::Debug for RedisBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisBudget")
            .field("url", &redacted_url(&self.url))
            .field("key_prefix", &self.key_prefix)
            .field("on_error", &self.on_error)
            .field("expected_processes", &self.expected_processes)
            .field("connect_timeout", &self.connect_timeout)
            .field("io_timeout", &self.io_timeout)
            .field("breaker_cooldown", &self.breaker_cooldown)
            .finish()
    }
}

/// Default connect, read and write timeout of the Redis connection: 500 ms.
pub const DEFAULT_REDIS_TIMEOUT: Duration = Duration::from_millis(500);
/// Default time without Redis after a failure, before one caller tries it again: 5 s.
pub const DEFAULT_BREAKER_COOLDOWN: Duration = Duration::from_secs(5);

impl RedisBudget {
    /// The budget shared through the Redis deployment at `url`: one server
    /// (`redis://[:password@]host[:port][/db]`, `rediss://` for TLS), a Redis Cluster
    /// (`redis+cluster://[:password@]host:port[,host:port…]`) or the primary that
    /// sentinels name (`redis+sentinel://[:password@]host[:port][,…]/service[/db]`); see
    /// [`RedisBudget`] for every form. Defaults: prefix `roomchat`, [`OnRedisError::LocalFallback`] with 4
    /// expected processes, 500 ms timeouts, a 5 s breaker.
    pub fn new(url: impl Into<String>) -> RedisBudget {
        RedisBudget {
            url: url.into(),
            key_prefix: "roomchat".into(),
            on_error: OnRedisError::default(),
            expected_processes: 4,
            connect_timeout: DEFAULT_REDIS_TIMEOUT,
            io_timeout: DEFAULT_REDIS_TIMEOUT,
            breaker_cooldown: DEFAULT_BREAKER_COOLDOWN,
        }
    }

    /// The prefix of the budget's Redis keys (default `roomchat`).
    pub fn key_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.key_prefix = prefix.into();
        self
    }

    /// What to do while Redis cannot be reached (default [`OnRedisError::LocalFallback`]).
    pub fn on_error(mut self, policy: OnRedisError) -> Self {
        self.on_error = policy;
        self
    }

    /// How many processes share the key, for [`OnRedisError::LocalFallback`]: each
    /// then allows itself the limit divided by this (default 4).
    pub fn expected_processes(mut self, processes: u32) -> Self {
        self.expected_processes = processes;
        self
    }

    /// Connect timeout (default [`DEFAULT_REDIS_TIMEOUT`]).
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Read and write timeout of each round trip (default [`DEFAULT_REDIS_TIMEOUT`]).
    pub fn io_timeout(mut self, timeout: Duration) -> Self {
        self.io_timeout = timeout;
        self
    }

    /// How long Redis is left alone after a failure (default [`DEFAULT_BREAKER_COOLDOWN`]).
    pub fn breaker_cooldown(mut self, cooldown: Duration) -> Self {
        self.breaker_cooldown = cooldown;
        self
    }

    /// The policy while Redis cannot be reached.
    pub fn policy(&self) -> OnRedisError {
        self.on_error
    }

    /// The URL with its password (and user name) shown as `REDACTED`: what to show users.
    pub fn redacted_url(&self) -> String {
        redacted_url(&self.url)
    }

    /// Whether Redis is reached over TLS (`rediss://`, `valkeys://`,
    /// `rediss+cluster://`, `rediss+sentinel://`).
    pub(crate) fn over_tls(&self) -> bool {
        deployment::over_tls(&self.url)
    }

    fn validate(&self) -> Result<()> {
        if self.expected_processes == 0 {
            return Err(Error::configuration(
                "expected_processes must be at least 1",
            ));
        }
        if self.connect_timeout.is_zero() || self.io_timeout.is_zero() {
            return Err(Error::configuration(
                "the Redis timeouts must be greater than zero",
            ));
        }
        check_duration("the Redis connect timeout", self.connect_timeout)?;
        check_duration("the Redis I/O timeout", self.io_timeout)?;
        check_duration("the Redis breaker cooldown", self.breaker_cooldown)?;
        if self.key_prefix.is_empty() || self.key_prefix.contains(['{', '}']) {
            return Err(Error::configuration(
                "the Redis key prefix must be non-empty and hold no braces",
            ));
        }
        Ok(())
    }
}

// ---- scripts ---------------------------------------------------------------------------

/// One start: `{admitted, value_us, used, blocked_ms}`: admitted (`1`, Redis's
/// time in µs) or not (`0`, the wait in µs), the starts in the window (with
/// this one, when admitted), and the 429 hold's remaining ms (0: none).
/// KEYS: starts list, hold key. ARGV: limit, window (µs), idle expiry (ms),
/// and optionally the number of starts admitted by the local fallback that
/// Redis does not know of, how many times each counts, then each one's age
/// (µs), merged in first.
///
/// The hold key holds the Redis time (µs) until which every start is held off
/// (0 or past: none), and lives as long as the starts list: on Redis Cluster, a
/// script whose keys are all present (or all absent) while its slot migrates is
/// run or redirected (`ASK`), where one with a key on each side would be refused
/// (`TRYAGAIN`) for as long as the migration lasts.
const ACQUIRE: &str = r#"
if redis.replicate_commands then pcall(redis.replicate_commands) end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local held_until = tonumber(redis.call('GET', KEYS[2])) or 0
-- A process back from its local fallback first enters what it admitted there
-- (ARGV[4] starts, each ARGV[5] times, ARGV[6...]: their ages in µs), in
-- order, the newest first.
local merged = tonumber(ARGV[4] or '0')
if merged > 0 then
  local copies = tonumber(ARGV[5])
  local starts = {}
  local listed = redis.call('LLEN', KEYS[1])
  for i = 0, listed - 1 do
    starts[#starts + 1] = tonumber(redis.call('LINDEX', KEYS[1], i))
  end
  for i = 1, merged do
    local age = tonumber(ARGV[5 + i])
    if age < window then
      for _ = 1, copies do starts[#starts + 1] = now - age end
    end
  end
  table.sort(starts, function(a, b) return a > b end)
  -- The new list goes in front of the old one, which is then cut off: the key
  -- is never emptied on the way (see below).
  local keep = math.min(#starts, limit)
  for i = keep, 1, -1 do
    redis.call('LPUSH', KEYS[1], string.format('%.0f', starts[i]))
  end
  if keep > 0 then
    redis.call('LTRIM', KEYS[1], 0, keep - 1)
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    redis.call('SET', KEYS[2], string.format('%.0f', held_until), 'PX', ARGV[3])
  end
end
-- The list is newest first: the starts still in the window are a prefix of it,
-- found by bisection. Those that left it stay until an admitted start cuts
-- them off: a script that emptied the list (removing the key) and pushed to it
-- again is refused on a Redis Cluster node whose slot is migrating away
-- ("non local key"), while the key being there lets it run.
local listed = redis.call('LLEN', KEYS[1])
local used, past = 0, listed
while used < past do
  local mid = math.floor((used + past) / 2)
  if now - tonumber(redis.call('LINDEX', KEYS[1], mid)) < window then used = mid + 1 else past = mid end
end
if held_until > now then
  local held = held_until - now
  return {0, held, used, math.floor((held + 999) / 1000)}
end
if used >= limit then
  -- The start that frees a slot is the limit-th newest (the oldest in the
  -- window, unless a client with a larger limit left a longer list).
  local freeing = tonumber(redis.call('LINDEX', KEYS[1], limit - 1))
  return {0, freeing + window - now, used, 0}
end
redis.call('LPUSH', KEYS[1], string.format('%.0f', now))
-- This start and those still in the window (fewer than the limit).
redis.call('LTRIM', KEYS[1], 0, used)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], string.format('%.0f', held_until), 'PX', ARGV[3])
return {1, now, used + 1, 0}
"#;

/// Holds every start off for ARGV[1] ms from now on Redis's clock (never
/// shortens a longer hold); the key lives at least the idle expiry (ARGV[2] ms).
/// KEYS: hold key.
const BLOCK: &str = r#"
if redis.replicate_commands then pcall(redis.replicate_commands) end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local held_until = math.max(now + tonumber(ARGV[1]) * 1000, tonumber(redis.call('GET', KEYS[1])) or 0)
local keep = math.max(math.floor((held_until - now) / 1000) + 1, tonumber(ARGV[2]))
redis.call('SET', KEYS[1], string.format('%.0f', held_until), 'PX', keep)
return 1
"#;

/// The scripts with their SHA-1s, made with each shared budget rather than
/// once per process: a process-wide lazy that one thread was making when
/// another forked stays "being made" forever in the child, whose first acquire
/// then hangs (seen in the fork tests).
struct Scripts {
    acquire: redis::Script,
    block: redis::Script,
}

impl Scripts {
    fn new() -> Scripts {
        Scripts {
            acquire: redis::Script::new(ACQUIRE),
            block: redis::Script::new(BLOCK),
        }
    }
}

// ---- the link to one Redis server ------------------------------------------------------

/// Connections a process keeps open to one Redis server at most.
const MAX_CONNECTIONS: usize = 16;

/// One Redis server as this process reaches it, shared by the budgets of every
/// key that use it: its connections, and the circuit breaker (a Redis that is
/// down is down for every key).
struct Link {
    /// Its entry in the registry.
    id: String,
    deployment: Deployment,
    settings: RedisBudget,
    /// The URL's passwords, scrubbed from every message that quotes Redis's errors.
    passwords: Vec<String>,
    process: ForkLocal<LinkState>,
}

#[derive(Default)]
struct LinkState {
    slots: Mutex<Slots>,
    /// Told when a connection comes back, a connect ends, or the breaker opens.
    changed: Condvar,
}

#[derive(Default)]
struct Slots {
    /// Idle connections, each with the generation it was made in.
    idle: Vec<(Pooled, u64)>,
    /// Connections open, idle or in use.
    open: usize,
    /// Bumped by every failure: a connection made before it is stale (after a
    /// failover every one of them points at the dead primary, or was closed by
    /// Redis), and is closed when it comes back or is found idle, never reused.
    generation: u64,
    /// One caller is connecting; the others wait for it rather than connect too.
    connecting: bool,
    /// Redis failed: no call goes to it before this; then one caller probes it.
    breaker_until: Option<Instant>,
    /// A caller is probing Redis after the cooldown; the others still fall back.
    probing: bool,
    /// The last round trip failed (and no later one succeeded).
    degraded: bool,
    /// What the last failure said (scrubbed), for the errors of the breaker's cooldown.
    last_failure: Option<String>,
}

/// Why a round trip did not happen or failed.
enum LinkError {
    /// The caller's token was cancelled while it waited for a connection.
    Cancelled(Error),
    /// Redis failed, the breaker is open, or no connection came before the deadline.
    Unavailable(Error),
}

impl Slots {
    fn open_breaker(&mut self, cooldown: Duration, why: &Error) {
        self.breaker_until = Some(instant_after(Instant::now(), cooldown));
        self.probing = false;
        self.degraded = true;
        self.last_failure = Some(why.message().to_owned());
        self.stale_all();
    }

    /// Every connection made so far is stale: the idle ones are closed now,
    /// those in use as they come back.
    fn stale_all(&mut self) {
        self.generation += 1;
        self.open -= self.idle.len();
        self.idle.clear();
    }
}

/// Whether `e` is Redis refusing a command to the URL's user (its ACL).
fn refused_by_acl(e: &redis::RedisError) -> bool {
    if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoPerm) {
        return true;
    }
    let text = e.to_string();
    text.contains("NOPERM")
        || text.contains("can't run this command")
        || text.contains("no permissions to")
}

/// Whether `e` is a connection found closed (reset, end of file, broken
/// pipe): what an idle connection that Redis or a proxy closed says at once,
/// never a slow or refusing Redis.
fn found_closed(e: &redis::RedisError) -> bool {
    !e.is_timeout() && e.is_connection_dropped()
}

impl Link {
    fn process(&self) -> &LinkState {
        self.process.get(LinkState::default)
    }

    fn unavailable(&self, why: &str) -> LinkError {
        LinkError::Unavailable(Error::new(
            ErrorKind::BudgetUnavailable,
            format!(
                "the shared rate budget in Redis ({}) {why}",
                redacted_url(&self.settings.url)
            ),
        ))
    }

    /// The breaker's error: what the failure that opened it said.
    fn still_failing(&self, slots: &Slots, now: &str) -> LinkError {
        match &slots.last_failure {
            Some(why) => LinkError::Unavailable(Error::new(
                ErrorKind::BudgetUnavailable,
                format!("{why} ({now})"),
            )),
            None => self.unavailable(now),
        }
    }

    /// What the last failure said, while Redis is skipped.
    fn last_failure(&self) -> Option<String> {
        lock(&self.process().slots).last_failure.clone()
    }

    /// Whether callers skip Redis for now (the breaker is open, or another
    /// caller is probing it after the cooldown).
    fn skipped(&self) -> bool {
        let slots = lock(&self.process().slots);
        slots.probing || slots.breaker_until.is_some_and(|t| t > Instant::now())
    }

    /// When Redis may be tried again: the end of the breaker's cooldown, or
    /// soon while another caller probes it (`None`: the breaker is shut).
    fn breaker_until(&self) -> Option<Instant> {
        let slots = lock(&self.process().slots);
        if slots.probing {
            return Some(instant_after(Instant::now(), Duration::from_millis(50)));
        }
        slots.breaker_until
    }

    /// Whether the last round trip failed.
    fn degraded(&self) -> bool {
        lock(&self.process().slots).degraded
    }

    /// One round trip on a pooled connection (made when none is idle, by one
    /// caller at a time). No lock is held during I/O. Waiting for a connection
    /// ends at `deadline`, at a cancel (seen within [`cancel::CANCEL_CHECK_INTERVAL`]),
    /// or when the breaker opens, for every waiter at once.
    ///
    /// The I/O itself (a connect, with Sentinel's questions or a cluster's
    /// redirects, and the round trip) ends within the connect and I/O timeouts
    /// together, whatever happens. A connection taken from the idle pool that
    /// turns out closed (Redis's `timeout`, a proxy's idle limit) is not a
    /// failure of Redis: the round trip is made once more on a new connection,
    /// and only a failure of that one opens the breaker.
    fn round_trip<T>(
        &self,
        cancel: Option<&CancelToken>,
        deadline: Instant,
        mut f: impl FnMut(&mut Pooled) -> redis::RedisResult<T>,
    ) -> std::result::Result<T, LinkError> {
        let state = self.process();
        let mut retried = false;
        let mut io_deadline = None;
        loop {
            let mut slots = lock(&state.slots);
            let (mut pooled, generation, from_idle) = loop {
                if let Some(token) = cancel {
                    token.check().map_err(LinkError::Cancelled)?;
                }
                let now = Instant::now();
                if slots.probing && !retried {
                    return Err(self.still_failing(&slots, "being probed after a failure"));
                }
                // After the cooldown, the caller that goes to Redis probes it for
                // everyone. It is marked only as it goes (never while it waits, which
                // may end without a round trip), and the round trip's outcome clears it.
                let probe = match slots.breaker_until {
                    Some(t) if t > now => {
                        return Err(self.still_failing(&slots, "the breaker is open"))
                    }
                    Some(_) => true,
                    None => false,
                };
                if !retried {
                    if let Some((pooled, generation)) = slots.idle.pop() {
                        slots.probing = probe;
                        break (pooled, generation, true);
                    }
                }
                if !slots.connecting && slots.open < MAX_CONNECTIONS {
                    slots.probing = probe;
                    slots.connecting = true;
                    let generation = slots.generation;
                    drop(slots);
                    let until = *io_deadline.get_or_insert_with(|| self.io_deadline());
                    let made = connection::until(until, || {
                        self.connect().map_err(|e| self.deployment.explain(e))
                    });
                    slots = lock(&state.slots);
                    slots.connecting = false;
                    state.changed.notify_all();
                    match made {
                        Ok(pooled) => {
                            slots.open += 1;
                            break (pooled, generation, false);
                        }
                        Err(e) => {
                            let error = self.failed(&e);
                            slots.open_breaker(self.settings.breaker_cooldown, &error);
                            return Err(LinkError::Unavailable(error));
                        }
                    }
                }
                if now >= deadline {
                    return Err(
                        self.unavailable("had no free connection before the call's deadline")
                    );
                }
                let wait = (deadline - now).min(cancel::CANCEL_CHECK_INTERVAL);
                slots = state
                    .changed
                    .wait_timeout(slots, wait)
                    .map(|(g, _)| g)
                    .unwrap_or_else(|p| p.into_inner().0);
            };
            drop(slots);
            let until = *io_deadline.get_or_insert_with(|| self.io_deadline());
            let outcome = connection::until(until, || {
                // Explained (which may ask a seed) before the slots are locked again.
                self.deployment
                    .within(|| f(&mut pooled))
                    .map_err(|e| self.deployment.explain(e))
            });
            let mut slots = lock(&state.slots);
            match outcome {
                Ok(value) => {
                    if generation == slots.generation {
                        slots.idle.push((pooled, generation));
                    } else {
                        slots.open -= 1;
                    }
                    slots.breaker_until = None;
                    slots.probing = false;
                    slots.degraded = false;
                    slots.last_failure = None;
                    state.changed.notify_one();
                    drop(slots);
                    return Ok(value);
                }
                Err(e) => {
                    slots.open -= 1;
                    if from_idle && !retried && found_closed(&e) && Instant::now() < until {
                        // Closed while idle: so may be every connection as old;
                        // once more on a new one.
                        if generation == slots.generation {
                            slots.stale_all();
                        }
                        retried = true;
                        state.changed.notify_all();
                        drop(slots);
                        drop(pooled);
                        continue;
                    }
                    let error = self.failed(&e);
                    slots.open_breaker(self.settings.breaker_cooldown, &error);
                    state.changed.notify_all();
                    drop(slots);
                    drop(pooled);
                    return Err(LinkError::Unavailable(error));
                }
            }
        }
    }

    /// When the I/O of a round trip starting now must be over: one connect and one round trip.
    fn io_deadline(&self) -> Instant {
        instant_after(
            Instant::now(),
            self.settings.connect_timeout + self.settings.io_timeout,
        )
    }

    fn failed(&self, e: &redis::RedisError) -> Error {
        let said = scrub(&e.to_string(), &self.passwords);
        let url = redacted_url(&self.settings.url);
        let message = if refused_by_acl(e) {
            format!(
                "the shared rate budget in Redis ({url}) was refused by Redis for lack of permission \
                 (the Redis user's ACL does not allow a command the budget runs; see the ACL line in \
                 the guide): {said}"
            )
        } else {
            format!("the shared rate budget in Redis ({url}) failed: {said}")
        };
        Error::new(ErrorKind::BudgetUnavailable, message)
    }

    fn connect(&self) -> redis::RedisResult<Pooled> {
        self.deployment
            .connect(self.settings.connect_timeout, self.settings.io_timeout)
    }
}

// ---- the shared budget -------------------------------------------------------------------

/// Shared budgets by (URL, key hash, prefix, limits), and the links to each
/// Redis server by URL and settings. Held across `fork()` by the fork handlers.
///
/// Both hold their entries weakly: a budget goes with its last client, and a
/// link (with its pooled connections) with the last budget using it; each
/// takes its entry out as it goes. `BTreeMap`s, so that nothing in them is
/// "possibly lost" to a leak checker at exit.
#[derive(Default)]
pub(crate) struct Registry {
    budgets: BTreeMap<String, Weak<SharedBudget>>,
    links: BTreeMap<String, Weak<Link>>,
}

impl Registry {
    /// Takes out the entry `id` of `map` if what it names is gone.
    fn forget<T>(map: &mut BTreeMap<String, Weak<T>>, id: &str) {
        if map.get(id).is_some_and(|w| w.strong_count() == 0) {
            map.remove(id);
        }
    }
}

impl Drop for SharedBudget {
    fn drop(&mut self) {
        Registry::forget(&mut registry().budgets, &self.id);
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        Registry::forget(&mut registry().links, &self.id);
    }
}

static REGISTRY: Lazy<Mutex<Registry>> = Lazy::new(Default::default);

pub(crate) fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// A key's budget in Redis, as one process uses it.
pub(crate) struct SharedBudget {
    /// Its entry in the registry.
    id: String,
    link: Arc<Link>,
    starts_key: String,
    hold_key: String,
    settings: RedisBudget,
    config: RateLimitConfig,
    /// The in-process budget of [`OnRedisError::LocalFallback`].
    fallback: Arc<Budget>,
    /// What each process keeps of its own: the gate, and what it last learned.
    process: ForkLocal<ProcessState>,
    scripts: Scripts,
}

#[derive(Default)]
struct ProcessState {
    gate: Mutex<Gate>,
    gate_changed: Condvar,
    /// What the last round trip said of the budget (for the state, without I/O).
    known: Mutex<Option<Known>>,
    /// Starts the local fallback admitted that Redis has not been told of:
    /// the first round trip back enters them into the shared record before
    /// it admits anything, so the window Redis counts holds them.
    unmerged: Mutex<Unmerged>,
    /// Told when a round trip that carried the fallback's starts ends.
    merge_ended: Condvar,
}

/// The local fallback's starts that Redis has not been told of, and what a
/// round trip needs to know to tell whether Redis counted them when it admitted.
#[derive(Default)]
struct Unmerged {
    starts: Vec<Instant>,
    /// A round trip is carrying the starts that were here to Redis: until it
    /// ends, no other caller of the process asks Redis (an admission on a
    /// count without them would spend what the fallback already spent).
    carried: bool,
    /// Starts the fallback has admitted so far. A round trip admitted by Redis
    /// counts only if none was admitted while it was under way: Redis's count
    /// did not hold that one (a round trip that began before a failure and
    /// ended after the fallback admitted, seen under load, spent the window
    /// twice).
    admitted: u64,
}

/// The budget as the last round trip found it.
#[derive(Clone, Copy)]
struct Known {
    at: Instant,
    used: u32,
    next_free_at: Option<Instant>,
    blocked_until: Option<Instant>,
}

#[derive(Default)]
struct Gate {
    /// No caller of this process asks Redis before this (after a denial).
    not_before: Option<Instant>,
    /// One caller is asking Redis on everyone's behalf; the others wait for it.
    polling: bool,
    /// Jitter state.
    seed: u64,
}

impl Gate {
    /// Up to 5% of `wait` plus up to 2 ms, so that processes do not all come back at once.
    fn jitter(&mut self, wait: Duration) -> Duration {
        if self.seed == 0 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos() as u64;
            self.seed = (nanos ^ 0x9E37_79B9_7F4A_7C15) | 1;
        }
        self.seed ^= self.seed << 13;
        self.seed ^= self.seed >> 7;
        self.seed ^= self.seed << 17;
        let spread = wait / 20 + Duration::from_millis(2);
        spread.mul_f64((self.seed % 1000) as f64 / 1000.0)
    }
}

/// What one round trip said.
enum Verdict {
    Admitted,
    Wait(Duration),
}

/// How a caller goes on after the gate.
enum Route {
    Redis { polling: bool },
    Fallback,
}

impl SharedBudget {
    /// The shared budget of `private_key` under `config`, made on first use in this process.
    /// A `rediss://` Redis is trusted by `roots`: the client's own roots.
    pub(crate) fn for_key(
        private_key: &str,
        config: RateLimitConfig,
        settings: &RedisBudget,
        roots: &ureq::tls::RootCerts,
    ) -> Result<Arc<SharedBudget>> {
        settings.validate()?;
        let hash = key_hash(private_key);
        // The roots a TLS link trusts are part of its identity (and so of the
        // budget's): a client never reaches Redis through another's trust.
        let over_tls = settings.over_tls();
        let roots = if over_tls {
            crate::transport::tls::trusted_ders(roots)
        } else {
            Vec::new()
        };
        let roots_id = if over_tls {
            roots_hash(&roots)
        } else {
            String::new()
        };
        let id = format!(
            "{}\0{hash}\0{}\0{}\0{:?}\0{:?}\0{roots_id}",
            settings.url, settings.key_prefix, config.requests, config.window, config.reserve
        );
        // Dropped after the registry's lock: a budget's drop takes it.
        let mut _replaced = None;
        let mut registry = registry();
        if let Some(existing) = registry.budgets.get(&id).and_then(Weak::upgrade) {
            if existing.settings == *settings && existing.config == config {
                return Ok(existing);
            }
            _replaced = Some(existing);
        }
        let link_id = format!(
            "{}\0{:?}\0{:?}\0{:?}\0{roots_id}",
            settings.url, settings.connect_timeout, settings.io_timeout, settings.breaker_cooldown
        );
        let link = match registry.links.get(&link_id).and_then(Weak::upgrade) {
            Some(link) => link,
            None => {
                let passwords = passwords_of(&settings.url);
                let not_valid = |why: String| {
                    Error::configuration(format!(
                        "the Redis URL {} {why}",
                        redacted_url(&settings.url)
                    ))
                };
                let deployment = Deployment::new(
                    &settings.url,
                    &roots,
                    settings.connect_timeout,
                    settings.io_timeout,
                )
                .map_err(|why| not_valid(scrub(&why, &passwords)))?;
                let link = Arc::new(Link {
                    id: link_id.clone(),
                    deployment,
                    settings: settings.clone(),
                    passwords,
                    process: ForkLocal::new(LinkState::default()),
                });
                registry.links.insert(link_id, Arc::downgrade(&link));
                link
            }
        };
        let mut fallback_config = config;
        fallback_config.requests = (config.requests / settings.expected_processes).max(1);
        fallback_config.reserve = 0;
        let fallback_key = format!(
            "{private_key}\0redis-fallback:{}",
            settings.expected_processes
        );
        let budget = Arc::new(SharedBudget {
            id: id.clone(),
            link,
            starts_key: format!("{}:{{{hash}}}:starts", settings.key_prefix),
            hold_key: format!("{}:{{{hash}}}:hold", settings.key_prefix),
            settings: settings.clone(),
            config,
            fallback: Budget::for_key(&fallback_key, fallback_config),
            process: ForkLocal::new(ProcessState::default()),
            scripts: Scripts::new(),
        });
        registry.budgets.insert(id, Arc::downgrade(&budget));
        Ok(budget)
    }

    fn process(&self) -> &ProcessState {
        self.process.get(ProcessState::default)
    }

    fn window(&self) -> Duration {
        self.config.window + self.config.jitter_allowance
    }

    /// How long the budget's keys live unused (ms): a window and a second.
    fn idle_expiry_ms(&self) -> u64 {
        self.window().as_millis() as u64 + 1000
    }

    /// Takes a start, as [`Budget::acquire`] does; `on_degraded` is told when
    /// Redis fails. Waiting for Redis ends at `deadline`.
    pub(crate) fn acquire(
        &self,
        cancel: Option<&CancelToken>,
        deadline: Instant,
        mut on_wait: impl FnMut(Duration),
        mut on_degraded: impl FnMut(&Error),
    ) -> Result<Instant> {
        let started_waiting = Instant::now();
        let mut announced = false;
        let process = self.process();
        loop {
            let route = self.through_gate(
                process,
                cancel,
                started_waiting,
                &mut announced,
                &mut on_wait,
            )?;
            let polling = match route {
                Route::Fallback => {
                    let why = self.link.last_failure();
                    match self.fall_back(cancel, &mut on_wait, why.as_deref())? {
                        Some(at) => return Ok(at),
                        // The cooldown ended while the fallback was full: Redis first.
                        None => continue,
                    }
                }
                Route::Redis { polling } => polling,
            };
            let taken = self.take_unmerged(process, cancel, deadline);
            let Ok(Some((unmerged, fallback_admitted))) = taken else {
                if polling {
                    lock(&process.gate).polling = false;
                    process.gate_changed.notify_all();
                }
                // Cancelled, or the caller that carried the fallback's starts failed
                // (the breaker is open: this one falls back).
                taken?;
                continue;
            };
            let outcome = self.link.round_trip(cancel, deadline, |connection| {
                let now = Instant::now();
                let ages: Vec<u64> = unmerged
                    .iter()
                    .map(|at| now.saturating_duration_since(*at))
                    .filter(|age| *age < self.window())
                    .map(|age| age.as_micros() as u64)
                    .collect();
                let mut invocation = self.scripts.acquire.prepare_invoke();
                invocation
                    .key(&self.starts_key)
                    .key(&self.hold_key)
                    .arg(self.config.effective_requests())
                    .arg(self.window().as_micros() as u64)
                    .arg(self.idle_expiry_ms());
                if !ages.is_empty() {
                    // The other processes of the key fell back as this one did
                    // (a failed Redis fails them all) and count locally until
                    // each comes back: until they enter their own starts, each
                    // is taken to have admitted what this one did. Counting
                    // them twice after that holds the budget at most one
                    // window; not counting them let the first process back
                    // spend the whole limit while the others still counted
                    // their shares locally.
                    invocation
                        .arg(ages.len())
                        .arg(self.settings.expected_processes);
                    for age in &ages {
                        invocation.arg(*age);
                    }
                }
                let (admitted, value, used, blocked_ms): (i64, i64, i64, i64) =
                    invocation.invoke(connection)?;
                Ok((admitted, value, used, blocked_ms))
            });
            // Whether Redis's count held every start the fallback admitted.
            let counted_all = {
                let mut pending = lock(&process.unmerged);
                if !unmerged.is_empty() {
                    pending.carried = false;
                    if outcome.is_err() {
                        // Told next time.
                        pending.starts.extend(unmerged);
                    }
                    process.merge_ended.notify_all();
                }
                pending.admitted == fallback_admitted
            };
            let mut gate = lock(&process.gate);
            if polling {
                gate.polling = false;
            }
            let outcome = outcome.map(|(admitted, value, used, blocked_ms)| {
                let verdict = if admitted == 1 {
                    Verdict::Admitted
                } else {
                    // A hold in Redis longer than two windows was not written by
                    // this version (its holds are capped): it is asked again then.
                    Verdict::Wait(
                        Duration::from_micros(value.max(0) as u64)
                            .min(self.window().saturating_mul(2)),
                    )
                };
                self.learn(&verdict, used, blocked_ms);
                verdict
            });
            match outcome {
                Ok(Verdict::Admitted) if !counted_all => {
                    // The fallback admitted a start while this round trip was under
                    // way, which Redis did not count when it admitted this one: the
                    // slot Redis gave is left unused (Redis over-counts by one, for
                    // one window), and the start is asked for again, through the
                    // fallback while the breaker is open, else with those starts
                    // entered first.
                    process.gate_changed.notify_all();
                    continue;
                }
                Ok(Verdict::Admitted) => {
                    gate.not_before = None;
                    process.gate_changed.notify_all();
                    drop(gate);
                    // The fallback knows this process's own recent starts, and its
                    // share of every process's: should Redis fail now, it goes on
                    // from them, not from nothing.
                    let now = Instant::now();
                    self.fallback.record(now);
                    self.fallback
                        .record_at_least(now, self.fallback_share_of(&process.known));
                    return Ok(now);
                }
                Ok(Verdict::Wait(wait)) => {
                    self.fallback
                        .record_at_least(Instant::now(), self.fallback_share_of(&process.known));
                    let until = instant_after(Instant::now(), wait + gate.jitter(wait));
                    gate.not_before = Some(gate.not_before.map_or(until, |t| t.max(until)));
                    process.gate_changed.notify_all();
                    self.may_wait(wait, started_waiting)?;
                }
                Err(LinkError::Cancelled(error)) => {
                    process.gate_changed.notify_all();
                    return Err(error);
                }
                Err(LinkError::Unavailable(error)) => {
                    process.gate_changed.notify_all();
                    if self.settings.on_error == OnRedisError::LocalFallback {
                        // The window is taken to be as full now as Redis last counted it
                        // (within two windows): the starts that left it since may have been
                        // taken by other processes this one did not hear of (a failover just
                        // after a window freed: one process had taken the freed starts on
                        // Redis, and the others' fallbacks, counting the window as it was
                        // before, admitted their shares beside them: 68 of 60).
                        let now = Instant::now();
                        let recent = lock(&process.known).is_some_and(|k| {
                            now.saturating_duration_since(k.at) < self.window().saturating_mul(2)
                        });
                        if recent {
                            self.fallback
                                .record_at_least(now, self.fallback_share_of(&process.known));
                        }
                    }
                    let held = self.settings.on_error == OnRedisError::LocalFallback
                        && gate.not_before.is_some_and(|t| t > Instant::now());
                    drop(gate);
                    on_degraded(&error);
                    if held {
                        // Through the gate again: it falls back once what Redis last
                        // said (no slot before a time, a 429's hold) has passed.
                        continue;
                    }
                    match self.fall_back(cancel, &mut on_wait, Some(error.message()))? {
                        Some(at) => return Ok(at),
                        None => continue,
                    }
                }
            }
        }
    }

    /// The fallback's starts for the next round trip to carry to Redis (taken:
    /// no other caller carries them too), and how many starts the fallback
    /// has admitted so far. While another caller carries them, waits for its
    /// round trip to end (bounded by the connect and I/O timeouts); `None`
    /// when it failed (the breaker is open: the caller falls back).
    fn take_unmerged(
        &self,
        process: &ProcessState,
        cancel: Option<&CancelToken>,
        deadline: Instant,
    ) -> Result<Option<(Vec<Instant>, u64)>> {
        let mut pending = lock(&process.unmerged);
        let mut waited = false;
        while pending.carried {
            waited = true;
            if let Some(token) = cancel {
                token.check()?;
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::new(
                    ErrorKind::BudgetUnavailable,
                    format!(
                        "the shared rate budget in Redis ({}) was still being told of the local fallback's starts at the call's deadline",
                        redacted_url(&self.settings.url)
                    ),
                ));
            }
            pending = process
                .merge_ended
                .wait_timeout(pending, (deadline - now).min(cancel::CANCEL_CHECK_INTERVAL))
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
        if waited && self.link.skipped() {
            return Ok(None);
        }
        let starts = std::mem::take(&mut pending.starts);
        pending.carried = !starts.is_empty();
        Ok(Some((starts, pending.admitted)))
    }

    /// This process's share, in the fallback's terms, of the starts Redis
    /// counted in the window at the last round trip (every process's): the
    /// fallback counts at least that many, so that processes falling back
    /// together admit no more than what is left of the window between them,
    /// however unevenly they had shared it (one that had taken few of the
    /// starts did not start from nothing beside the others' full window).
    fn fallback_share_of(&self, known: &Mutex<Option<Known>>) -> usize {
        let used = lock(known).map_or(0, |k| k.used);
        let share = (self.config.requests / self.settings.expected_processes).max(1);
        let limit = self.config.effective_requests().max(1);
        (u64::from(used) * u64::from(share)).div_ceil(u64::from(limit)) as usize
    }

    /// Records what a round trip said, for [`SharedBudget::snapshot`].
    fn learn(&self, verdict: &Verdict, used: i64, blocked_ms: i64) {
        let now = Instant::now();
        let blocked = Duration::from_millis(blocked_ms.max(0) as u64).min(self.window() * 2);
        *lock(&self.process().known) = Some(Known {
            at: now,
            used: used.clamp(0, i64::from(u32::MAX)) as u32,
            next_free_at: match verdict {
                Verdict::Admitted => None,
                Verdict::Wait(wait) => Some(instant_after(now, *wait)),
            },
            blocked_until: (!blocked.is_zero()).then(|| instant_after(now, blocked)),
        });
    }

    /// Waits at the process's gate; decides whether to ask Redis or fall back.
    fn through_gate(
        &self,
        process: &ProcessState,
        cancel: Option<&CancelToken>,
        started_waiting: Instant,
        announced: &mut bool,
        on_wait: &mut impl FnMut(Duration),
    ) -> Result<Route> {
        let mut gate = lock(&process.gate);
        loop {
            if let Some(token) = cancel {
                token.check()?;
            }
            // While Redis is skipped the policy answers; the local fallback not
            // before what Redis last said has passed: its budget spent until a time
            // (every process's starts fill it, not only this one's, which the
            // fallback counts), or a 429's hold.
            let skipped = self.link.skipped();
            if skipped && self.settings.on_error != OnRedisError::LocalFallback {
                return Ok(Route::Fallback);
            }
            let now = Instant::now();
            let wait = match gate.not_before {
                Some(t) if t > now => t - now,
                _ if gate.polling && !skipped => Duration::from_millis(50),
                _ => Duration::ZERO,
            };
            if wait.is_zero() && skipped {
                return Ok(Route::Fallback);
            }
            if wait.is_zero() {
                // After a denial, one caller asks for everyone.
                let polling = gate.not_before.is_some();
                if polling {
                    gate.polling = true;
                }
                return Ok(Route::Redis { polling });
            }
            if gate.not_before.is_some_and(|t| t > now) {
                self.may_wait(wait, started_waiting)?;
            }
            if !*announced {
                *announced = true;
                drop(gate);
                on_wait(wait);
                gate = lock(&process.gate);
                continue;
            }
            // Slices, so that a cancel (or the breaker opening) is seen within the check interval.
            gate = process
                .gate_changed
                .wait_timeout(gate, wait.min(cancel::CANCEL_CHECK_INTERVAL))
                .map(|(g, _)| g)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// `Err(RateLimited)` when waiting `wait` more goes past what the policy allows.
    fn may_wait(&self, wait: Duration, started_waiting: Instant) -> Result<()> {
        let allowed = match self.config.when_limited {
            WhenLimited::Fail => Duration::ZERO,
            WhenLimited::Wait(max) => max.saturating_sub(started_waiting.elapsed()),
        };
        if wait > allowed {
            return Err(Error::new(
                ErrorKind::RateLimited,
                format!(
                    "the shared rate limit of {} requests per {:?} is spent; the next slot frees in {:.3}s",
                    self.config.requests,
                    self.config.window,
                    wait.as_secs_f64()
                ),
            )
            .with_retry_after(Some(wait)));
        }
        Ok(())
    }

    /// The policy's answer while Redis fails; `why` is what its last failure
    /// said. `Ok(None)`: the local fallback was full until the breaker's
    /// cooldown ended, when Redis is tried first (so a process is back on
    /// Redis within a cooldown, however long its fallback's waits).
    fn fall_back(
        &self,
        cancel: Option<&CancelToken>,
        on_wait: &mut impl FnMut(Duration),
        why: Option<&str>,
    ) -> Result<Option<Instant>> {
        match self.settings.on_error {
            OnRedisError::LocalFallback => {
                let until = self.link.breaker_until();
                let Some(at) = self.fallback.acquire_until(cancel, &mut *on_wait, until)? else {
                    return Ok(None);
                };
                let mut unmerged = lock(&self.process().unmerged);
                let window = self.window();
                unmerged
                    .starts
                    .retain(|t| at.saturating_duration_since(*t) < window);
                unmerged.starts.push(at);
                unmerged.admitted += 1;
                Ok(Some(at))
            }
            OnRedisError::FailOpen => Ok(Some(Instant::now())),
            OnRedisError::FailClosed => Err(Error::new(
                ErrorKind::BudgetUnavailable,
                match why {
                    Some(why) => format!("{why}; the client fails closed"),
                    None => format!(
                        "the shared rate budget in Redis ({}) cannot be used, and the client fails closed",
                        redacted_url(&self.settings.url)
                    ),
                },
            )),
        }
    }

    /// Holds every start of every process off for `duration` (after a 429).
    pub(crate) fn block_for(&self, duration: Duration) {
        let process = self.process();
        let until = instant_after(Instant::now(), duration);
        {
            let mut gate = lock(&process.gate);
            gate.not_before = Some(gate.not_before.map_or(until, |t| t.max(until)));
            process.gate_changed.notify_all();
        }
        {
            let mut known = lock(&process.known);
            let k = known.get_or_insert(Known {
                at: Instant::now(),
                used: 0,
                next_free_at: None,
                blocked_until: None,
            });
            k.blocked_until = Some(k.blocked_until.map_or(until, |b| b.max(until)));
        }
        let deadline = instant_after(
            Instant::now(),
            self.settings.connect_timeout + self.settings.io_timeout,
        );
        let shared = self.link.round_trip(None, deadline, |connection| {
            self.scripts
                .block
                .key(&self.hold_key)
                .arg(duration.as_millis().max(1) as u64)
                .arg(self.idle_expiry_ms())
                .invoke::<i64>(connection)
        });
        if shared.is_err() {
            // Redis is away: at least this process's fallback is held off too.
            self.fallback.block_for(duration);
        }
    }

    /// The service's window (what a 429 without `Retry-After` holds callers off for at most).
    pub(crate) fn service_window(&self) -> Duration {
        self.config.window
    }

    /// Where the shared budget stands as this process last learned it (no
    /// I/O: the figures are those of the last round trip, aged by the clock),
    /// or the fallback's while Redis is away.
    pub(crate) fn snapshot(&self) -> RateLimitState {
        let limit = self.config.effective_requests();
        if self.link.degraded() {
            let mut state = self.fallback.snapshot();
            state.backend = BudgetBackend::Redis;
            state.degraded = true;
            return state;
        }
        let now = Instant::now();
        let known = *lock(&self.process().known);
        let (used, next_free_at, blocked_until) = match known {
            Some(k) => {
                // Every start it counted has left the window since.
                let used = if now.duration_since(k.at) >= self.window() {
                    0
                } else {
                    k.used
                };
                (used, k.next_free_at, k.blocked_until)
            }
            None => (0, None, None),
        };
        let blocked_for = blocked_until
            .map(|b| b.saturating_duration_since(now))
            .filter(|d| !d.is_zero());
        let next_free_in = next_free_at
            .map(|t| t.saturating_duration_since(now))
            .unwrap_or_default()
            .max(blocked_for.unwrap_or_default());
        RateLimitState {
            limit,
            window: self.window(),
            used: used.min(limit),
            remaining: if blocked_for.is_some() || !next_free_in.is_zero() {
                0
            } else {
                limit.saturating_sub(used)
            },
            next_free_in,
            blocked_for,
            backend: BudgetBackend::Redis,
            degraded: false,
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// SHA-256 of the certificates, in hex: tells one set of roots from another.
fn roots_hash(ders: &[&[u8]]) -> String {
    let mut hasher = Sha256::new();
    for der in ders {
        hasher.update((der.len() as u64).to_be_bytes());
        hasher.update(der);
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The first 128 bits of SHA-256 of the key, in hex: names the budget without revealing the key.
fn key_hash(private_key: &str) -> String {
    let digest = Sha256::new()
        .chain_update(b"roomchat-budget-v1\0")
        .chain_update(private_key.as_bytes())
        .finalize();
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_show_no_password() {
        for url in [
            "redis://:s3cret@h:1",
            "redis+unix:///r.sock?pass=s3cret",
            "redis+unix:///r.sock?password=s3cret",
            "unix:///r.sock?user=me&pass=s3cret",
        ] {
            let shown = format!("{:?}", RedisBudget::new(url));
            assert!(!shown.contains("s3cret"), "{shown}");
            assert!(!RedisBudget::new(url).redacted_url().contains("s3cret"));
        }
    }

    #[test]
    fn keys_hash_the_private_key_into_one_slot() {
        let hash = key_hash("sk_live_secret");
        assert_eq!(hash.len(), 32);
        assert!(!hash.contains("secret"));
        assert_ne!(hash, key_hash("sk_live_secreu"));
        assert_eq!(
            OnRedisError::from_name("fail_open"),
            Some(OnRedisError::FailOpen)
        );
    }
}
