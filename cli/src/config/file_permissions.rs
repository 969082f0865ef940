//! Whether the profile file can be trusted, as ssh decides for its own files
//! (`StrictModes`): the file and every folder above it owned by root or the
//! user running the command and writable by nobody else, and a file holding a
//! key readable by nobody else.
//!
//! Symlinks are followed with care: every folder on the path as written is
//! checked (a folder others can write could swap a link in it), a link itself
//! must be owned by root or the user (in a sticky folder such as `/tmp`
//! another user's link is their choice of target), and the folders of the
//! path the links lead to are checked too. A folder others can write is
//! accepted when it is sticky (`/tmp`): nobody but an entry's owner can then
//! rename or remove it, and the entry below is checked in turn.

use std::fs::File;
use std::path::Path;

use crate::error::CliError;

#[cfg(unix)]
use super::config_error;

/// Refuses the profile file `file` (opened from `path`) when someone other
/// than root or the user could change it or the folders it is reached through.
#[cfg(unix)]
pub fn refuse_if_others_can_write(path: &Path, file: &File) -> Result<(), CliError> {
    use std::os::unix::fs::MetadataExt;

    let uid = current_uid();
    let meta = file.metadata().map_err(|source| io_error(path, source))?;
    let mode = meta.mode() & 0o7777;
    if !trusted_owner(meta.uid(), uid) {
        return Err(config_error(format!(
            "{} is owned by uid {}, not by you or root: anyone it belongs to could point the key \
             at another server; use a file of your own",
            path.display(),
            meta.uid()
        )));
    }
    if mode & 0o022 != 0 {
        return Err(config_error(format!(
            "{} is writable by others (mode {:o}): anyone could point the key at another \
             server; run `chmod go-w {}`",
            path.display(),
            mode & 0o777,
            path.display()
        )));
    }
    let absolute = std::path::absolute(path).map_err(|source| io_error(path, source))?;
    // The folders as written (links among them checked as links), then the folders the
    // links lead to.
    if let Some(folder) = absolute.parent() {
        check_folders(folder, uid)?;
    }
    let resolved = std::fs::canonicalize(path).map_err(|source| io_error(path, source))?;
    if let Some(folder) = resolved.parent() {
        check_folders(folder, uid)?;
    }
    Ok(())
}

/// Refuses the profile file when it holds a key and its group or others may
/// read it (checked on the file opened).
#[cfg(unix)]
pub fn refuse_if_others_can_read(path: &Path, file: &File) -> Result<(), CliError> {
    use std::os::unix::fs::MetadataExt;

    let mode = file
        .metadata()
        .map_err(|source| io_error(path, source))?
        .mode();
    if mode & 0o077 != 0 {
        return Err(config_error(format!(
            "{} holds a key and is readable by others (mode {:o}): run `chmod 600 {}`",
            path.display(),
            mode & 0o777,
            path.display()
        )));
    }
    Ok(())
}

/// Checks `folder` and each folder above it: owned by root or `uid`, and not
/// writable by group or others unless sticky. A link on the path is checked
/// as a link (its owner); where it leads is checked with the resolved path.
#[cfg(unix)]
fn check_folders(folder: &Path, uid: u32) -> Result<(), CliError> {
    use std::os::unix::fs::MetadataExt;

    for dir in folder.ancestors() {
        let meta = std::fs::symlink_metadata(dir).map_err(|source| io_error(dir, source))?;
        if !trusted_owner(meta.uid(), uid) {
            let what = if meta.file_type().is_symlink() {
                "the link"
            } else {
                "the folder"
            };
            return Err(config_error(format!(
                "{what} {} on the config file's path is owned by uid {}, not by you or root: \
                 anyone it belongs to could replace the config file",
                dir.display(),
                meta.uid()
            )));
        }
        if meta.file_type().is_symlink() {
            // Its target is among the folders of the resolved path, checked on their own.
            continue;
        }
        let mode = meta.mode();
        let sticky = mode & 0o1000 != 0;
        if mode & 0o022 != 0 && !sticky {
            return Err(config_error(format!(
                "the folder {} on the config file's path is writable by others (mode {:o}): \
                 anyone could replace the config file; run `chmod go-w {}`",
                dir.display(),
                mode & 0o777,
                dir.display()
            )));
        }
    }
    Ok(())
}

#[cfg(unix)]
fn trusted_owner(owner: u32, uid: u32) -> bool {
    owner == 0 || owner == uid
}

#[cfg(unix)]
fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(unix)]
fn io_error(path: &Path, source: std::io::Error) -> CliError {
    CliError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// Windows: the file's ACL is not checked (as before; ssh for Windows checks
/// ACLs, which the command line does not read yet).
#[cfg(not(unix))]
pub fn refuse_if_others_can_write(_path: &Path, _file: &File) -> Result<(), CliError> {
    Ok(())
}

/// Windows: see [`refuse_if_others_can_write`].
#[cfg(not(unix))]
pub fn refuse_if_others_can_read(_path: &Path, _file: &File) -> Result<(), CliError> {
    Ok(())
}
