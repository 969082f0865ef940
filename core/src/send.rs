//! The one send path: the client and its builder, each call's attempts,
//! retries and waits, and what it tells observers and tracing.

pub(crate) mod client;
pub mod instrument;
pub mod observe;
pub(crate) mod observed;
pub(crate) mod options;
#[cfg(feature = "opentelemetry")]
pub(crate) mod otel;
pub(crate) mod response;
pub(crate) mod telemetry_names;
pub(crate) mod trace;
