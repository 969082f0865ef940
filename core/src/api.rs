//! The operations as typed `Client` methods (generated from
//! `api/operations.toml`), the listings' iterators, generic (`pages`) and
//! the users listing's own (`pagination`).

pub(crate) mod methods;
pub(crate) mod pages;
pub(crate) mod pagination;
