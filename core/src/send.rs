//! The one send path: the client and its builder, each call's attempts,
//! retries and waits, and what it tells observers and tracing.

pub(crate) mod client;
pub mod observe;
pub(crate) mod options;
pub(crate) mod response;
pub(crate) mod trace;
