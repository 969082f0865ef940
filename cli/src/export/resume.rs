//! Resuming: where a target's export starts (its checkpoint, checked to be of this export; a
//! finished file left alone), and how a page is placed against what was written already (the
//! one message of overlap, the step back after deletions).

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use serde_json::value::RawValue;

use super::command::Job;
use super::naming::Target;
use super::record::{head, Identity};
use super::store::{self, Checkpoint, Paths};
use crate::error::CliError;
use crate::safe_text::terminal_line;

/// Where `target`'s export starts: its checkpoint (a new one when there is none), or `None`
/// when there is nothing left to do (its file is there already).
pub(super) fn start(
    job: &Job<'_>,
    target: &Target,
    paths: &Paths,
) -> Result<Option<Checkpoint>, CliError> {
    let label = target.label();
    if job.restart {
        for p in [
            &paths.checkpoint,
            &paths.part,
            &paths.staging,
            &paths.output,
        ] {
            store::remove_if_there(p)?;
        }
    }
    let mut checkpoint = match store::load_checkpoint(&paths.checkpoint)? {
        Some(c) => {
            let wanted = (
                target.room.as_str(),
                target.channel.as_deref(),
                job.after.as_ref().map(|a| a.0.as_str()),
                job.before.as_ref().map(|b| b.0.as_str()),
            );
            let has = (
                c.room.as_str(),
                c.channel.as_deref(),
                c.after.as_deref(),
                c.before.as_deref(),
            );
            if wanted != has {
                return Err(CliError::Usage(format!(
                    "{}: the checkpoint is of another export ({}); run that one again to \
                     finish it, or use --restart to start this one over",
                    paths.checkpoint.display(),
                    terminal_line(&describe(&c))
                )));
            }
            c
        }
        None if paths.output.exists() => {
            // A part file left by a stop just after the rendered file was put in place.
            store::remove_if_there(&paths.part)?;
            job.stats.skipped.fetch_add(1, Ordering::Relaxed);
            job.progress.note(&format!(
                "{label}: {} is there already (use --restart to export again)",
                paths.output.display()
            ));
            return Ok(None);
        }
        None => Checkpoint::new(
            &target.room,
            target.channel.as_deref(),
            job.after.as_ref().map(|a| a.0.clone()),
            job.before.as_ref().map(|b| b.0.clone()),
        ),
    };

    if checkpoint.fetched_all && !paths.part.exists() && paths.output.exists() {
        // Killed between the final rename and the checkpoint's removal.
        store::remove_if_there(&paths.checkpoint)?;
        job.stats.rooms.fetch_add(1, Ordering::Relaxed);
        return Ok(None);
    }
    if checkpoint.fetched_all && paths.part.exists() {
        // Stopped while the final file was being written: the listing's end was reached then;
        // ask again from there, for what was posted since (one page when nothing was).
        checkpoint.fetched_all = false;
    }
    Ok(Some(checkpoint))
}

/// What export a checkpoint is of, as its command line says it: `ROOM[/CHANNEL]` and the time
/// filter (`alpha/side --after 2024-01-01`).
fn describe(checkpoint: &Checkpoint) -> String {
    let mut text = match &checkpoint.channel {
        Some(channel) => format!("{}/{channel}", checkpoint.room),
        None => checkpoint.room.clone(),
    };
    for (flag, time) in [
        ("--after", &checkpoint.after),
        ("--before", &checkpoint.before),
    ] {
        if let Some(time) = time {
            text.push_str(&format!(" {flag} {time}"));
        }
    }
    text
}

/// How a page of the listing is placed against what was written already.
///
/// The listing is the room's messages oldest first, and the part file holds a prefix of it as
/// it was (less what the time filter dropped): a message posted since comes after them, and
/// one deleted since moves the later ones a place towards the start. So each page is asked for
/// from the last message listed (one message of overlap) and must begin with it; then the rest
/// of the page is new. When it does not (messages before it were deleted), the export
/// resynchronises: it reads the identity of every message the part file holds, steps back a
/// page at a time until a page begins with one of them (or is the listing's start), and from
/// there skips the messages the part file holds, until it writes one it does not: that one was
/// never listed, so neither was any after it. Memory grows with the room only while a resync
/// lasts, and no number of ids bounds it.
pub(super) struct Placement {
    /// The last message listed (written, or dropped by the time filter).
    last: Option<Identity>,
    /// While resynchronising: the identities the part file holds.
    written: Option<HashSet<Identity>>,
}

/// Where a page starts, for [`Placement::place`].
#[derive(Debug, PartialEq, Eq)]
pub(super) enum PageStart {
    /// In place: its messages go on from what was listed (the first skipped when
    /// `skip_first`: the message of overlap, listed already).
    InPlace { skip_first: bool },
    /// Messages before this page were deleted: step back a page.
    StepBack,
}

impl Placement {
    pub(super) fn new(last: Option<Identity>) -> Placement {
        Placement {
            last,
            written: None,
        }
    }

    /// The last message listed, for the checkpoint.
    pub(super) fn last(&self) -> Option<&Identity> {
        self.last.as_ref()
    }

    /// Where the page of `items` starts, `overlap` telling whether it was asked for from the
    /// last message listed; `written` reads the part file's identities when a resync begins.
    pub(super) fn place(
        &mut self,
        items: &[&RawValue],
        overlap: bool,
        written: impl FnOnce() -> Result<HashSet<Identity>, CliError>,
    ) -> Result<PageStart, CliError> {
        if !overlap {
            return Ok(PageStart::InPlace { skip_first: false });
        }
        let first = items.first().map(|raw| (*raw, head(raw.get()).0));
        if let (Some(last), Some((raw, id))) = (&self.last, &first) {
            if last.is(raw, id.as_deref()) {
                return Ok(PageStart::InPlace { skip_first: true });
            }
        }
        let written = match &mut self.written {
            Some(w) => w,
            None => self.written.insert(written()?),
        };
        Ok(match first {
            Some((raw, id)) if written.contains(&Identity::of(raw, id.as_deref())) => {
                PageStart::InPlace { skip_first: false }
            }
            _ => PageStart::StepBack,
        })
    }

    /// Whether a resync is on and the part file holds the message (then it is skipped).
    pub(super) fn holds(&self, raw: &RawValue, id: Option<&str>) -> bool {
        self.written
            .as_ref()
            .is_some_and(|w| w.contains(&Identity::of(raw, id)))
    }

    /// A message the part file did not hold was written: a resync is over.
    pub(super) fn wrote(&mut self) {
        self.written = None;
    }

    /// `last` is the last message listed now.
    pub(super) fn listed(&mut self, last: Identity) {
        self.last = Some(last);
    }
}
