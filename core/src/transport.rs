//! The transport: sockets (a resolver cache, cancellable connects), TLS,
//! proxies, and the fork safety of what it holds.

pub(crate) mod connect;
pub(crate) mod fork;
pub(crate) mod proxy;
pub(crate) mod tls;
