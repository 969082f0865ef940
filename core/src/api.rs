//! The operations as typed `Client` methods (generated from
//! `api/operations.toml`), and the users listing's iterators.

pub(crate) mod methods;
pub(crate) mod pagination;
