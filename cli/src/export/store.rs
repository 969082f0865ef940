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

use std::collections::VecDeque;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::record::Identity;
use crate::error::CliError;

/// How many of the latest messages' identities the checkpoint keeps, to recognise a message
/// fetched twice (the pages overlap by one message, and a page read again after a shift).
pub const RECENT_IDS: usize = 1000;

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
    /// The identities of the latest messages listed, oldest first (at most [`RECENT_IDS`]).
    #[serde(default)]
    pub recent: Vec<Identity>,
    /// The ids of the latest messages, as version 1 kept them (read, never written).
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
            recent: Vec::new(),
            recent_ids: Vec::new(),
            fetched_all: false,
            total: None,
        }
    }
}

/// The identities of the latest messages, bounded. Looked up only when a page does not begin
/// with the last message listed (a shift), so a list searched in turn is enough.
#[derive(Debug, Default)]
pub struct RecentIds {
    order: VecDeque<Identity>,
}

impl RecentIds {
    /// The checkpoint's (a version 1 checkpoint's ids too).
    pub fn of(checkpoint: &Checkpoint) -> Self {
        let mut recent = RecentIds::default();
        for id in &checkpoint.recent_ids {
            recent.push(Identity::Id(id.clone()));
        }
        for identity in &checkpoint.recent {
            recent.push(identity.clone());
        }
        recent
    }

    pub fn contains(&self, identity: &Identity) -> bool {
        self.order.iter().any(|known| known == identity)
    }

    pub fn push(&mut self, identity: Identity) {
        if self.order.len() == RECENT_IDS {
            self.order.pop_front();
        }
        self.order.push_back(identity);
    }

    pub fn last(&self) -> Option<&Identity> {
        self.order.back()
    }

    pub fn to_list(&self) -> Vec<Identity> {
        self.order.iter().cloned().collect()
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
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let mut file = File::create(&tmp).map_err(|e| io_error(&tmp, e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| io_error(&tmp, e))?;
    drop(file);
    fs::rename(&tmp, path).map_err(|e| io_error(path, e))?;
    sync_parent(path)
}

/// The checkpoint at `path`, if there is one.
pub fn load_checkpoint(path: &Path) -> Result<Option<Checkpoint>, CliError> {
    match fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            CliError::Usage(format!(
                "{}: not a checkpoint of roomchat export ({e}); remove it or use --restart",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(path, e)),
    }
}

pub fn save_checkpoint(path: &Path, checkpoint: &Checkpoint) -> Result<(), CliError> {
    let bytes = serde_json::to_vec(checkpoint).expect("a checkpoint serializes");
    write_atomically(path, &bytes)
}

/// Opens the part file for appending, cut back to `valid` bytes (what the checkpoint vouches
/// for); fails when it is shorter than that (the part file was changed behind our back).
pub fn open_part(path: &Path, valid: u64) -> Result<File, CliError> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| io_error(path, e))?;
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
