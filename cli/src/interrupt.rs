//! Ctrl-C (SIGINT) while a long command runs (`--all`, `export`, `import`):
//! caught for the command's duration only, so that it can stop cleanly (cancel
//! the calls in flight, commit what is done, say how to resume) and exit 130.
//!
//! One command catches at a time; [`Interrupts::catch`] returns a guard, and
//! the process's previous disposition of SIGINT is back once it is dropped, so
//! that a program embedding the command line (the Python package's
//! `roomchat._cli:main`, the npm `bin`) keeps its own Ctrl-C behaviour after
//! the command returns.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use roomchat::CancelToken;

/// The command catching SIGINT now, if any.
static CURRENT: Mutex<Option<(Arc<AtomicBool>, CancelToken)>> = Mutex::new(None);

/// SIGINT caught while it lives: the first one sets [`requested`](Self::requested)
/// and cancels [`cancel_token`](Self::cancel_token) (a call in flight ends with
/// `cancelled`). Dropping it gives SIGINT back to what it was.
pub struct Interrupts {
    requested: Arc<AtomicBool>,
    cancel: CancelToken,
}

impl Interrupts {
    /// Starts catching SIGINT for the command that holds the value.
    pub fn catch() -> Interrupts {
        let requested = Arc::new(AtomicBool::new(false));
        let cancel = CancelToken::new();
        *CURRENT.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((requested.clone(), cancel.clone()));
        install_once();
        Interrupts { requested, cancel }
    }

    /// Whether SIGINT came since [`catch`](Self::catch).
    pub fn requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }

    /// The token SIGINT cancels: give it to the client (`Client::with_cancel`).
    pub fn cancel_token(&self) -> CancelToken {
        self.cancel.clone()
    }
}

impl Drop for Interrupts {
    fn drop(&mut self) {
        let mut current = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
        if current
            .as_ref()
            .is_some_and(|(r, _)| Arc::ptr_eq(r, &self.requested))
        {
            *current = None;
        }
    }
}

// TODO(issue 44, item 13): the handler below is installed once per process and never
// removed; outside a command it exits 130. Replaced by a disposition saved and restored.
fn install_once() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            let current = CURRENT.lock().unwrap_or_else(|e| e.into_inner()).clone();
            match current {
                Some((requested, cancel)) => {
                    requested.store(true, Ordering::SeqCst);
                    cancel.cancel();
                }
                None => std::process::exit(i32::from(crate::error::EXIT_INTERRUPTED)),
            }
        });
    });
}
