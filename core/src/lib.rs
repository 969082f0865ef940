//! `roomchat`: a synchronous client for the hosted chat service's REST API.
//!
//! Every documented operation of the service, typed, from a server: create,
//! change and delete chat rooms, post and read their messages and channels
//! (the history export: [`Client::iter_room_messages`]), create users,
//! members and moderators, manage bots, validate access tokens, and sign
//! users into rooms.
//!
//! * [`Client`] sends requests on one keep-alive connection pool, shares one
//!   rate-limit budget per private key across the whole process, and retries
//!   only what is safe to retry, by each operation's declared class:
//!   connection failures and 429s for every operation, 5xx and timeouts only
//!   for the repeatable ones (reads, updates, deletes, set member); a create
//!   or a post is never sent twice unless the client allows it
//!   ([`ClientBuilder::retry_non_idempotent`]).
//! * The listings that page are iterators, page by page ([`Pages`]) or record
//!   by record ([`PageItems`]): an error is an item, never the end.
//! * [`wire`] is the pure layer underneath — request builders and response
//!   decoders without I/O — for use with another HTTP stack.
//! * Every failure is an [`Error`] with a stable [`ErrorKind`]; the private key
//!   never appears in any error, `Debug` output or log line.
//! * A call can be cancelled from another thread ([`Client::with_cancel`],
//!   [`CancelToken`]); an [`Observer`] hears of every attempt, retry and wait.
//! * [`Client::with_options`] gives a view of a client with its own timeout
//!   or retries ([`CallOptions`]) sharing the connections and the budget;
//!   [`Client::with_response`] gives any call's result beside the answer's
//!   status and headers ([`ResponseMeta`]).
//! * Logging: an [`Observer`], `ROOMCHAT_LOG=debug|info|warn` for lines on
//!   standard error ([`StderrObserver`]), or with the cargo feature `tracing`
//!   one `tracing` span per call (see the README's `tracing` bullet).
//! * The client is fork-safe: a process may fork while other threads are in
//!   the middle of calls, and the child's clients work at once on connections
//!   of their own.
//! * With the cargo feature `redis`, one rate budget per key is shared by every
//!   process and host through Redis (`RedisBudget`), exact over a rolling
//!   window and safe when Redis fails.
//!
//! ```
//! use roomchat::{Client, CreateUser, DeactivateUser, ErrorKind, ListUsers};
//! # let emulator = roomchat_emulator::Emulator::start(Default::default()).unwrap();
//! # let (base_url, key) = (emulator.base_url().to_owned(), emulator.private_key());
//!
//! let client = Client::builder(key).base_url(base_url).build()?;
//!
//! let ann = client.create_user(&CreateUser::moderator("ann"))?;
//! client.create_user(&CreateUser::regular("bob").field("uniqueUserIdentifier", "crm-7"))?;
//!
//! let page = client.list_users(&ListUsers::page(50, 0))?;
//! assert_eq!(page.total, 2);
//! for user in client.users() {
//!     println!("{}", user?.username.unwrap_or_default());
//! }
//!
//! client.deactivate_user(&DeactivateUser::UniqueUserIdentifier("crm-7".into()))?;
//! let again = client.deactivate_user(&DeactivateUser::UniqueUserIdentifier("crm-7".into()));
//! assert_eq!(again.unwrap_err().kind(), ErrorKind::UserNotFound);
//! # let _ = ann;
//! # Ok::<(), roomchat::Error>(())
//! ```
#![deny(missing_docs)]

// The layers, from the bottom up: each file uses only its own layer and those
// below it (shared pieces: cancellation, errors, secrets, percent-encoding,
// the duration bound).
mod cancel;
mod error;
mod percent;
mod secrets;
mod time;
// The pure layer: requests and answers without I/O (every operation's
// declaration, builder and decoder).
pub mod wire;
// Sockets, TLS, proxies and fork safety.
mod transport;
// The rate budget: this process's, or shared through Redis.
mod budget;
// The one send path: the client, its attempts, retries and observation.
mod send;
// The operations' typed methods (generated) and the listing's iterators.
mod api;

pub use send::instrument;
pub use send::observe;
pub use wire::view;

pub use cancel::{CancelToken, CANCEL_CHECK_INTERVAL};
pub use error::{Error, ErrorKind, Remedy, Result};
pub use observe::{Event, EventKind, Level, Observer, StderrObserver, ENV_LOG};
pub use send::client::{
    check_base_url, check_proxy, Client, ClientBuilder, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_WAIT, DEFAULT_TIMEOUT,
    ENV_APP_NAME, ENV_BASE_URL, ENV_CHAT_URL, ENV_PRIVATE_KEY, ENV_PUBLIC_KEY,
};
pub use time::MAX_DURATION;
pub use wire::models::{
    ConversationMessages, CreateUser, CreatedUser, DeactivateUser, Deactivated, Invalidated,
    ListUsers, Message, MessageAuthor, PathForm, RawAuth, RawRequest, RawResponse, ReactivateUser,
    Reactivated, Role, TokenUser, User, UserPage, MAX_PAGE_SIZE,
};
// The generated operations' parameters and records (api/operations.toml).
pub use api::pages::{JsonPage, Page, PageItems, Pages, DEFAULT_ITER_PAGE_SIZE};
pub use api::pagination::{UserPages, Users};
pub use budget::ratelimit::{BudgetBackend, RateLimitConfig, RateLimitState, WhenLimited};
#[cfg(feature = "redis")]
pub use budget::shared_budget::{
    OnRedisError, RedisBudget, DEFAULT_BREAKER_COOLDOWN, DEFAULT_REDIS_TIMEOUT,
};
pub use send::options::CallOptions;
#[cfg(feature = "opentelemetry")]
pub use send::otel::OpenTelemetry;
pub use send::response::{ResponseMeta, WithResponse};
pub use transport::connect::RESOLVE_TTL;
pub use transport::proxy::Proxy;
pub use transport::tls::{TlsRoots, ENV_SSL_CERT_FILE};
pub use wire::operation::params::*;
pub use wire::operation::records::*;
pub use wire::signin::{escape_html, iframe_html, sign_in_url};

/// The crate's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

// Everything a binding hands across threads must be Send + Sync.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Client>();
    assert_send_sync::<Error>();
    assert_send_sync::<Users>();
    assert_send_sync::<UserPages>();
    assert_send_sync::<Pages<MessagePage>>();
    assert_send_sync::<PageItems<MessagePage>>();
    assert_send_sync::<PageItems<MemberPage>>();
    assert_send_sync::<User>();
    assert_send_sync::<CreatedUser>();
    assert_send_sync::<TokenUser>();
    assert_send_sync::<Message>();
    assert_send_sync::<CancelToken>();
    assert_send_sync::<ResponseMeta>();
    assert_send_sync::<CallOptions>();
};

// The README's Rust example compiles (as a doc test).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
