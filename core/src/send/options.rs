//! Per-call settings: a view of a client with other timeouts or retries
//! ([`Client::with_options`](crate::Client::with_options)).

use std::time::Duration;

use crate::error::{Error, Result};
use crate::time::check_duration;

/// Settings that differ from the client's for the calls of one view of it,
/// made by [`Client::with_options`](crate::Client::with_options). A setting
/// left `None` keeps the client's (or the view's, for a view of a view).
///
/// ```
/// use std::time::Duration;
/// use roomchat::{CallOptions, ListUsers};
/// # let emu = roomchat_emulator::Emulator::start(Default::default()).unwrap();
/// # let client = roomchat::Client::builder(emu.private_key()).base_url(emu.base_url()).build()?;
///
/// // A long export gets more time; a quick check gets one attempt only.
/// let patient = client.with_options(CallOptions::new().timeout(Duration::from_secs(300)))?;
/// let once = client.with_options(CallOptions::new().max_retries(0))?;
/// patient.list_users(&ListUsers::page(200, 0))?;
/// once.list_users(&ListUsers::page(1, 0))?;
/// assert_eq!(client.rate_limit_state().used, 2); // one budget for the client and its views
/// # Ok::<(), roomchat::Error>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CallOptions {
    /// The overall timeout of one attempt (see [`ClientBuilder::timeout`](crate::ClientBuilder::timeout)).
    pub timeout: Option<Duration>,
    /// The connect timeout (see [`ClientBuilder::connect_timeout`](crate::ClientBuilder::connect_timeout)).
    pub connect_timeout: Option<Duration>,
    /// Retries after the first attempt; 0 turns retrying off
    /// (see [`ClientBuilder::max_retries`](crate::ClientBuilder::max_retries)).
    pub max_retries: Option<u32>,
    /// The longest wait slept before a retry
    /// (see [`ClientBuilder::max_retry_wait`](crate::ClientBuilder::max_retry_wait)).
    pub max_retry_wait: Option<Duration>,
}

impl CallOptions {
    /// No setting changed.
    pub fn new() -> CallOptions {
        CallOptions::default()
    }

    /// Sets the overall timeout of one attempt.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the connect timeout.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = Some(timeout);
        self
    }

    /// Sets the retries after the first attempt (0: one attempt only).
    pub fn max_retries(mut self, retries: u32) -> Self {
        self.max_retries = Some(retries);
        self
    }

    /// Sets the longest wait slept before a retry.
    pub fn max_retry_wait(mut self, wait: Duration) -> Self {
        self.max_retry_wait = Some(wait);
        self
    }

    /// The builder's checks, for the settings given: timeouts above zero,
    /// every duration at most [`MAX_DURATION`](crate::MAX_DURATION).
    pub(crate) fn validate(&self) -> Result<()> {
        for (what, timeout) in [
            ("the timeout", self.timeout),
            ("the connect timeout", self.connect_timeout),
        ] {
            if let Some(timeout) = timeout {
                if timeout.is_zero() {
                    return Err(Error::configuration(format!(
                        "{what} must be greater than zero"
                    )));
                }
                check_duration(what, timeout)?;
            }
        }
        if let Some(wait) = self.max_retry_wait {
            check_duration("the longest retry wait", wait)?;
        }
        Ok(())
    }

    /// These settings over `base`: each one given here wins.
    pub(crate) fn over(self, base: CallOptions) -> CallOptions {
        CallOptions {
            timeout: self.timeout.or(base.timeout),
            connect_timeout: self.connect_timeout.or(base.connect_timeout),
            max_retries: self.max_retries.or(base.max_retries),
            max_retry_wait: self.max_retry_wait.or(base.max_retry_wait),
        }
    }
}
