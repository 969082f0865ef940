//! Resuming: where a target's export starts (its checkpoint, checked to be of this export; a
//! finished file left alone), and how a page is placed against what was written already (the
//! one message of overlap, the step back after deletions).

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use serde_json::value::RawValue;

use super::job::Job;
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
    /// A resync is on (in the checkpoint too: a run stopped during one resumes it).
    resyncing: bool,
    /// While resynchronising: the identities the part file holds (read at the resync's first
    /// page in this run).
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
    /// From a checkpoint's `last` and `resyncing`.
    pub(super) fn new(last: Option<Identity>, resyncing: bool) -> Placement {
        Placement {
            last,
            resyncing,
            written: None,
        }
    }

    /// The last message listed, for the checkpoint.
    pub(super) fn last(&self) -> Option<&Identity> {
        self.last.as_ref()
    }

    /// Whether a resync is on, for the checkpoint.
    pub(super) fn resyncing(&self) -> bool {
        self.resyncing
    }

    /// Where the page of `items` starts, `overlap` telling whether it was asked for from the
    /// last message listed; `written` reads the part file's identities when a resync needs
    /// them.
    pub(super) fn place(
        &mut self,
        items: &[&RawValue],
        overlap: bool,
        written: impl FnOnce() -> Result<HashSet<Identity>, CliError>,
    ) -> Result<PageStart, CliError> {
        let first = items.first().map(|raw| (*raw, head(raw.get()).0));
        let anchored = match (&self.last, &first) {
            (Some(last), Some((raw, id))) => last.is(raw, id.as_deref()),
            _ => false,
        };
        if overlap && !anchored {
            // Shifted: messages before this page were deleted.
            self.resyncing = true;
        }
        if self.resyncing && self.written.is_none() {
            self.written = Some(written()?);
        }
        if !overlap || anchored {
            return Ok(PageStart::InPlace {
                skip_first: anchored && overlap,
            });
        }
        let known = match (&self.written, first) {
            (Some(written), Some((raw, id))) => written.contains(&Identity::of(raw, id.as_deref())),
            _ => false,
        };
        Ok(match known {
            true => PageStart::InPlace { skip_first: false },
            false => PageStart::StepBack,
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
        self.resyncing = false;
        self.written = None;
    }

    /// `last` is the last message listed now.
    pub(super) fn listed(&mut self, last: Identity) {
        self.last = Some(last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        serde_json::from_str(text).unwrap()
    }

    /// A run stopped during a resync (its checkpoint's last message one the part file held,
    /// more of them after it) resumes the resync: what follows the last message listed is
    /// looked up, not taken as new.
    #[test]
    fn a_resync_in_progress_is_resumed() {
        let (k3, k4, n5) = (
            raw(r#"{"_id":"k3"}"#),
            raw(r#"{"_id":"k4"}"#),
            raw(r#"{"_id":"n5"}"#),
        );
        let page = [&*k3, &*k4, &*n5];
        let part = || -> Result<HashSet<Identity>, CliError> {
            Ok(["k1", "k2", "k3", "k4"]
                .map(|id| Identity::Id(id.into()))
                .into())
        };
        let mut placement = Placement::new(Some(Identity::Id("k3".into())), true);
        assert_eq!(
            placement.place(&page, true, part).unwrap(),
            PageStart::InPlace { skip_first: true }
        );
        assert!(placement.holds(&k4, Some("k4")));
        assert!(!placement.holds(&n5, Some("n5")));
        placement.wrote();
        assert!(!placement.resyncing());
        // Not resynchronising: the page goes on from the last message, nothing read.
        let mut placement = Placement::new(Some(Identity::Id("k3".into())), false);
        let unread = || -> Result<HashSet<Identity>, CliError> { panic!("read") };
        assert_eq!(
            placement.place(&page, true, unread).unwrap(),
            PageStart::InPlace { skip_first: true }
        );
        assert!(!placement.holds(&k4, Some("k4")));
        // Shifted, its first message held: looked up; not held: a step back.
        let mut placement = Placement::new(Some(Identity::Id("k9".into())), false);
        assert_eq!(
            placement.place(&page, true, part).unwrap(),
            PageStart::InPlace { skip_first: false }
        );
        assert!(placement.resyncing());
        let mut placement = Placement::new(Some(Identity::Id("k9".into())), false);
        assert_eq!(
            placement.place(&[&*n5], true, part).unwrap(),
            PageStart::StepBack
        );
    }
}
