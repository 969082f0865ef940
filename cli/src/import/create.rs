//! Each row's user created once, whatever the network does.
//!
//! A create whose outcome is unknown (a timeout or a broken connection after the request may
//! have arrived, a 5xx, a success status whose body was cut off or unreadable, a create
//! cancelled by Ctrl-C) is checked by getting the user by its identifier before it is sent
//! again; a create the service refuses because the identifier is in use is checked the same
//! way. A user found so, that the listing at the start did not show as active, is ours, another
//! run's, or a deactivated user's: one listing after the creates ([`settle`]) tells which.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use roomchat::{CancelToken, Client, CreateUser, Error, ErrorKind};
use serde_json::Value;

use crate::interrupt::Interrupts;

/// What became of one row.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Created {
        user_id: String,
        note: String,
    },
    AlreadyThere {
        user_id: String,
        note: String,
    },
    /// `cause`: the SDK error behind it, when there is one (its kind gives the exit code
    /// of an import whose every row failed); none for a row that is itself wrong.
    Failed {
        reason: String,
        cause: Option<Error>,
    },
    /// Interrupted before the row was done: its create was never sent, or it was cancelled
    /// and the lookup found no user. Running the same command again does it.
    NotAttempted {
        reason: String,
    },
}

impl Outcome {
    /// The `result` column of the result file.
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Created { .. } => "created",
            Outcome::AlreadyThere { .. } => "already there",
            Outcome::Failed { .. } => "failed",
            Outcome::NotAttempted { .. } => "not attempted",
        }
    }

    pub fn failed(reason: impl Into<String>) -> Outcome {
        Outcome::Failed {
            reason: reason.into(),
            cause: None,
        }
    }
}

/// A create's result before the listing after the creates has settled it.
#[derive(Debug, Clone)]
pub enum Attempt {
    Done(Outcome),
    Found(Found),
}

/// The lookup found a user holding the identifier, that the listing at the start did not
/// show as active.
#[derive(Debug, Clone)]
pub struct Found {
    pub uid: String,
    user_id: String,
    /// The create's error that made us look.
    error: Error,
    /// The kind of the unknown outcome the user may come from. `None`: the service refused
    /// the create because the identifier is in use, and no earlier create of this row had an
    /// unknown outcome, so the user is not ours (another run made it meanwhile, or it is
    /// deactivated).
    unknown: Option<ErrorKind>,
    /// What the record says (`"deactivated": true|false`), when it says.
    deactivated: Option<bool>,
}

impl Found {
    /// Whether the record itself says whether the user is active.
    pub fn settled_by_record(&self) -> bool {
        self.deactivated.is_some()
    }
}

/// Whether the users found by lookups are active: the identifiers of those a listing after the
/// creates shows, or why it could not be asked (interrupted, the listing failed).
pub enum Activity {
    Listed(HashSet<String>),
    Unchecked(String),
}

/// The outcome of a found user, once the listing after the creates (or the record) says
/// whether it is active.
pub fn settle(found: Found, activity: &Activity) -> Outcome {
    let active = match (found.deactivated, activity) {
        (Some(deactivated), _) => Ok(!deactivated),
        (None, Activity::Listed(uids)) => Ok(uids.contains(&found.uid)),
        (None, Activity::Unchecked(why)) => Err(why),
    };
    let Found {
        user_id,
        error,
        unknown,
        ..
    } = found;
    match (active, unknown) {
        (Ok(true), None) => Outcome::AlreadyThere {
            user_id,
            note: "created meanwhile (the create found the identifier in use)".into(),
        },
        (Ok(true), Some(kind)) => Outcome::Created {
            user_id,
            note: format!("confirmed after an unknown outcome ({})", kind.name()),
        },
        (Ok(false), _) => Outcome::Failed {
            reason: format!("{error} (no active user has it: deactivated?)"),
            cause: Some(error),
        },
        (Err(why), None) => Outcome::Failed {
            reason: format!(
                "{error} (a user the listing did not show as active holds it; not checked again: {why})"
            ),
            cause: Some(error),
        },
        (Err(why), Some(kind)) => Outcome::Created {
            user_id,
            note: format!(
                "confirmed after an unknown outcome ({}); not checked whether active: {why}",
                kind.name()
            ),
        },
    }
}

/// The clients and the interrupt a create needs.
pub struct Creator<'a> {
    /// Sends the creates; Ctrl-C cancels it.
    pub create: &'a Client,
    /// Looks users up; never cancelled, so that a cancelled create's outcome is still known.
    pub lookup: &'a Client,
    pub interrupts: &'a Interrupts,
}

/// How long a lookup made after Ctrl-C may take, its wait for the rate budget included:
/// Ctrl-C ends an import within seconds, whatever the budget's window.
pub const LOOKUP_AFTER_CTRL_C: Duration = Duration::from_secs(5);

/// `call` with a view of `client` that is cancelled once `limit` has passed.
fn within<T>(
    client: &Client,
    limit: Duration,
    call: impl FnOnce(&Client) -> roomchat::Result<T>,
) -> roomchat::Result<T> {
    let token = CancelToken::new();
    let (done, finished) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let timer = token.clone();
        scope.spawn(move || {
            // Nothing is ever sent: the call ended when the sender is dropped.
            if finished.recv_timeout(limit) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                timer.cancel();
            }
        });
        let result = call(&client.with_cancel(token.clone()));
        drop(done);
        result
    })
}

/// Whether a create that failed with `error` may have taken effect.
fn outcome_unknown(error: &Error) -> bool {
    match error.kind() {
        ErrorKind::Timeout | ErrorKind::Connection | ErrorKind::ServerError => true,
        // Given up by Ctrl-C after it may have been sent (one never sent had no effect).
        ErrorKind::Cancelled => !error.never_sent(),
        // The service said yes, then the answer was cut off or could not be read.
        ErrorKind::Decode | ErrorKind::ResponseTooLarge => error
            .status()
            .is_none_or(|status| (200..300).contains(&status)),
        _ => false,
    }
}

/// Whether `error` is a refusal (4xx) whose answer could not be read: the create did not
/// happen, but why is unknown (the identifier may be in use).
fn refused_unread(error: &Error) -> bool {
    matches!(
        error.kind(),
        ErrorKind::Decode | ErrorKind::ResponseTooLarge
    ) && error
        .status()
        .is_some_and(|status| (400..500).contains(&status))
}

impl Creator<'_> {
    /// Creates `user` (identifier `uid`) unless it is there, checking an unknown outcome
    /// before sending again; sends nothing new once Ctrl-C came.
    pub fn create_once(&self, uid: &str, user: &CreateUser) -> Attempt {
        let mut unknown = 0;
        let mut last_unknown: Option<ErrorKind> = None;
        loop {
            if self.interrupts.requested() {
                return Attempt::Done(Outcome::NotAttempted {
                    reason: match last_unknown {
                        None => "interrupted before it was sent".into(),
                        Some(kind) => format!(
                            "interrupted: a create's outcome was unknown ({}) and the lookup found no such user; not sent again",
                            kind.name()
                        ),
                    },
                });
            }
            let error = match self.create.create_user(user) {
                Ok(created) => {
                    return Attempt::Done(Outcome::Created {
                        user_id: created.user_id,
                        note: if unknown > 0 {
                            format!("sent again after {unknown} unknown outcome(s)")
                        } else {
                            String::new()
                        },
                    })
                }
                Err(e) => e,
            };
            if error.kind() == ErrorKind::Cancelled && error.never_sent() {
                // Cancelled by Ctrl-C before it was sent (waiting for the rate budget): it had
                // no effect, and needs no lookup.
                return Attempt::Done(Outcome::NotAttempted {
                    reason: match last_unknown {
                        None => "interrupted before it was sent".into(),
                        Some(kind) => format!(
                            "interrupted: a create's outcome was unknown ({}) and the lookup found no such user; not sent again",
                            kind.name()
                        ),
                    },
                });
            }
            if error.kind() == ErrorKind::RateLimited {
                // Refused before it was handled: nothing happened; wait as the budget says.
                let wait = error.retry_after().unwrap_or(Duration::from_secs(1));
                self.sleep(wait.min(Duration::from_secs(60)));
                continue;
            }
            // Refused because the identifier is in use (another run created it meanwhile), or
            // refused with an answer that could not be read, whose reason may be just that.
            let in_use = (error.kind() == ErrorKind::InvalidRequest
                && error.message().contains("uniqueUserIdentifier"))
                || refused_unread(&error);
            if !outcome_unknown(&error) && !in_use {
                return Attempt::Done(Outcome::Failed {
                    reason: error.to_string(),
                    cause: Some(error),
                });
            }
            // Did it take effect? (A GET: the client retries it as a repeatable call; after
            // Ctrl-C, within LOOKUP_AFTER_CTRL_C.)
            let after_ctrl_c = self.interrupts.requested();
            let found = if after_ctrl_c {
                within(self.lookup, LOOKUP_AFTER_CTRL_C, |c| c.get_user(uid))
            } else {
                self.lookup.get_user(uid)
            };
            match found {
                Ok(profile) => {
                    return Attempt::Found(Found {
                        uid: uid.to_owned(),
                        user_id: profile.id.clone().unwrap_or_default(),
                        unknown: if in_use {
                            last_unknown
                        } else {
                            Some(error.kind())
                        },
                        deactivated: match profile.extra.get("deactivated") {
                            Some(Value::Bool(d)) => Some(*d),
                            _ => None,
                        },
                        error,
                    })
                }
                Err(e)
                    if e.kind() == ErrorKind::UserNotFound || e.kind() == ErrorKind::NotFound =>
                {
                    if refused_unread(&error) {
                        return Attempt::Done(Outcome::Failed {
                            reason: error.to_string(),
                            cause: Some(error),
                        });
                    }
                    if in_use {
                        // In use, yet not found: a user the lookup does not show holds it.
                        return Attempt::Done(Outcome::Failed {
                            reason: format!("{error} (no active user has it: deactivated?)"),
                            cause: Some(error),
                        });
                    }
                    if error.kind() == ErrorKind::Cancelled {
                        return Attempt::Done(Outcome::NotAttempted {
                            reason: "interrupted: its create was cancelled, and the lookup found no such user".into(),
                        });
                    }
                    unknown += 1;
                    last_unknown = Some(error.kind());
                    if unknown >= 5 {
                        return Attempt::Done(Outcome::Failed {
                            reason: format!("not created after {unknown} tries: {error}"),
                            cause: Some(error),
                        });
                    }
                }
                Err(e) if after_ctrl_c => {
                    return Attempt::Done(Outcome::Failed {
                        reason: format!(
                            "outcome unknown ({error}): interrupted, and the lookup could not be made within {} s ({e}); running the same command again finds the user if it was created",
                            LOOKUP_AFTER_CTRL_C.as_secs()
                        ),
                        cause: Some(e),
                    })
                }
                Err(e) => {
                    return Attempt::Done(Outcome::Failed {
                        reason: format!("outcome unknown ({error}), and the check failed: {e}"),
                        cause: Some(e),
                    })
                }
            }
        }
    }

    /// Sleeps `wait`, or less when Ctrl-C comes.
    fn sleep(&self, wait: Duration) {
        let end = Instant::now() + wait;
        while !self.interrupts.requested() {
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(Duration::from_millis(50)));
        }
    }
}
