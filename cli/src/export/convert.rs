//! Converting: the formats other than jsonl rendered into the staging file on a thread of its
//! own while the pages come.

use std::io::{BufReader, BufWriter, Read};
use std::sync::mpsc::{Receiver, TrySendError};
use std::time::Instant;

use super::commit::{self, Staged};
use super::fetch::call_patiently;
use super::job::{Job, COMMIT_BYTES, COMMIT_EVERY};
use super::naming::Target;
use super::store::{self, Access, Checkpoint, Paths};
use super::{formats, progress, Format};
use crate::error::CliError;

/// How many pages the fetch may be ahead of the converter (then it waits for it).
const PAGES_AHEAD: usize = 8;

/// [`commit::fetch_all`] (unless the listing's end was reached already) with a converter thread
/// rendering the records into the staging file as they come (see [`convert`]); the rendering,
/// all but its closing. A converter's error ends the fetch (its next page finds the channel
/// closed) and is the one returned; a fetch's error ends the converter (the channel closes).
pub(super) fn fetch_rendering(
    job: &Job<'_>,
    target: &Target,
    paths: &Paths,
    checkpoint: &mut Checkpoint,
    bar: &progress::RoomBar<'_>,
    first: Option<Vec<u8>>,
) -> Result<Staged, CliError> {
    // The title comes first: the room's name is asked for now, when it is not known.
    let room_name = match (&target.name, job.format) {
        (Some(n), _) => Some(n.clone()),
        // Through the patient helper (a 429 is waited out, a timeout retried); a name that
        // cannot be had still leaves the export (its title then shows the room's id only).
        (None, Format::Html | Format::Txt) => {
            match call_patiently(&job.client, Some(job.stats), &job.cancel, || {
                job.client.get_chat_room(&target.room)
            }) {
                Ok(room) => room.name,
                // Ctrl-C: the fetch, next, stops.
                Err(_) if job.cancel.is_cancelled() => None,
                Err(e) => {
                    job.progress.note(&format!(
                        "{}: the room's name could not be read ({e}); the title shows its id",
                        target.label()
                    ));
                    None
                }
            }
        }
        _ => None,
    };
    let title = formats::Title {
        room: &target.room,
        room_name: room_name.as_deref(),
        channel: target.channel.as_deref(),
    };
    // Cut back to what the checkpoint vouches for before the converter reads that much.
    let part = match first {
        None => None,
        Some(first) => Some((store::open_part(&paths.part, checkpoint.part_bytes)?, first)),
    };
    let (format, prefix) = (job.format, checkpoint.part_bytes);
    let (pages, received) = std::sync::mpsc::sync_channel(PAGES_AHEAD);
    let result = std::thread::scope(|scope| {
        let title = &title;
        let converter =
            scope.spawn(move || convert(format, job.raw_csv_cells, paths, title, prefix, received));
        let fetched = match part {
            Some((part, first)) => commit::fetch_all(
                job,
                target,
                paths,
                part,
                checkpoint,
                bar,
                Some(&pages),
                first,
            ),
            None => Ok(()),
        };
        drop(pages);
        let converted = converter.join().unwrap_or_else(|_| {
            Err(CliError::Usage(format!(
                "{}: the converter stopped unexpectedly; run the same command again",
                paths.staging.display()
            )))
        });
        // The converter fails only of its own (a closed channel ends it well): its error
        // first, a fetch that stopped for it having no other to tell.
        match (fetched, converted) {
            (_, Err(e)) | (Err(e), Ok(_)) => Err(e),
            (Ok(()), Ok(staged)) => Ok(staged),
        }
    });
    if result.is_err() {
        // Rebuilt from the part file by the next run anyway.
        let _ = std::fs::remove_file(&paths.staging);
    }
    result
}

/// The converter: creates the staging file, writes the format's opening, renders the part
/// file's first `prefix` bytes (what a resumed export had), then every page's lines received,
/// flushing the staging file and fsyncing it (on a thread of its own) about every 200 ms, so
/// that the final fsync has little left. Ends when the fetch closes the channel, or at its own
/// error (which closes it).
fn convert(
    format: Format,
    raw_csv_cells: bool,
    paths: &Paths,
    title: &formats::Title<'_>,
    prefix: u64,
    pages: Receiver<Vec<u8>>,
) -> Result<Staged, CliError> {
    let staging = |e| store::io_error(&paths.staging, e);
    let input = store::open_own(&paths.part, Access::Read)?;
    let file = store::open_own(&paths.staging, Access::Truncate)?;
    let mut out =
        formats::Renderer::begin(format, BufWriter::with_capacity(256 * 1024, file), title)
            .map_err(staging)?
            .with_raw_csv_cells(raw_csv_cells);
    let mut last_sync = Instant::now();
    let mut unsynced = 0usize;
    let mut input = BufReader::with_capacity(256 * 1024, input.take(prefix));
    out.records(&mut input).map_err(staging)?;
    if input.into_inner().limit() > 0 {
        return Err(CliError::Usage(format!(
            "{}: shorter than its checkpoint says ({prefix} bytes); use --restart",
            paths.part.display()
        )));
    }
    // The fsyncs run on a thread of their own: the rendering goes on meanwhile.
    let syncing = out.get_ref().get_ref().try_clone().map_err(staging)?;
    std::thread::scope(|scope| {
        let (kick, kicks) = std::sync::mpsc::sync_channel::<()>(1);
        let syncer = scope.spawn(move || kicks.iter().try_for_each(|()| syncing.sync_data()));
        let render = || -> std::io::Result<()> {
            for page in pages {
                out.chunk(&page)?;
                unsynced += page.len();
                if unsynced >= COMMIT_BYTES || last_sync.elapsed() >= COMMIT_EVERY {
                    out.flush()?;
                    match kick.try_send(()) {
                        // Full: the last fsync is still running; this one waits for the next.
                        Ok(()) | Err(TrySendError::Full(())) => {}
                        // The syncer stopped at an error, told below.
                        Err(TrySendError::Disconnected(())) => break,
                    }
                    last_sync = Instant::now();
                    unsynced = 0;
                }
            }
            Ok(())
        };
        let rendered = render();
        drop(kick);
        let synced = syncer.join().unwrap_or_else(|_| {
            Err(std::io::Error::other(
                "the staging file's fsync thread stopped unexpectedly",
            ))
        });
        rendered.and(synced).map_err(staging)
    })?;
    Ok(out)
}
