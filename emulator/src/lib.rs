//! `roomchat-emulator`: a local, stateful emulator of the chat service's REST API.
//!
//! It serves every endpoint of the service's contract over real HTTP/1.1 on
//! loopback, enforces the rate limit per private key, can mark endpoints as
//! outside the plan, injects faults, and journals what arrived. The contract it
//! implements, and its admin API, are in this crate's `README.md`.
//!
//! ```
//! use roomchat_emulator::{Emulator, EmulatorConfig};
//!
//! let emu = Emulator::start(EmulatorConfig::default()).unwrap();
//! assert!(emu.base_url().starts_with("http://127.0.0.1:"));
//! assert_eq!(emu.chat_url(), format!("{}/chat", emu.base_url()));
//! emu.seed_users(3);
//! // stops when dropped
//! ```
//!
//! Over HTTPS, with a CA made at start that a client is given to trust:
//!
//! ```
//! use roomchat_emulator::{Emulator, EmulatorConfig, EmulatorTls};
//!
//! let emu = Emulator::start(EmulatorConfig {
//!     tls: Some(EmulatorTls::generated()),
//!     ..EmulatorConfig::default()
//! })
//! .unwrap();
//! assert!(emu.base_url().starts_with("https://127.0.0.1:"));
//! let ca = std::fs::read_to_string(emu.ca_file().unwrap()).unwrap();
//! assert_eq!(Some(ca), emu.ca_pem());
//! ```
#![deny(missing_docs)]

pub mod bench;
mod journal;
mod jwt;
#[doc(hidden)]
pub mod offline;
mod server;
mod state;
mod tls;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use state::State;
pub use tls::{ConnectionStats, EmulatorTls, TLS_DEFAULT_NAMES};

/// The most bytes a request's line and headers may take: more is answered 431
/// and the connection closed.
pub const MAX_REQUEST_HEAD_BYTES: usize = server::MAX_HEAD_BYTES;

/// The journal's capacity in [`EmulatorConfig::default`]: 10,000 entries.
pub const JOURNAL_DEFAULT_CAPACITY: usize = journal::DEFAULT_CAPACITY;
/// The largest journal capacity the admin API and the binary accept.
pub const JOURNAL_MAX_CAPACITY: usize = journal::MAX_CAPACITY;
/// The bytes of a request body one journal entry keeps (the start of the body).
pub const JOURNAL_BODY_CAP: usize = journal::BODY_CAP;
/// The bytes of the path, of the query and of the `User-Agent` one journal entry keeps.
pub const JOURNAL_TEXT_CAP: usize = journal::TEXT_CAP;
/// The bytes of request headers (names and values) one journal entry keeps.
pub const JOURNAL_HEADERS_CAP: usize = journal::HEADERS_CAP;

/// How many requests a private key may make in a rolling window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests accepted per window.
    pub requests: u32,
    /// The rolling window's length.
    pub window: Duration,
}

impl Default for RateLimit {
    /// The service's limit: 600 requests per 60 seconds (section 8).
    fn default() -> Self {
        RateLimit {
            requests: 600,
            window: Duration::from_secs(60),
        }
    }
}

impl std::str::FromStr for RateLimit {
    type Err = String;

    /// Parses `N/<duration>`: `600/60s`, `20/1s`, `100/500ms`, `600/1m`.
    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || format!("rate limit {text:?} is not of the form N/<duration>, e.g. 600/60s");
        let (count, window) = text.split_once('/').ok_or_else(bad)?;
        let requests: u32 = count.trim().parse().map_err(|_| bad())?;
        let window = humantime::parse_duration(window.trim()).map_err(|_| bad())?;
        if requests == 0 || window.is_zero() {
            return Err(format!(
                "rate limit {text:?} must allow at least one request per non-zero window"
            ));
        }
        Ok(RateLimit { requests, window })
    }
}

/// How to start an emulator. `Default` gives loopback, any free port, fixed test keys,
/// and the service's own rate limit.
#[derive(Debug, Clone)]
pub struct EmulatorConfig {
    /// Address to bind (default `127.0.0.1`).
    pub host: String,
    /// Port to bind; 0 picks a free one (default).
    pub port: u16,
    /// The account's private key, checked against `auth`.
    pub private_key: String,
    /// The account's public key, checked against `publicKey`.
    pub public_key: String,
    /// The rate limit per private key.
    pub rate_limit: RateLimit,
    /// Send `X-RateLimit-*` headers, and `Retry-After` on 429 (the service's
    /// public pages document none, so off by default).
    pub rate_limit_headers: bool,
    /// Users to create at start.
    pub seed_users: usize,
    /// Request bodies larger than this are answered 413.
    pub max_body_bytes: usize,
    /// How long a client may take to finish its TLS handshake, or to send a
    /// request's line and headers, before the connection is closed, and then to
    /// send its body before it is answered 408 and closed. Default 10 s.
    pub read_timeout: Duration,
    /// How long a keep-alive connection may wait for its next request (its first
    /// one too, once connected) before it is closed; every answer says so
    /// (`Keep-Alive: timeout=N`). `None` (the default): `read_timeout`. A short one
    /// (the test network's 1 s) closes idle connections soon without cutting off
    /// the handshake of a client slowed down by a busy machine.
    pub idle_timeout: Option<Duration>,
    /// How many requests the journal keeps (the latest; older ones are dropped
    /// and counted, see [`Emulator::journal_dropped`]). 0 keeps none.
    pub journal_capacity: usize,
    /// Serve HTTPS instead of plain HTTP (default `None`: plain HTTP). The
    /// admin API is on the same listener, so over HTTPS too.
    pub tls: Option<EmulatorTls>,
    /// Compress (gzip) an answer of the REST API or a sign-in page when the
    /// request accepts gzip and the answer's body has at least this many bytes
    /// (default `None`: never compress). Fault answers are never compressed.
    pub gzip_min_bytes: Option<usize>,
}

impl Default for EmulatorConfig {
    fn default() -> Self {
        EmulatorConfig {
            host: "127.0.0.1".into(),
            port: 0,
            private_key: "sk_test_emulator_private_key_0001".into(),
            public_key: "pk_test_emulator_public_key_0001".into(),
            rate_limit: RateLimit::default(),
            rate_limit_headers: false,
            seed_users: 0,
            max_body_bytes: 1_048_576,
            journal_capacity: JOURNAL_DEFAULT_CAPACITY,
            read_timeout: Duration::from_secs(10),
            idle_timeout: None,
            tls: None,
            gzip_min_bytes: None,
        }
    }
}

/// A fault rule: for the next `times` requests matching `method` and `path`,
/// do `action` instead of (or on top of) the normal answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// The method to match; `None` matches any.
    pub method: Option<String>,
    /// The exact path to match, or a prefix when it ends in `*`.
    pub path: String,
    /// How many matching requests the rule fires for.
    pub times: u32,
    /// What the client sees.
    pub action: FaultAction,
}

/// What a fault does to a matching request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum FaultAction {
    /// Answer this instead of handling the request (no side effect).
    Respond {
        /// The status to answer.
        status: u16,
        /// Extra headers (for example `Retry-After`).
        headers: Vec<(String, String)>,
        /// The body, sent as is.
        body: String,
        /// The content type; `application/json` when `None`.
        content_type: Option<String>,
    },
    /// Handle the request normally (it takes effect), then hold the answer back this long.
    Delay(Duration),
    /// Close the connection before writing any byte of a response (no side effect).
    CloseConnection,
    /// Answer 200 with a `Content-Length` larger than the body, cut mid-JSON, then close.
    TruncatedBody,
    /// Handle the request normally (it takes effect), then send its answer's status and
    /// headers with only the first half of its body, short of its `Content-Length`, and close:
    /// a success whose answer was cut off (a create that happened, though the client cannot
    /// read that it did).
    TruncatedAfterEffect,
    /// Answer 200 `application/json` with an HTML body.
    NotJson,
    /// Handle the request normally, but label the answer `text/html`.
    WrongContentType,
    /// Answer 200 with a valid JSON body of this many bytes.
    LargeBody {
        /// The body's size in bytes.
        bytes: usize,
    },
    /// Handle the request normally (it takes effect), then hold the answer back until
    /// [`Emulator::release_held`] (or [`Emulator::clear_faults`], or a reset): a test
    /// stops a client at a chosen request, sees it there with [`Emulator::held`], and
    /// does what it means to do at that point (kill the process, say) before letting
    /// it go on.
    Hold,
}

/// One request as it arrived, in the request journal.
///
/// An entry keeps at most [`JOURNAL_BODY_CAP`] bytes of the body and
/// [`JOURNAL_TEXT_CAP`] bytes of each of method, path, query and `User-Agent`
/// (cut at a character boundary) and [`JOURNAL_HEADERS_CAP`] bytes of headers;
/// `truncated` says whether anything was cut.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct JournalEntry {
    /// Arrival order, from 1; keeps increasing when entries are dropped or the
    /// journal is cleared (only a reset starts it again).
    pub seq: u64,
    /// The HTTP method.
    pub method: String,
    /// The path, as sent (percent-encoding kept).
    pub path: String,
    /// The raw query string, with the values of `auth` and `publicKey` replaced by `REDACTED`.
    pub query: String,
    /// The body, as text (lossy UTF-8).
    pub body: String,
    /// When it arrived.
    pub received_at: SystemTime,
    /// The status answered; 0 while unanswered, or when the connection was closed without an answer.
    pub status: u16,
    /// The `User-Agent` header, if any.
    pub user_agent: Option<String>,
    /// The request's headers, in the order they came, names in lower case:
    /// the values of `Authorization`, `Proxy-Authorization`, `Cookie`,
    /// `Set-Cookie` and of any header whose name holds `token`, `secret`,
    /// `passw`, `credential`, `session`, `signature`, `jwt`, `bearer` or
    /// `auth`, or ends in `key` or `keys` (any case, `-` and `_` aside:
    /// `x-private-key`) shown as `REDACTED`; at most
    /// [`JOURNAL_HEADERS_CAP`] bytes of names and values (the first headers).
    pub headers: Vec<(String, String)>,
    /// Whether a field was cut to its cap.
    pub truncated: bool,
}

pub(crate) struct Shared {
    state: Mutex<State>,
    max_body_bytes: usize,
    read_timeout: Duration,
    idle_timeout: Duration,
    gzip_min_bytes: Option<usize>,
    connections: tls::ConnectionCounters,
    pub(crate) holds: Holds,
}

/// The answers a [`FaultAction::Hold`] holds back: how many are held now, and the
/// release they wait for (a count each release bumps).
pub(crate) struct Holds {
    held: std::sync::atomic::AtomicUsize,
    releases: tokio::sync::watch::Sender<u64>,
}

impl Default for Holds {
    fn default() -> Holds {
        Holds {
            held: Default::default(),
            releases: tokio::sync::watch::channel(0).0,
        }
    }
}

impl Holds {
    /// A place in the line of releases, taken when a hold fault is (under the state's
    /// lock, which `clear_faults` and a reset take before they release): a release
    /// made from then on lets [`Holds::hold`] of it go, even one made while the
    /// request is still being handled, before it counts as held.
    pub(crate) fn ticket(&self) -> tokio::sync::watch::Receiver<u64> {
        self.releases.subscribe()
    }

    /// Holds the caller (its `ticket` taken with its fault) until a release made since
    /// it was taken; counted as held meanwhile (also when the caller is dropped, a
    /// closed connection, before it).
    pub(crate) async fn hold(&self, mut releases: tokio::sync::watch::Receiver<u64>) {
        use std::sync::atomic::Ordering;
        struct Counted<'a>(&'a std::sync::atomic::AtomicUsize);
        impl Drop for Counted<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::SeqCst);
            }
        }
        self.held.fetch_add(1, Ordering::SeqCst);
        let _counted = Counted(&self.held);
        let _ = releases.changed().await;
    }

    /// How many answers are held now.
    pub(crate) fn held(&self) -> usize {
        self.held.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Lets every held answer go; how many were held.
    pub(crate) fn release(&self) -> usize {
        let held = self.held();
        self.releases.send_modify(|n| *n += 1);
        held
    }
}

impl Shared {
    /// The account of `config`, with its seed users (host, port and tls are not used here).
    pub(crate) fn new(config: EmulatorConfig) -> Shared {
        let mut state = State::new(
            config.private_key,
            config.public_key,
            config.rate_limit,
            config.rate_limit_headers,
            config.journal_capacity,
        );
        state.seed_users(config.seed_users);
        Shared {
            state: Mutex::new(state),
            max_body_bytes: config.max_body_bytes,
            read_timeout: config.read_timeout,
            idle_timeout: config.idle_timeout.unwrap_or(config.read_timeout),
            gzip_min_bytes: config.gzip_min_bytes,
            connections: tls::ConnectionCounters::default(),
            holds: Holds::default(),
        }
    }

    /// What [`Emulator::reset`] and `POST /_emulator/reset` clear.
    pub(crate) fn reset(&self) {
        self.state().reset();
        self.connections.reset();
        self.holds.release();
    }

    /// The state, even if a handler panicked while holding it (the data stays usable).
    pub(crate) fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A running emulator. It serves until dropped (or [`Emulator::stop`]ped).
pub struct Emulator {
    shared: Arc<Shared>,
    base_url: String,
    chat_url: String,
    admin_url: String,
    ca_pem: Option<String>,
    /// Removed (when ours) as the emulator is dropped, after serving has stopped.
    ca_file: Option<tls::CaFile>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for Emulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emulator")
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

impl Emulator {
    /// Binds the address and starts serving on background threads; returns once it accepts.
    pub fn start(config: EmulatorConfig) -> std::io::Result<Emulator> {
        if config.read_timeout.is_zero() || config.idle_timeout.is_some_and(|t| t.is_zero()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "read_timeout and idle_timeout must not be zero",
            ));
        }
        // Certificates first: a bad one is refused before any port is taken.
        let prepared = config.tls.as_ref().map(tls::prepare).transpose()?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("roomchat-emulator")
            .enable_all()
            .build()?;
        let listener = runtime.block_on(tokio::net::TcpListener::bind((
            config.host.as_str(),
            config.port,
        )))?;
        let addr: SocketAddr = listener.local_addr()?;
        let scheme = if prepared.is_some() { "https" } else { "http" };
        let base_url = match addr {
            SocketAddr::V4(a) => format!("{scheme}://{}:{}", a.ip(), a.port()),
            SocketAddr::V6(a) => format!("{scheme}://[{}]:{}", a.ip(), a.port()),
        };
        let shared = Arc::new(Shared::new(config));
        shared.state().chat_url = format!("{base_url}/chat");
        let (acceptor, ca_pem, ca_file) = match prepared {
            Some(p) => (Some(p.acceptor), p.ca_pem, p.ca_file),
            None => (None, None, None),
        };
        match acceptor {
            None => runtime.spawn(server::serve(listener, shared.clone())),
            Some(acceptor) => runtime.spawn(server::serve_tls(listener, shared.clone(), acceptor)),
        };
        Ok(Emulator {
            chat_url: format!("{base_url}/chat"),
            admin_url: format!("{base_url}/_emulator"),
            base_url,
            shared,
            ca_pem,
            ca_file,
            runtime: Some(runtime),
        })
    }

    /// The REST base URL, e.g. `http://127.0.0.1:41234`, or
    /// `https://127.0.0.1:41234` with [`EmulatorConfig::tls`] (no trailing slash).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The browser address of rooms: sign-in pages are `{chat_url}/<room_id>?accessToken=…`.
    pub fn chat_url(&self) -> &str {
        &self.chat_url
    }

    /// The admin API's base URL, `{base_url}/_emulator`.
    pub fn admin_url(&self) -> &str {
        &self.admin_url
    }

    /// The PEM of the CA that signed the served certificate: the generated one,
    /// or the file given as `ca_pem_path`; `None` over plain HTTP or when no CA
    /// was given with [`EmulatorTls::Files`].
    pub fn ca_pem(&self) -> Option<String> {
        self.ca_pem.clone()
    }

    /// The path of a file holding [`Emulator::ca_pem`]: for a generated CA, a
    /// file in the temporary directory that the emulator removes when it stops;
    /// with [`EmulatorTls::Files`], the given `ca_pem_path` (left alone).
    pub fn ca_file(&self) -> Option<PathBuf> {
        self.ca_file.as_ref().map(|f| f.path.clone())
    }

    /// Connections accepted and TLS handshakes completed, resumed and failed
    /// since start or the last reset.
    pub fn connection_stats(&self) -> ConnectionStats {
        self.shared.connections.snapshot()
    }

    /// The account's current private key.
    pub fn private_key(&self) -> String {
        self.shared.state().private_key.clone()
    }

    /// The account's current public key.
    pub fn public_key(&self) -> String {
        self.shared.state().public_key.clone()
    }

    /// Clears users, rooms, conversations, faults, journal, gates, rate counters
    /// and connection counts; keeps keys and limits.
    pub fn reset(&self) {
        self.shared.reset();
    }

    /// Adds a fault rule; returns its id.
    pub fn add_fault(&self, fault: Fault) -> u64 {
        self.shared.state().add_fault(fault)
    }

    /// Removes every fault rule, and lets every answer a [`FaultAction::Hold`] holds go.
    pub fn clear_faults(&self) {
        self.shared.state().faults.clear();
        self.shared.holds.release();
    }

    /// How many answers a [`FaultAction::Hold`] holds back now (`GET /_emulator/held`).
    pub fn held(&self) -> usize {
        self.shared.holds.held()
    }

    /// Lets every answer a [`FaultAction::Hold`] holds back go (`DELETE /_emulator/held`);
    /// how many were held.
    pub fn release_held(&self) -> usize {
        self.shared.holds.release()
    }

    /// The latest arrivals, oldest first, at most the journal's capacity
    /// (admin requests excluded).
    pub fn journal(&self) -> Vec<JournalEntry> {
        self.shared.state().journal.entries().cloned().collect()
    }

    /// How many entries the journal dropped (oldest first) to stay within its
    /// capacity since it was last cleared.
    pub fn journal_dropped(&self) -> u64 {
        self.shared.state().journal.dropped()
    }

    /// Changes the journal's capacity; entries beyond it are dropped now, oldest first.
    pub fn set_journal_capacity(&self, capacity: usize) {
        self.shared.state().journal.set_capacity(capacity);
    }

    /// Empties the journal and zeroes its dropped count (sequence numbers go on).
    pub fn clear_journal(&self) {
        self.shared.state().journal.clear();
    }

    /// Creates a chat room from a JSON object (`roomId` generated when absent) and returns it.
    ///
    /// # Panics
    /// When `room` is not a valid room (not an object, a duplicate `roomId`): a test bug.
    pub fn create_room(&self, room: Value) -> Value {
        self.shared
            .state()
            .create_room(&room)
            .unwrap_or_else(|e| panic!("create_room: {e}"))
    }

    /// Adds messages (`{"messages": text, "user": {"username", …}, "created"?}`) to a new
    /// conversation of `room_id`; returns the conversation's id.
    ///
    /// # Panics
    /// When the room does not exist or a message is malformed: a test bug.
    pub fn add_conversation(&self, room_id: &str, messages: Vec<Value>) -> String {
        let spec = serde_json::json!({"roomId": room_id, "messages": messages});
        let out = self
            .shared
            .state()
            .add_conversation(&spec)
            .unwrap_or_else(|e| panic!("add_conversation: {e}"));
        out["conversationId"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Creates a bot from a JSON object (`name` and `webhookURL` required; the
    /// other fields of create bot, checked as the service checks them) and
    /// returns its record, `_id` included (same as `POST /_emulator/bots`).
    ///
    /// # Panics
    /// When `bot` is not a valid bot (a missing field, a taken name): a test bug.
    pub fn add_bot(&self, bot: Value) -> Value {
        self.shared
            .state()
            .add_bot(&bot)
            .unwrap_or_else(|e| panic!("add_bot: {e}"))
    }

    /// Adds a conversation of `room_id` between two members (each an existing
    /// user as `{"userId"}` or `{"uniqueUserIdentifier"}`, or any object with a
    /// `username`) holding `messages` (as [`Emulator::add_conversation`]);
    /// returns its id (same as `POST /_emulator/conversations` with `memberOne`
    /// and `memberTwo`).
    ///
    /// # Panics
    /// When the room does not exist or a member or message is malformed: a test bug.
    pub fn add_conversation_between(
        &self,
        room_id: &str,
        member_one: Value,
        member_two: Value,
        messages: Vec<Value>,
    ) -> String {
        let spec = serde_json::json!({"roomId": room_id, "memberOne": member_one,
            "memberTwo": member_two, "messages": messages});
        let out = self
            .shared
            .state()
            .add_conversation(&spec)
            .unwrap_or_else(|e| panic!("add_conversation_between: {e}"));
        out["conversationId"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    /// Sends one request of the admin API (`POST /_emulator/rooms` is
    /// `admin_request("POST", "/rooms", &body)`), without HTTP; returns its
    /// status and JSON answer. The emulator binary's `--seed FILE` applies a
    /// file of these at start.
    pub fn admin_request(&self, method: &str, path: &str, body: &Value) -> (u16, Value) {
        let Ok(method) = hyper::Method::from_bytes(method.as_bytes()) else {
            return (
                405,
                serde_json::json!({"error": true, "message": format!("no method {method:?}")}),
            );
        };
        let body = if body.is_null() {
            Vec::new()
        } else {
            body.to_string().into_bytes()
        };
        server::admin(&self.shared, &method, path, &body)
    }

    /// Adds messages to a room or channel (same as `POST /_emulator/messages`:
    /// `{"roomId", "channelId"?, "count": N, …}`, `{"roomId", "channelId"?,
    /// "messages": [...]}` or `{"roomId", "channelId"?, "records": ["<JSON text>", …]}`,
    /// records stored and served verbatim); returns `{"added", "total", "ids"?}`.
    ///
    /// # Panics
    /// When the spec is malformed or names no room or channel: a test bug.
    pub fn add_messages(&self, spec: Value) -> Value {
        self.shared
            .state()
            .add_messages(&spec)
            .unwrap_or_else(|e| panic!("add_messages: {e}"))
    }

    /// Deletes messages of a room or channel by id (same as `DELETE /_emulator/messages`:
    /// `{"roomId", "channelId"?, "ids": [...]}`, a verbatim record named by the handle
    /// `add_messages` gave); returns `{"deleted", "total"}`.
    ///
    /// # Panics
    /// When the spec is malformed or names no room or channel: a test bug.
    pub fn delete_messages(&self, spec: Value) -> Value {
        self.shared
            .state()
            .delete_messages(&spec)
            .unwrap_or_else(|e| panic!("delete_messages: {e}"))
    }

    /// Sets how a room's or channel's message listing is served (same as
    /// `PUT /_emulator/listing`: `{"roomId", "channelId"?, "pretty"?, "limitCap"?}`); returns
    /// the shape now.
    ///
    /// # Panics
    /// When the spec is malformed or names no room or channel: a test bug.
    pub fn set_listing(&self, spec: Value) -> Value {
        self.shared
            .state()
            .set_listing(&spec)
            .unwrap_or_else(|e| panic!("set_listing: {e}"))
    }

    /// Adds `count` messages (`message <n>`, from a throw-away user
    /// `seed-author`) to room `room_id`, or to its channel `channel_id`;
    /// returns how many it holds now.
    ///
    /// # Panics
    /// When the room or channel does not exist: a test bug.
    pub fn seed_messages(&self, room_id: &str, channel_id: Option<&str>, count: usize) -> usize {
        let out = self.add_messages(
            serde_json::json!({"roomId": room_id, "channelId": channel_id, "count": count}),
        );
        out["total"].as_u64().unwrap_or_default() as usize
    }

    /// Adds a channel to `room_id` (`channel`: create channel's body) and
    /// returns it, `_id` included (same as `POST /_emulator/channels`).
    ///
    /// # Panics
    /// When the room does not exist or the channel is malformed: a test bug.
    pub fn add_channel(&self, room_id: &str, channel: Value) -> Value {
        let mut spec = channel;
        if let Some(fields) = spec.as_object_mut() {
            fields.insert("roomId".into(), Value::from(room_id));
        }
        self.shared
            .state()
            .add_channel(&spec)
            .unwrap_or_else(|e| panic!("add_channel: {e}"))
    }

    /// Makes the user with `unique_user_identifier` a member of `room_id` with
    /// `role` (`admin`, `moderator`, `guest` or `user`); returns the member
    /// record (same as `POST /_emulator/members`).
    ///
    /// # Panics
    /// When the room or user does not exist or the role is not one of those: a test bug.
    pub fn add_member(&self, room_id: &str, unique_user_identifier: &str, role: &str) -> Value {
        let spec = serde_json::json!({"roomId": room_id,
            "uniqueUserIdentifier": unique_user_identifier, "roleName": role});
        self.shared
            .state()
            .add_member(&spec)
            .unwrap_or_else(|e| panic!("add_member: {e}"))
    }

    /// How many times every user of `room_id` was signed out (eject all users).
    pub fn ejections(&self, room_id: &str) -> u64 {
        self.shared.state().ejections(room_id)
    }

    /// Every user, deactivated ones too, in creation order: the users listing's
    /// record plus `"active"` (same as `GET /_emulator/users`).
    pub fn users(&self) -> Vec<Value> {
        self.shared.state().all_users()
    }

    /// Adds `count` users named `seed-user-<n>`; returns the number of active users.
    pub fn seed_users(&self, count: usize) -> usize {
        self.shared.state().seed_users(count)
    }

    /// Changes the rate limit (counters kept).
    pub fn set_rate_limit(&self, limit: RateLimit) {
        self.shared.state().rate_limit = limit;
    }

    /// Marks an endpoint as outside the account's plan (`*` as method matches any;
    /// a path ending in `*` is a prefix).
    pub fn gate_endpoint(&self, method: &str, path_pattern: &str) {
        self.shared
            .state()
            .gated
            .push((method.to_owned(), path_pattern.to_owned()));
    }

    /// Lifts every plan gate.
    pub fn ungate_all(&self) {
        self.shared.state().gated.clear();
    }

    /// Stops serving and frees the port (dropping does the same).
    pub fn stop(self) {}
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Not `shutdown_timeout`: that panics if dropped inside an async context.
            runtime.shutdown_background();
        }
    }
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Emulator>();
    assert_send_sync::<Fault>();
    assert_send_sync::<JournalEntry>();
    assert_send_sync::<EmulatorTls>();
    assert_send_sync::<ConnectionStats>();
};
