//! One export at a time per output: each target's file is locked (`F.roomchat-lock` beside it,
//! an exclusive `flock`, through fs4) from before its checkpoint is read until its export
//! ends, so that two runs of the same export (overlapping cron jobs) never write one file. The
//! second refuses that target at once, saying which process holds it. The kernel releases the
//! lock when its process ends, however it ends (`kill -9` included): a lock file left behind
//! is taken by the next run.

use std::fs::File;
use std::io::{Read, Write};
use std::path::PathBuf;

use super::store::{self, Access, Paths};
use crate::error::CliError;
use crate::safe_text::terminal_line;

/// The lock of one output, held while it lives; its file is removed when it is dropped (left
/// on Windows, where an open file cannot be removed safely: it is harmless there).
pub(super) struct OutputLock {
    /// Holds the lock (closing it releases it).
    _file: File,
    #[cfg_attr(not(unix), allow(dead_code))]
    path: PathBuf,
}

impl OutputLock {
    /// Takes the lock of `paths.output`, or fails (exit 3) saying which process holds it.
    pub(super) fn take(paths: &Paths) -> Result<OutputLock, CliError> {
        // A holder removes the file as it ends: a run that opened it just before then locks
        // a file no longer there, and takes the new one instead (a few times at most).
        for _ in 0..100 {
            let mut file = store::open_own(&paths.lock, Access::ReadWrite)?;
            match fs4::FileExt::try_lock(&file) {
                Ok(()) => {}
                Err(fs4::TryLockError::WouldBlock) => return Err(busy(paths, &mut file)),
                Err(fs4::TryLockError::Error(e)) => return Err(store::io_error(&paths.lock, e)),
            }
            if !still_there(&file, paths) {
                continue;
            }
            // Who holds it, for a run that finds it taken.
            file.set_len(0)
                .and_then(|()| file.write_all(format!("{}\n", std::process::id()).as_bytes()))
                .map_err(|e| store::io_error(&paths.lock, e))?;
            return Ok(OutputLock {
                _file: file,
                path: paths.lock.clone(),
            });
        }
        Err(store::io_error(
            &paths.lock,
            std::io::Error::other("removed again and again while being locked"),
        ))
    }
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Removed while still held, so that no run can lock it meanwhile and keep it.
        #[cfg(unix)]
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether `file` (locked) is still the lock file at its path.
#[cfg(unix)]
fn still_there(file: &File, paths: &Paths) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::symlink_metadata(&paths.lock)) {
        (Ok(ours), Ok(there)) => ours.dev() == there.dev() && ours.ino() == there.ino(),
        _ => false,
    }
}

/// Whether `file` (locked) is still the lock file at its path (never removed off Unix).
#[cfg(not(unix))]
fn still_there(_file: &File, _paths: &Paths) -> bool {
    true
}

/// The error of a lock another process holds: which process (as its lock file says), and
/// what to do.
fn busy(paths: &Paths, file: &mut File) -> CliError {
    let mut holder = String::new();
    let _ = file.take(64).read_to_string(&mut holder);
    let holder = match holder.trim().parse::<u32>() {
        Ok(pid) => format!("process {pid}"),
        Err(_) => "a process that is starting".to_owned(),
    };
    store::io_error(
        &paths.output,
        std::io::Error::new(
            std::io::ErrorKind::WouldBlock,
            format!(
                "another roomchat export ({holder}) is writing this file now (it holds {}); \
                 let it finish, or stop it, then run the same command again",
                terminal_line(&paths.lock.display().to_string())
            ),
        ),
    )
}
