//! The emulator's request handling without a socket: one request in, the
//! answer out, through the very code the server runs for each request
//! (admin API, journal, faults, routing, auth, rate limit, plan gates,
//! validation, state). It is the entry point of the fuzz targets under
//! `fuzz/` and of their regression tests; not part of the emulator's contract.
//!
//! ```
//! use roomchat_emulator::offline::{Offline, Outcome};
//! use roomchat_emulator::EmulatorConfig;
//!
//! let emu = Offline::new(EmulatorConfig::default());
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
//! let target = format!("/consumer/api/v2/users?auth={}", emu.private_key());
//! let Outcome::Answered(reply) = runtime.block_on(emu.handle("GET", &target, &[], b"")) else {
//!     panic!("no answer");
//! };
//! assert_eq!((reply.status, &reply.body[..]), (200, &br#"{"total":0,"limit":50,"skip":0,"data":[]}"#[..]));
//! ```

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;

use crate::{server, EmulatorConfig, Shared};

/// An emulated account served without a socket.
pub struct Offline {
    shared: Arc<Shared>,
}

/// What came of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The method, target or a header is not valid HTTP: hyper refuses such a
    /// request before the emulator's handling sees it.
    NotHttp(String),
    /// The connection was closed without an answer (the `close` fault).
    Closed,
    /// The answer.
    Answered(Reply),
}

/// An answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The status.
    pub status: u16,
    /// The headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body's bytes, as far as they were sent.
    pub body: Vec<u8>,
    /// False when the body broke off (the `truncate` fault).
    pub complete: bool,
}

impl Reply {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl Offline {
    /// The account `config` describes (its `host`, `port` are not used).
    pub fn new(config: EmulatorConfig) -> Offline {
        Offline {
            shared: Arc::new(Shared::new(config)),
        }
    }

    /// The account's current private key.
    pub fn private_key(&self) -> String {
        self.shared.state().private_key.clone()
    }

    /// The account's current public key.
    pub fn public_key(&self) -> String {
        self.shared.state().public_key.clone()
    }

    /// Handles one request: `method`, `target` (path and query, as on the
    /// request line), `headers` and `body`. Run it on a Tokio runtime with
    /// time enabled (a `delay` fault and the `truncate` fault sleep).
    pub async fn handle(
        &self,
        method: &str,
        target: &str,
        headers: &[(String, String)],
        body: &[u8],
    ) -> Outcome {
        let mut request = Request::builder().method(method).uri(target);
        for (name, value) in headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let request = match request.body(Full::new(Bytes::copy_from_slice(body))) {
            Ok(request) => request,
            Err(e) => return Outcome::NotHttp(e.to_string()),
        };
        let Ok(response) = server::handle(request, self.shared.clone()).await else {
            return Outcome::Closed;
        };
        let (parts, mut body) = response.into_parts();
        let mut bytes = Vec::new();
        let mut complete = true;
        while let Some(frame) = body.frame().await {
            match frame {
                Ok(frame) => {
                    if let Some(data) = frame.data_ref() {
                        bytes.extend_from_slice(data);
                    }
                }
                Err(_) => {
                    complete = false;
                    break;
                }
            }
        }
        Outcome::Answered(Reply {
            status: parts.status.as_u16(),
            headers: parts
                .headers
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_owned(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body: bytes,
            complete,
        })
    }
}
