//! The answer beside a call's result (`roomchat_response_meta`): what `respond`
//! keeps of a call and `write_meta` hands to C. Every call's function uses
//! these (client.rs, generated.rs); the object's C accessors are in view.rs,
//! where the header lists them.

use std::ffi::{c_char, CString};
use std::ptr;

use roomchat::{Client, ResponseMeta};

use crate::boundary::write_out;
use crate::error::{c_string, Failure};

/// The HTTP answer a call's result came from: status, headers, attempts. Given
/// by the `_with_response` form of every endpoint call (e.g.
/// `roomchat_client_list_users_with_response`); owned by the caller, freed with
/// `roomchat_response_meta_free`. Strings it returns live as long as it does.
#[allow(non_camel_case_types)]
pub struct roomchat_response_meta {
    pub(crate) status: u16,
    pub(crate) attempts: u32,
    /// Names (lower case) and values, in the order they came.
    pub(crate) headers: Vec<(CString, CString)>,
    /// `headers`' names as Rust text, for lookups.
    names: Vec<String>,
}

impl From<ResponseMeta> for roomchat_response_meta {
    fn from(meta: ResponseMeta) -> Self {
        let names = meta.headers.iter().map(|(n, _)| n.clone()).collect();
        roomchat_response_meta {
            status: meta.status,
            attempts: meta.attempts,
            headers: meta
                .headers
                .into_iter()
                .map(|(n, v)| (c_string(n), c_string(v)))
                .collect(),
            names,
        }
    }
}

impl roomchat_response_meta {
    /// The value of the first header called `name` (any case), or NULL.
    pub(crate) fn header(&self, name: &str) -> *const c_char {
        self.names
            .iter()
            .position(|n| n.eq_ignore_ascii_case(name))
            .map_or(ptr::null(), |i| self.headers[i].1.as_ptr())
    }
}

/// Runs `call` on `client`; when `meta_out` is not NULL, through
/// `Client::with_response`, keeping the answer for the caller to write out
/// (with `write_meta`) once everything else succeeded.
pub(crate) fn respond<T>(
    client: &Client,
    meta_out: *mut *mut roomchat_response_meta,
    call: impl FnOnce(&Client) -> roomchat::Result<T>,
) -> Result<(T, Option<ResponseMeta>), Failure> {
    if meta_out.is_null() {
        return Ok((call(client)?, None));
    }
    let (value, meta) = client.with_response(call)?.into_parts();
    Ok((value, Some(meta)))
}

/// Writes the answer `respond` kept to `*meta_out` (nothing when it kept none).
pub(crate) fn write_meta(meta_out: *mut *mut roomchat_response_meta, meta: Option<ResponseMeta>) {
    if let Some(meta) = meta {
        write_out(meta_out, roomchat_response_meta::from(meta));
    }
}
