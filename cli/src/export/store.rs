//! The files of one room's export: the final output, the part file (every message fetched so
//! far, one raw JSON record a line, exactly as the service sent it) and the checkpoint (how far
//! the part file is valid and where the listing resumes).
//!
//! The part file only ever grows by appends; the checkpoint is replaced atomically (written
//! to a temporary file, fsynced, renamed, the folder fsynced) after the part file was fsynced.
//! So whatever instant the process is killed at, the checkpoint on disk describes a prefix of
//! the part file that is on disk too: a resumed export cuts the part file back to
//! `part_bytes` (dropping what was appended after the last checkpoint) and fetches again from
//! `next_skip`.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::record::Identity;
use crate::error::CliError;

/// The checkpoint of one room's (or channel's) export.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Checkpoint {
    /// Format version of this file.
    pub version: u32,
    pub room: String,
    pub channel: Option<String>,
    /// The time filter the export was started with (a resume must use the same).
    pub after: Option<String>,
    pub before: Option<String>,
    /// The `skip` of the listing the next page starts at (the messages listed so far).
    pub next_skip: u64,
    /// Messages written to the part file (those the time filter kept).
    pub messages: u64,
    /// The part file's valid length: everything after it is cut on resume.
    pub part_bytes: u64,
    /// The last message listed (written, or dropped by the time filter): the next page, asked
    /// for from it, must begin with it.
    #[serde(default)]
    pub last: Option<Identity>,
    /// A resync after deletions was under way (see `resume::Placement`).
    #[serde(default)]
    pub resyncing: bool,
    /// The ids of the latest messages, as version 1 kept them (read for its last, never
    /// written).
    #[serde(default, skip_serializing)]
    pub recent_ids: Vec<String>,
    /// The listing's end was reached: only the final file remains to be written.
    pub fetched_all: bool,
    /// The room's total, as the last page said.
    pub total: Option<u64>,
}

impl Checkpoint {
    pub fn new(
        room: &str,
        channel: Option<&str>,
        after: Option<String>,
        before: Option<String>,
    ) -> Self {
        Checkpoint {
            version: 2,
            room: room.into(),
            channel: channel.map(Into::into),
            after,
            before,
            next_skip: 0,
            messages: 0,
            part_bytes: 0,
            last: None,
            resyncing: false,
            recent_ids: Vec::new(),
            fetched_all: false,
            total: None,
        }
    }
}

/// The identity of every message the part file's first `len` bytes hold: what a resync after a
/// shift looks messages up in (read only then, so that memory does not grow with the room
/// otherwise).
pub fn written_identities(path: &Path, len: u64) -> Result<HashSet<Identity>, CliError> {
    let file = open_own(path, Access::Read)?;
    let mut lines = BufReader::with_capacity(256 * 1024, file.take(len));
    let mut identities = HashSet::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        if lines
            .read_until(b'\n', &mut line)
            .map_err(|e| io_error(path, e))?
            == 0
        {
            return Ok(identities);
        }
        if line.last() == Some(&b'\n') {
            line.pop();
        }
        let text = String::from_utf8_lossy(&line);
        identities.insert(Identity::of_line(&text));
    }
}

/// The paths of one target's export.
#[derive(Debug, Clone)]
pub struct Paths {
    pub output: PathBuf,
    pub part: PathBuf,
    pub checkpoint: PathBuf,
    /// Where the final file is written before it is renamed into place.
    pub staging: PathBuf,
    /// Locked while an export writes the output (see `lock`).
    pub lock: PathBuf,
}

impl Paths {
    pub fn of(output: PathBuf) -> Self {
        let with = |suffix: &str| {
            let mut name = output.file_name().unwrap_or_default().to_os_string();
            name.push(suffix);
            output.with_file_name(name)
        };
        Paths {
            part: with(".roomchat-part"),
            checkpoint: with(".roomchat-checkpoint"),
            staging: with(".roomchat-tmp"),
            lock: with(".roomchat-lock"),
            output,
        }
    }
}

pub fn io_error(path: &Path, source: std::io::Error) -> CliError {
    CliError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// How [`open_own`] opens a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    /// Made if missing, written at its end.
    Append,
    /// Made if missing, emptied (once checked).
    Truncate,
    /// Made if missing, read and written (a lock file).
    ReadWrite,
}

/// On Windows, opens a symbolic link itself rather than what it points to.
#[cfg(windows)]
const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;

/// Opens one of the files the export keeps beside its output (part, checkpoint, temporary,
/// staging and lock files): never through a symbolic link (`O_NOFOLLOW`), never anything but
/// a plain file (a FIFO is opened without blocking, then refused), and for writing never a
/// file with other names (hard links): what was planted there is refused with a clear error,
/// and neither followed, nor truncated, nor written.
pub fn open_own(path: &Path, access: Access) -> Result<File, CliError> {
    let mut options = OpenOptions::new();
    match access {
        Access::Read => options.read(true),
        Access::Append => options.append(true).create(true),
        Access::Truncate => options.write(true).create(true),
        Access::ReadWrite => options.read(true).write(true).create(true),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt;
        options.custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
    }
    let file = options
        .open(path)
        .map_err(|e| match fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => refused(path, "a symbolic link"),
            _ => io_error(path, e),
        })?;
    let meta = file.metadata().map_err(|e| io_error(path, e))?;
    if !meta.is_file() {
        return Err(refused(path, "not a plain file"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if access != Access::Read && meta.nlink() > 1 {
            return Err(refused(path, "a file with other names (hard links)"));
        }
    }
    if access == Access::Truncate {
        file.set_len(0).map_err(|e| io_error(path, e))?;
    }
    Ok(file)
}

/// The error of a file [`open_own`] refuses.
fn refused(path: &Path, what: &str) -> CliError {
    io_error(
        path,
        std::io::Error::other(format!(
            "{what} where the export keeps a file of its own: refused, neither followed nor \
             written (remove it if it is not yours, then run the same command again)"
        )),
    )
}

/// The folder holding `path` (`.` for a bare file name).
fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Makes a rename or a new file in `path`'s folder durable.
pub fn sync_parent(path: &Path) -> Result<(), CliError> {
    let dir = parent_of(path);
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error(dir, e))
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, fsynced, renamed over it.
/// Only a regular file is replaced: a symbolic link, a device, a FIFO or a folder at `path` is
/// refused (the rename would put a regular file in its place: `/dev/stdout` itself, as root).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let not_replaced = |what: &str| {
        io_error(
            path,
            std::io::Error::other(format!("{what}: refused, not replaced by a regular file")),
        )
    };
    let check = || match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(not_replaced("a symbolic link")),
        Ok(m) if !m.is_file() => Err(not_replaced("not a plain file")),
        _ => Ok(()),
    };
    check()?;
    let mut file = open_own(&tmp, Access::Truncate)?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| io_error(&tmp, e))?;
    drop(file);
    // Checked again just before the rename (what was there may have changed meanwhile).
    if let Err(e) = check() {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    fs::rename(&tmp, path).map_err(|e| io_error(path, e))?;
    sync_parent(path)
}

/// The checkpoint at `path`, if there is one.
pub fn load_checkpoint(path: &Path) -> Result<Option<Checkpoint>, CliError> {
    let not_ours = |why: String| {
        CliError::Usage(format!(
            "{}: not a checkpoint of this roomchat export ({why}); remove it or use --restart",
            path.display()
        ))
    };
    let read = match open_own(path, Access::Read) {
        Ok(mut file) => {
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)
                .map(|_| bytes)
                .map_err(|e| io_error(path, e))
        }
        Err(CliError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    match read {
        Ok(bytes) => {
            let mut checkpoint: Checkpoint =
                serde_json::from_slice(&bytes).map_err(|e| not_ours(e.to_string()))?;
            match checkpoint.version {
                // Version 1 kept the latest ids: the last is the anchor.
                1 => {
                    checkpoint.last = checkpoint.recent_ids.pop().map(Identity::Id);
                    checkpoint.recent_ids.clear();
                    checkpoint.version = 2;
                }
                2 => {}
                v => return Err(not_ours(format!("version {v}, from a newer roomchat"))),
            }
            Ok(Some(checkpoint))
        }
        Err(e) => Err(e),
    }
}

pub fn save_checkpoint(path: &Path, checkpoint: &Checkpoint) -> Result<(), CliError> {
    let bytes = serde_json::to_vec(checkpoint).expect("a checkpoint serializes");
    write_atomically(path, &bytes)
}

/// Opens the part file for appending, cut back to `valid` bytes (what the checkpoint vouches
/// for); fails when it is shorter than that (the part file was changed behind our back).
pub fn open_part(path: &Path, valid: u64) -> Result<File, CliError> {
    let file = open_own(path, Access::Append)?;
    let len = file.metadata().map_err(|e| io_error(path, e))?.len();
    if len < valid {
        return Err(CliError::Usage(format!(
            "{}: shorter ({len} bytes) than its checkpoint says ({valid}); use --restart",
            path.display()
        )));
    }
    if len > valid {
        file.set_len(valid).map_err(|e| io_error(path, e))?;
    }
    Ok(file)
}

/// Removes `path` if it is there.
pub fn remove_if_there(path: &Path) -> Result<(), CliError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error(path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_1_checkpoint_resumes_from_its_last_id_and_a_newer_one_is_refused() {
        let dir = std::env::temp_dir().join(format!("roomchat-store-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.jsonl.roomchat-checkpoint");
        fs::write(
            &path,
            r#"{"version":1,"room":"r","channel":null,"after":null,"before":null,"next_skip":400,"messages":400,"part_bytes":9,"recent_ids":["a","b"],"fetched_all":false,"total":null}"#,
        )
        .unwrap();
        let loaded = load_checkpoint(&path).unwrap().unwrap();
        assert_eq!(loaded.last, Some(Identity::Id("b".into())));
        assert_eq!((loaded.version, loaded.next_skip), (2, 400));
        save_checkpoint(&path, &loaded).unwrap();
        let saved = fs::read_to_string(&path).unwrap();
        assert!(saved.contains(r#""last":{"id":"b"}"#), "{saved}");
        assert!(!saved.contains("recent_ids"), "{saved}");
        fs::write(&path, saved.replace(r#""version":2"#, r#""version":3"#)).unwrap();
        let refused = load_checkpoint(&path).unwrap_err().to_string();
        assert!(refused.contains("version 3"), "{refused}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn an_atomic_write_never_replaces_a_link_or_a_device() {
        use std::os::unix::fs::FileTypeExt;
        let dir = std::env::temp_dir().join(format!("roomchat-atomic-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let (target, link) = (dir.join("target"), dir.join("link"));
        fs::write(&target, "precious").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        // A socket stands for a device or a FIFO (not a plain file).
        let socket = dir.join("socket");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        for path in [&link, &socket] {
            let refused = write_atomically(path, b"new").unwrap_err().to_string();
            assert!(refused.contains("not replaced"), "{refused}");
        }
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_to_string(&target).unwrap(), "precious");
        assert!(fs::symlink_metadata(&socket)
            .unwrap()
            .file_type()
            .is_socket());
        assert!(!dir.join("link.tmp").exists());
        write_atomically(&target, b"new").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        fs::remove_dir_all(&dir).unwrap();
    }
}
