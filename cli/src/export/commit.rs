//! Committing: the part file made durable and the checkpoint that vouches for it put in place
//! (on a committer thread while the fetch goes on), and the final file put in place at the end.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::mpsc::SyncSender;

use super::fetch::{fetch_pages, Stopped};
use super::job::{interrupted, Job};
use super::naming::Target;
use super::progress;
use super::store::{self, Checkpoint, Paths};
use super::{formats, time};
use crate::error::CliError;

/// The final file of a format other than jsonl, being rendered into the staging file.
pub(super) type Staged = formats::Renderer<BufWriter<File>>;

/// Fetches the listing from the checkpoint on, appending each page's new records to the part
/// file (`part`, cut back to the checkpoint already) and, with `pages`, handing them to the
/// converter; commits every 200 ms or 4 MiB ([`COMMIT_EVERY`](super::job::COMMIT_EVERY),
/// [`COMMIT_BYTES`](super::job::COMMIT_BYTES)) and at the end.
///
/// Those commits run on a committer thread: the part file's fsync (all it got since the
/// last one, some 20 MB at full speed every 200 ms) and the checkpoint's replacement took
/// the fetch off the wire meanwhile, which made a 100,000-message export to a disk 0.7-0.9x
/// the SDK iterator's rate where it was 1.1-1.5x to tmpfs. A checkpoint still vouches only
/// for what is durable: the fetch flushes the part file's buffer before it hands the
/// committer a copy of the checkpoint, and the committer fsyncs the part file before it
/// writes that copy. The committer takes them in order, one queued behind the one running
/// at most (a commit due when both are taken is dropped; the next one due comes 200 ms or
/// 4 MiB later), and is done before the listing's end is committed here or [`finish`]
/// commits it: no late copy can replace a later checkpoint or outlive the export.
#[allow(clippy::too_many_arguments)]
pub(super) fn fetch_all(
    job: &Job<'_>,
    target: &Target,
    paths: &Paths,
    part: File,
    checkpoint: &mut Checkpoint,
    bar: &progress::RoomBar<'_>,
    pages: Option<&SyncSender<Vec<u8>>>,
    first: Vec<u8>,
) -> Result<(), CliError> {
    let syncing = part
        .try_clone()
        .map_err(|e| store::io_error(&paths.part, e))?;
    std::thread::scope(|scope| {
        let (commits, to_commit) = std::sync::mpsc::sync_channel::<Checkpoint>(1);
        let committer = scope.spawn(move || -> Result<(), CliError> {
            to_commit
                .iter()
                .try_for_each(|copy| commit(&syncing, paths, &copy))
        });
        let fetched = fetch_pages(
            job, target, paths, part, checkpoint, bar, pages, &commits, first,
        );
        drop(commits);
        let committed = committer.join().unwrap_or_else(|_| {
            Err(CliError::Usage(format!(
                "{}: the committer stopped unexpectedly; run the same command again",
                paths.checkpoint.display()
            )))
        });
        // The committer's error first: a fetch that stopped for it has no other to tell.
        match committed.and(fetched)? {
            Stopped::End(None) => Ok(()),
            Stopped::End(Some(mut part)) => {
                // A jsonl export's end, committed once every earlier commit is done: the part
                // file (the final file) durable, then the checkpoint saying the listing is done.
                part.flush().map_err(|e| store::io_error(&paths.part, e))?;
                commit(part.get_ref(), paths, checkpoint)
            }
            Stopped::Interrupted(mut part) => {
                // Ctrl-C: what was fetched committed the same way, then the run stops.
                part.flush().map_err(|e| store::io_error(&paths.part, e))?;
                commit(part.get_ref(), paths, checkpoint)?;
                Err(interrupted())
            }
        }
    })
}

/// One commit: the part file's data made durable, then `checkpoint`, which vouches for it,
/// put in place (the part file's writes it covers were flushed before).
pub(super) fn commit(part: &File, paths: &Paths, checkpoint: &Checkpoint) -> Result<(), CliError> {
    part.sync_data()
        .map_err(|e| store::io_error(&paths.part, e))?;
    store::save_checkpoint(&paths.checkpoint, checkpoint)
}

/// Puts the final file in place: jsonl's part file renamed, or `staged` (every record
/// rendered) closed, fsynced and renamed; then the checkpoint and the part file removed. Its size.
pub(super) fn finish(
    paths: &Paths,
    checkpoint: &Checkpoint,
    staged: Option<Staged>,
) -> Result<u64, CliError> {
    match staged {
        None => {
            // The part file is the jsonl export: fsynced at the last commit, renamed into place.
            if paths.part.exists() {
                std::fs::rename(&paths.part, &paths.output)
                    .map_err(|e| store::io_error(&paths.output, e))?;
                store::sync_parent(&paths.output)?;
            }
            store::remove_if_there(&paths.checkpoint)?;
            store::sync_parent(&paths.checkpoint)?;
        }
        Some(staged) => {
            let exported_at = time::now_rfc3339();
            let footer = formats::Footer {
                messages: checkpoint.messages,
                exported_at: &exported_at,
            };
            let out = staged
                .end(&footer)
                .map_err(|e| store::io_error(&paths.staging, e))?;
            let file = out
                .into_inner()
                .map_err(|e| store::io_error(&paths.staging, e.into_error()))?;
            file.sync_all()
                .map_err(|e| store::io_error(&paths.staging, e))?;
            drop(file);
            std::fs::rename(&paths.staging, &paths.output)
                .map_err(|e| store::io_error(&paths.output, e))?;
            store::sync_parent(&paths.output)?;
            // The checkpoint before the part file: a stop between the two leaves the export
            // done and a stray part file (the next run removes it), never a checkpoint whose
            // part file is gone.
            store::remove_if_there(&paths.checkpoint)?;
            store::sync_parent(&paths.checkpoint)?;
            store::remove_if_there(&paths.part)?;
        }
    }
    Ok(std::fs::metadata(&paths.output)
        .map(|m| m.len())
        .unwrap_or_default())
}
