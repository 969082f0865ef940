//! The import's result file: one line per row, in the input's order, written atomically (a
//! temporary file fsynced, renamed over the old one, the folder fsynced), each cell safe in a
//! spreadsheet. No access token in it. `-` is standard output; a symbolic link is written
//! through (its target replaced atomically, the link kept) and a device or a FIFO written
//! into: neither is ever replaced by a regular file.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use super::create::Outcome;
use super::rows::Row;
use crate::error::CliError;
use crate::safe_text::csv_cell;

/// The columns of the result file.
const COLUMNS: [&str; 6] = [
    "line",
    "uniqueUserIdentifier",
    "username",
    "result",
    "userId",
    "reason",
];

/// Where `--results` sends the result file, decided before the import starts (so that a name
/// that cannot take it is refused before anything is created).
#[derive(Debug)]
pub enum Destination {
    /// `-`, or a path to the file standard output is (`/dev/stdout`, `/proc/self/fd/1`, the
    /// file it is redirected to): standard output, written where it stands (what it holds
    /// already is kept).
    Stdout,
    /// A path to the file standard error is (`/dev/stderr`). Found on Unix only (by the
    /// file's device and inode), so elsewhere never made.
    #[cfg_attr(not(unix), allow(dead_code))]
    Stderr,
    /// A regular file (or none yet) at this path, replaced atomically: the path named, or the
    /// regular file a symbolic link named leads to.
    File(PathBuf),
    /// A device or a FIFO (`/dev/stdout`, `/dev/null`, a named pipe), or a link to one: written
    /// into, as the shell's `>` would.
    Into(PathBuf),
}

impl Destination {
    pub fn of(path: &Path) -> Result<Destination, CliError> {
        if path.as_os_str() == "-" {
            return Ok(Destination::Stdout);
        }
        let io = |e| crate::export::io_error(path, e);
        let link = match fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Destination::File(path.into()))
            }
            Err(e) => return Err(io(e)),
            Ok(meta) => meta.file_type().is_symlink(),
        };
        // What the path leads to (through any links).
        let meta = fs::metadata(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => io(std::io::Error::other(
                "a symbolic link to nothing: refused (name the file it should lead to)",
            )),
            _ => io(e),
        })?;
        if meta.is_dir() {
            return Err(io(std::io::Error::other("a folder")));
        }
        if let Some(stream) = standard_stream(&meta) {
            return Ok(stream);
        }
        if !meta.is_file() {
            return Ok(Destination::Into(path.into()));
        }
        if link {
            return fs::canonicalize(path).map(Destination::File).map_err(io);
        }
        Ok(Destination::File(path.into()))
    }
}

/// The standard stream whose file `meta` is, if any: replacing that file (a redirection's)
/// would lose what it holds, and what is written to the stream after.
#[cfg(unix)]
fn standard_stream(meta: &fs::Metadata) -> Option<Destination> {
    use std::os::fd::{AsFd, BorrowedFd};
    use std::os::unix::fs::MetadataExt;
    let same = |fd: BorrowedFd<'_>| {
        fd.try_clone_to_owned()
            .map(fs::File::from)
            .and_then(|file| file.metadata())
            .is_ok_and(|m| (m.dev(), m.ino()) == (meta.dev(), meta.ino()))
    };
    if same(std::io::stdout().as_fd()) {
        Some(Destination::Stdout)
    } else if same(std::io::stderr().as_fd()) {
        Some(Destination::Stderr)
    } else {
        None
    }
}

#[cfg(not(unix))]
fn standard_stream(_: &fs::Metadata) -> Option<Destination> {
    None
}

/// Writes the result file to `to`; `raw`: `--raw-csv-cells` (cells as they are, formulas
/// included).
pub fn write(
    path: &Path,
    to: &Destination,
    rows: &[Row],
    outcomes: &[Outcome],
    raw: bool,
) -> Result<(), CliError> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    let csv_error = |e: csv::Error| CliError::Usage(format!("{}: {e}", path.display()));
    writer.write_record(COLUMNS).map_err(csv_error)?;
    for (row, outcome) in rows.iter().zip(outcomes) {
        let (user_id, reason) = match outcome {
            Outcome::Created { user_id, note } | Outcome::AlreadyThere { user_id, note } => {
                (user_id.as_str(), note.as_str())
            }
            Outcome::Failed { reason, .. } | Outcome::NotAttempted { reason } => {
                ("", reason.as_str())
            }
        };
        let line = row.line.to_string();
        let (uid, username) = (row.text("uniqueUserIdentifier"), row.text("username"));
        let cells = [
            line.as_str(),
            &uid,
            &username,
            outcome.name(),
            user_id,
            reason,
        ];
        writer
            .write_record(
                cells
                    .map(|cell| csv_cell(cell, raw))
                    .iter()
                    .map(|c| c.as_bytes()),
            )
            .map_err(csv_error)?;
    }
    let bytes = writer
        .into_inner()
        .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
    match to {
        Destination::File(file) => crate::export::write_atomically(file, &bytes),
        Destination::Stdout => {
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes)
                .and_then(|()| out.flush())
                .map_err(|e| crate::export::io_error(Path::new("standard output"), e))
        }
        Destination::Stderr => std::io::stderr()
            .lock()
            .write_all(&bytes)
            .map_err(|e| crate::export::io_error(Path::new("standard error"), e)),
        // Opened without creating or truncating: what is there is a device or a FIFO.
        Destination::Into(into) => OpenOptions::new()
            .write(true)
            .open(into)
            .and_then(|mut file| file.write_all(&bytes))
            .map_err(|e| crate::export::io_error(into, e)),
    }
}
