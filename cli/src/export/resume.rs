//! Resuming: where a target's export starts (its checkpoint, checked to be of this export; a
//! finished file left alone), and how a page is placed against what was written already (the
//! one message of overlap, the step back after deletions).

use std::sync::atomic::Ordering;

use serde_json::value::RawValue;

use super::command::Job;
use super::naming::Target;
use super::record::{head, Identity};
use super::store::{self, Checkpoint, Paths, RecentIds};
use crate::error::CliError;

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
                    "{}: the checkpoint is of another export ({} {:?} after {:?} before {:?}); \
                     run that one again, or use --restart",
                    paths.checkpoint.display(),
                    c.room,
                    c.channel,
                    c.after,
                    c.before
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

/// How a page of the listing starts against what was written already.
pub(super) enum PageStart {
    /// With the last message listed (the page of overlap, as expected): the rest is new.
    Anchored,
    /// Elsewhere, but with a message seen already: each message is looked up.
    Shifted,
    /// Messages before this point were deleted (or the listing changed order): step back a
    /// page and let the recent ids drop what was seen already.
    StepBack,
}

/// Where the page of `items` starts, `overlap` telling whether it was asked for from the last
/// message listed.
pub(super) fn page_start(items: &[&RawValue], overlap: bool, recent: &RecentIds) -> PageStart {
    if !overlap {
        return PageStart::Shifted;
    }
    let Some(first) = items.first() else {
        return PageStart::StepBack;
    };
    let first_id = head(first.get()).0;
    if recent
        .last()
        .is_some_and(|last| last.is(first, first_id.as_deref()))
    {
        return PageStart::Anchored;
    }
    if recent.contains(&Identity::of(first, first_id.as_deref())) {
        PageStart::Shifted
    } else {
        PageStart::StepBack
    }
}
