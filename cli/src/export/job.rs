//! What every target's export shares and what every step of it uses: the job (the
//! run's settings, client and counters), how often the part file is committed, and
//! the error of an export stopped by Ctrl-C. Every module of the export's run uses
//! it; it uses none of them but the progress display.

use std::sync::atomic::AtomicU64;
use std::time::Duration;

use jiff::Timestamp;
use roomchat::{CancelToken, Client};

use super::progress::Progress;
use super::Format;
use crate::error::CliError;

/// What every room's export shares.
pub(super) struct Job<'a> {
    pub(super) client: Client,
    pub(super) format: Format,
    /// `--raw-csv-cells`: CSV cells as the service sent them, formulas included.
    pub(super) raw_csv_cells: bool,
    pub(super) page_size: u64,
    /// `--after` and `--before`: the argument's text (the checkpoint's) and its time.
    pub(super) after: Option<(String, Timestamp)>,
    pub(super) before: Option<(String, Timestamp)>,
    pub(super) restart: bool,
    pub(super) progress: &'a Progress,
    pub(super) stats: &'a Stats,
    /// Cancelled by Ctrl-C: the calls in flight end, the waits are cut short.
    pub(super) cancel: CancelToken,
}

#[derive(Default)]
pub(super) struct Stats {
    pub(super) rooms: AtomicU64,
    pub(super) skipped: AtomicU64,
    /// Messages of the rooms exported that earlier runs had fetched (a resumed export's).
    pub(super) earlier: AtomicU64,
    pub(super) messages: AtomicU64,
    pub(super) bytes: AtomicU64,
    pub(super) rate_limited: AtomicU64,
    pub(super) retries: AtomicU64,
}

impl Job<'_> {
    /// `--after`'s time.
    pub(super) fn after_time(&self) -> Option<Timestamp> {
        self.after.as_ref().map(|a| a.1)
    }

    /// `--before`'s time.
    pub(super) fn before_time(&self) -> Option<Timestamp> {
        self.before.as_ref().map(|b| b.1)
    }
}

/// How often the part file is fsynced and the checkpoint replaced.
pub(super) const COMMIT_EVERY: Duration = Duration::from_millis(200);

/// ... or once this many bytes were written since the last one, so that the last fsync, which
/// the export waits for, has at most this much left however fast the pages come (at 300,000
/// messages/s, 200 ms was some 20 MB: a tenth of a 100,000-message export's time on a disk).
pub(super) const COMMIT_BYTES: usize = 4 << 20;

/// The error of an export stopped by Ctrl-C (exit 130): every target it was exporting
/// committed what it had fetched, so the same command goes on from there.
pub(super) fn interrupted() -> CliError {
    CliError::Interrupted {
        resume: "the same command".into(),
    }
}
