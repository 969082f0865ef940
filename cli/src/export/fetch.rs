//! Fetching a room's listing: each page asked for patiently (429s waited out, transient
//! failures retried), parsed without copying its records, and its new records appended to the
//! part file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{SyncSender, TrySendError};
use std::time::{Duration, Instant};

use roomchat::wire::Operation;
use roomchat::{CancelToken, Client, ErrorKind};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::job::{Job, Stats, COMMIT_BYTES, COMMIT_EVERY};
use super::naming::Target;
use super::progress;
use super::record::{head, write_record, Identity};
use super::resume::{PageStart, Placement};
use super::store::{self, Checkpoint, Paths};
use super::time;
use crate::error::CliError;

/// Sends a repeatable call until it succeeds: through any number of 429s (the client's budget
/// holds every caller off as long as the service asked), and up to 5 retries of other
/// transient failures (timeouts, connections, 5xx) with a growing pause.
pub(super) fn call_patiently<T>(
    client: &Client,
    stats: Option<&Stats>,
    cancel: &CancelToken,
    call: impl FnMut() -> roomchat::Result<T>,
) -> Result<T, CliError> {
    patiently(
        call,
        || client.rate_limit_state().blocked_for.is_some(),
        |pause| sleep_unless_cancelled(pause, cancel),
        stats,
    )
}

/// Sleeps `pause`, in steps short enough that Ctrl-C (which cancels `cancel`) is not kept
/// waiting; whether it slept it all.
fn sleep_unless_cancelled(pause: Duration, cancel: &CancelToken) -> bool {
    let until = Instant::now() + pause;
    loop {
        if cancel.is_cancelled() {
            return false;
        }
        let now = Instant::now();
        if now >= until {
            return true;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(50)));
    }
}

/// [`call_patiently`]'s rules: `blocked` tells whether the client's budget holds calls off
/// already (a 429's `Retry-After`), `pause` waits (false: stop waiting, the call is cancelled).
/// `stats` counts each 429 met and each retry made (not the last failure, which is returned).
fn patiently<T>(
    mut call: impl FnMut() -> roomchat::Result<T>,
    blocked: impl Fn() -> bool,
    mut pause: impl FnMut(Duration) -> bool,
    stats: Option<&Stats>,
) -> Result<T, CliError> {
    let mut transient = 0u32;
    let mut limited = 0u32;
    loop {
        let error = match call() {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        let wait = if error.kind() == ErrorKind::RateLimited {
            if error.status() == Some(429) {
                if let Some(stats) = stats {
                    stats.rate_limited.fetch_add(1, Ordering::Relaxed);
                }
            }
            limited = limited.saturating_add(1);
            // The budget already holds off every call for the service's Retry-After; without
            // one, a pause growing to 30 s.
            if blocked() {
                Duration::ZERO
            } else {
                error
                    .retry_after()
                    .unwrap_or(Duration::from_millis(500) * 2u32.saturating_pow(limited.min(6)))
                    .min(Duration::from_secs(30))
            }
        } else if (matches!(
            error.kind(),
            ErrorKind::Timeout | ErrorKind::Connection | ErrorKind::ServerError
        ) || error.status() == Some(503))
            && transient < 5
        {
            transient += 1;
            if let Some(stats) = stats {
                stats.retries.fetch_add(1, Ordering::Relaxed);
            }
            Duration::from_millis(250) * 2u32.pow(transient)
        } else {
            return Err(CliError::Sdk(error));
        };
        if !wait.is_zero() && !pause(wait) {
            return Err(CliError::Sdk(roomchat::Error::new(
                ErrorKind::Cancelled,
                "interrupted while waiting to ask again",
            )));
        }
    }
}

/// One page of messages, borrowed from the answer's body.
#[derive(Deserialize)]
struct PageView<'a> {
    #[serde(rename = "totalRecords", default, deserialize_with = "count")]
    total_records: Option<u64>,
    /// The limit the service applied (it may cap what was asked for).
    #[serde(default, deserialize_with = "count")]
    limit: Option<u64>,
    /// The skip the service applied.
    #[serde(default, deserialize_with = "count")]
    skip: Option<u64>,
    #[serde(borrow, default)]
    messages: Option<Vec<&'a RawValue>>,
    #[serde(default)]
    success: Option<bool>,
}

/// A count of a page (`totalRecords`, `limit`, `skip`): a number, or a string holding one;
/// anything else is no count (the page's messages are what matters).
fn count<'de, D: serde::Deserializer<'de>>(value: D) -> Result<Option<u64>, D::Error> {
    Ok(match serde_json::Value::deserialize(value)? {
        serde_json::Value::Number(n) => n.as_u64(),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    })
}

/// Whether the page at `skip` of `items` messages, asked for with `limit` (and `skip_first`,
/// its first message listed already), is the listing's last. It is when it brings nothing new;
/// else when it holds fewer messages than the limit the service applied (the page's `limit`
/// when it says a smaller one: a service may cap what is asked for) and, when the page says
/// the room's total, that total is reached. A page that says a smaller limit and holds it is
/// never the last, nor is a short one short of the total.
fn is_last_page(page: &PageView<'_>, skip: u64, items: u64, limit: u64, skip_first: bool) -> bool {
    if items <= u64::from(skip_first) {
        return true;
    }
    let applied = page
        .limit
        .filter(|&l| l > 0)
        .map_or(limit, |l| l.min(limit));
    items < applied && page.total_records.is_none_or(|total| skip + items >= total)
}

/// The request of the page from `next_skip` on: its `skip`, `limit` and whether it overlaps
/// (one message of overlap: the page must begin with the last message already listed).
fn request_at(next_skip: u64, page_size: u64) -> (u64, u64, u64) {
    let overlap = u64::from(next_skip > 0);
    (next_skip - overlap, page_size + overlap, overlap)
}

/// The operation listing `target`'s messages.
fn operation_of(target: &Target) -> Operation {
    if target.channel.is_some() {
        Operation::ChannelMessages
    } else {
        Operation::RoomMessages
    }
}

/// The first page left to fetch (from the checkpoint on), asked for before the export makes
/// any file: a room or channel that does not exist (or an answer that is not a page) fails
/// with nothing left behind.
pub(super) fn first_page(
    job: &Job<'_>,
    target: &Target,
    checkpoint: &Checkpoint,
) -> Result<Vec<u8>, CliError> {
    let (skip, limit, _) = request_at(checkpoint.next_skip, job.page_size);
    let body = fetch_page(job, target, skip, limit)?;
    parse_page(operation_of(target), &body, &target.label())?;
    Ok(body)
}

/// The body of one page of the room's (or channel's) listing.
fn fetch_page(job: &Job<'_>, target: &Target, skip: u64, limit: u64) -> Result<Vec<u8>, CliError> {
    let client = &job.client;
    let mut params = serde_json::json!({"roomId": target.room, "limit": limit, "skip": skip});
    let operation = match &target.channel {
        Some(channel) => {
            params["channelId"] = channel.as_str().into();
            Operation::ChannelMessages
        }
        None => Operation::RoomMessages,
    };
    call_patiently(client, Some(job.stats), &job.cancel, || {
        client.call_declared_with(operation, &params, |response| {
            if (200..300).contains(&response.status) {
                Ok(response.body.clone())
            } else {
                Err(operation
                    .decode(response)
                    .err()
                    .unwrap_or_else(|| roomchat::Error::new(ErrorKind::Decode, "an error answer")))
            }
        })
    })
}

/// Parses a page's body; an answer that is not a page is the error the declaration's decode
/// gives it (`"success": false`, another shape).
fn parse_page<'b>(
    operation: Operation,
    body: &'b [u8],
    label: &str,
) -> Result<PageView<'b>, CliError> {
    match serde_json::from_slice::<PageView<'_>>(body) {
        Ok(page) if page.success != Some(false) && page.messages.is_some() => Ok(page),
        parsed => {
            let response = roomchat::wire::WireResponse::new(200, Vec::new(), body.to_vec());
            let error = match operation.decode(&response) {
                Err(e) => e,
                Ok(_) => roomchat::Error::new(
                    ErrorKind::Decode,
                    format!(
                        "a page of {} has no \"messages\" array{}",
                        crate::safe_text::terminal_line(label),
                        parsed.err().map(|e| format!(": {e}")).unwrap_or_default()
                    ),
                ),
            };
            Err(CliError::Sdk(error))
        }
    }
}

/// How [`fetch_pages`] stopped.
pub(super) enum Stopped {
    /// At the listing's end (or at the committer's error, which it tells): the part file
    /// when the end is left to commit (jsonl), `None` when [`commit::finish`] commits it.
    End(Option<BufWriter<File>>),
    /// At Ctrl-C: the part file, which the checkpoint describes, left to commit.
    Interrupted(BufWriter<File>),
}

/// Puts the progress made in `checkpoint`.
#[allow(clippy::too_many_arguments)]
fn record(
    checkpoint: &mut Checkpoint,
    next_skip: u64,
    messages: u64,
    part_bytes: u64,
    placement: &Placement,
    total: Option<u64>,
    at_end: bool,
) {
    checkpoint.next_skip = next_skip;
    checkpoint.messages = messages;
    checkpoint.part_bytes = part_bytes;
    checkpoint.last = placement.last().cloned();
    checkpoint.resyncing = placement.resyncing();
    checkpoint.total = total;
    checkpoint.fetched_all = at_end;
}

/// [`commit::fetch_all`]'s fetch: to the listing's end (or Ctrl-C), handing every commit due
/// but the last to `commits`.
#[allow(clippy::too_many_arguments)]
pub(super) fn fetch_pages(
    job: &Job<'_>,
    target: &Target,
    paths: &Paths,
    part: File,
    checkpoint: &mut Checkpoint,
    bar: &progress::RoomBar<'_>,
    pages: Option<&SyncSender<Vec<u8>>>,
    commits: &SyncSender<Checkpoint>,
    first: Vec<u8>,
) -> Result<Stopped, CliError> {
    let mut part = BufWriter::with_capacity(256 * 1024, part);
    let mut placement = Placement::new(checkpoint.last.clone(), checkpoint.resyncing);
    // Uncommitted progress: written to the part file's buffer, not yet vouched for.
    let (mut next_skip, mut messages, mut part_bytes) = (
        checkpoint.next_skip,
        checkpoint.messages,
        checkpoint.part_bytes,
    );
    let mut total = checkpoint.total;
    let mut last_commit = (Instant::now(), part_bytes);
    // This page's new lines, for the part file (and the converter).
    let mut lines = Vec::with_capacity(64 * 1024);
    let mut first = Some(first);
    loop {
        let (skip, limit, overlap) = request_at(next_skip, job.page_size);
        // `None` at Ctrl-C (a call cancelled in flight, or before the next).
        let body = match first.take() {
            Some(body) => Some(body),
            None if job.cancel.is_cancelled() => None,
            None => match fetch_page(job, target, skip, limit) {
                Ok(body) => Some(body),
                Err(_) if job.cancel.is_cancelled() => None,
                Err(e) => return Err(e),
            },
        };
        let Some(body) = body else {
            // What was fetched is left to commit.
            record(
                checkpoint, next_skip, messages, part_bytes, &placement, total, false,
            );
            return Ok(Stopped::Interrupted(part));
        };
        let page = parse_page(operation_of(target), &body, &target.label())?;
        if page.skip.is_some_and(|s| s != skip) {
            // Its messages are not where the export would write them.
            return Err(CliError::Sdk(roomchat::Error::new(
                ErrorKind::Decode,
                format!(
                    "a page of {} asked for at skip {skip} says skip {}: the service did not page as asked",
                    crate::safe_text::terminal_line(&target.label()),
                    page.skip.unwrap_or_default()
                ),
            )));
        }
        let items = page.messages.as_deref().unwrap_or_default();
        if let Some(t) = page.total_records {
            total = Some(t);
        }
        let skip_first = match placement.place(items, overlap == 1, || {
            // A resync: the part file's identities, all it holds so far.
            part.flush().map_err(|e| store::io_error(&paths.part, e))?;
            store::written_identities(&paths.part, part_bytes)
        })? {
            PageStart::InPlace { skip_first } => skip_first,
            PageStart::StepBack => {
                next_skip = match page.total_records {
                    // Past the listing's end now: back to its last message at once.
                    Some(t) if items.is_empty() && t < next_skip => t,
                    _ => next_skip.saturating_sub(job.page_size),
                };
                continue;
            }
        };
        for raw in &items[usize::from(skip_first).min(items.len())..] {
            let (id, created) = head(raw.get());
            if placement.holds(raw, id.as_deref()) {
                continue;
            }
            if !time::keep(job.after_time(), job.before_time(), created.as_ref()) {
                continue;
            }
            write_record(&mut lines, raw);
            messages += 1;
            placement.wrote();
        }
        if let Some(raw) = items.last() {
            placement.listed(Identity::of(raw, head(raw.get()).0.as_deref()));
        }
        part.write_all(&lines)
            .map_err(|e| store::io_error(&paths.part, e))?;
        part_bytes += lines.len() as u64;
        match pages {
            Some(pages) if !lines.is_empty() => {
                let room_for_next = lines.len() + lines.len() / 4;
                let page = std::mem::replace(&mut lines, Vec::with_capacity(room_for_next));
                // Closed: the converter stopped at an error, which is the one told.
                pages.send(page).map_err(|_| {
                    CliError::Usage(format!(
                        "{}: the converter stopped",
                        paths.staging.display()
                    ))
                })?;
            }
            _ => lines.clear(),
        }
        next_skip = skip + items.len() as u64;
        let at_end = is_last_page(&page, skip, items.len() as u64, limit, skip_first);
        bar.update(next_skip, total);
        if at_end
            || last_commit.0.elapsed() >= COMMIT_EVERY
            || part_bytes - last_commit.1 >= COMMIT_BYTES as u64
        {
            record(
                checkpoint, next_skip, messages, part_bytes, &placement, total, at_end,
            );
            // With a converter (any format but jsonl), the listing's end is committed by
            // `finish`: the rendered file fsynced and renamed into place, then the checkpoint
            // and the part file removed. Making the part file durable first would be work
            // thrown away (an fsync of all it got since the last commit); a stop before that
            // resumes from the last commit.
            if at_end {
                return Ok(Stopped::End(pages.is_none().then_some(part)));
            }
            part.flush().map_err(|e| store::io_error(&paths.part, e))?;
            match commits.try_send(checkpoint.clone()) {
                // Full: one commit runs and one waits; this one is left for the next due.
                Ok(()) | Err(TrySendError::Full(_)) => last_commit = (Instant::now(), part_bytes),
                // The committer stopped at an error, which `fetch_all` tells.
                Err(TrySendError::Disconnected(_)) => return Ok(Stopped::End(None)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary's retries are the retries made: 6 attempts of a failing call are 5.
    #[test]
    fn retries_are_counted_as_made_and_429s_as_met() {
        let stats = Stats::default();
        let (mut calls, mut pauses) = (0, Vec::new());
        let failed = patiently(
            || -> roomchat::Result<()> {
                calls += 1;
                Err(roomchat::Error::new(ErrorKind::ServerError, "boom"))
            },
            || false,
            |d| {
                pauses.push(d);
                true
            },
            Some(&stats),
        );
        assert_eq!(failed.unwrap_err().exit_code(), 17);
        assert_eq!(calls, 6);
        assert_eq!(stats.retries.load(Ordering::Relaxed), 5);
        assert_eq!(pauses.len(), 5);
        // Not transient: returned at once, no retry counted.
        let stats = Stats::default();
        let refused = patiently(
            || -> roomchat::Result<()> { Err(roomchat::Error::new(ErrorKind::NotFound, "no")) },
            || false,
            |_| true,
            Some(&stats),
        );
        assert_eq!(refused.unwrap_err().exit_code(), 28);
        assert_eq!(stats.retries.load(Ordering::Relaxed), 0);
        // A wait that is cut short (Ctrl-C) ends the call as cancelled.
        let cut = patiently(
            || -> roomchat::Result<()> { Err(roomchat::Error::new(ErrorKind::Timeout, "slow")) },
            || false,
            |_| false,
            None,
        );
        assert_eq!(cut.unwrap_err().kind_name(), "cancelled");
    }
}
