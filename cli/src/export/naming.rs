//! Targets to files: which file each room (or channel) is exported to.

use std::path::PathBuf;

use super::Format;

/// One room, or one channel of a room, to export.
#[derive(Debug, Clone)]
pub(super) struct Target {
    pub(super) room: String,
    pub(super) channel: Option<String>,
    pub(super) name: Option<String>,
    pub(super) output: PathBuf,
}

impl Target {
    pub(super) fn label(&self) -> String {
        match &self.channel {
            Some(c) => format!("{}/{c}", self.room),
            None => self.room.clone(),
        }
    }
}

/// The targets of `pairs` (room, channel, the room's name when known), each with its output:
/// `folder/ROOM.EXT` or `folder/ROOM--CHANNEL.EXT` when `as_folder`, else `output` itself.
pub(super) fn targets(
    pairs: Vec<(String, Option<String>, Option<String>)>,
    as_folder: bool,
    output: &std::path::Path,
    format: Format,
) -> Vec<Target> {
    pairs
        .into_iter()
        .map(|(room, channel, name)| {
            let output = if as_folder {
                let stem = match &channel {
                    Some(c) => format!("{}--{}", safe_file_name(&room), safe_file_name(c)),
                    None => safe_file_name(&room),
                };
                output.join(format!("{stem}.{}", format.extension()))
            } else {
                output.to_path_buf()
            };
            Target {
                room,
                channel,
                name,
                output,
            }
        })
        .collect()
}

/// A room id as a file name: path separators and other awkward bytes replaced.
fn safe_file_name(id: &str) -> String {
    let name: String = id
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.starts_with('.') || name.is_empty() {
        format!("_{name}")
    } else {
        name
    }
}
