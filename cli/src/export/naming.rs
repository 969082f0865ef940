//! Targets to files: which file each room (or channel) is exported to, decided once for all
//! targets before anything is fetched.
//!
//! Identical targets are one (`export dup dup` exports `dup` once). Into a folder, each target
//! gets `ROOM.EXT` or `ROOM--CHANNEL.EXT`, its ids made file names ([`safe_file_name`]): ASCII
//! letters, digits, `-`, `_` and `.` kept, anything else `_`, so that a name means the same
//! file on every file system. Two different targets whose names are the same file, compared
//! without case as macOS and Windows compare them (`a b` and `a_b`, room `k--C` and channel
//! `k/C`, `Abc` and `abc`), are refused, naming both, before any message is fetched.
//! (Each file is then also locked while it is written: see `lock`.)

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::Format;
use crate::error::CliError;
use crate::safe_text::terminal_line;

/// One room, or one channel of a room, to export.
#[derive(Debug, Clone)]
pub(super) struct Target {
    pub(super) room: String,
    pub(super) channel: Option<String>,
    /// The room's name, when the rooms' listing gave it.
    pub(super) name: Option<String>,
    pub(super) output: PathBuf,
}

impl Target {
    /// `ROOM` or `ROOM/CHANNEL`, as it was named (raw: print it through
    /// [`terminal_line`]).
    pub(super) fn label(&self) -> String {
        label(&self.room, self.channel.as_deref())
    }
}

fn label(room: &str, channel: Option<&str>) -> String {
    match channel {
        Some(c) => format!("{room}/{c}"),
        None => room.to_owned(),
    }
}

/// A target before its file is decided: room, channel, the room's name when known.
pub(super) type Named = (String, Option<String>, Option<String>);

/// The targets named on the command line (`ROOM` or `ROOM/CHANNEL`), each once, in the order
/// first named.
pub(super) fn parse_targets(named: &[String]) -> Result<Vec<Named>, CliError> {
    let mut targets: Vec<Named> = Vec::new();
    for t in named {
        let (room, channel) = match t.split_once('/') {
            Some((r, c)) => (r, Some(c)),
            None => (t.as_str(), None),
        };
        if room.is_empty() || channel.is_some_and(|c| c.is_empty() || c.contains('/')) {
            return Err(CliError::Usage(format!(
                "export: {:?} is not ROOM or ROOM/CHANNEL",
                terminal_line(t)
            )));
        }
        add(
            &mut targets,
            room.to_owned(),
            channel.map(str::to_owned),
            None,
        );
    }
    Ok(targets)
}

/// Adds a target unless it is there already.
pub(super) fn add(
    targets: &mut Vec<Named>,
    room: String,
    channel: Option<String>,
    name: Option<String>,
) {
    if !targets.iter().any(|(r, c, _)| *r == room && *c == channel) {
        targets.push((room, channel, name));
    }
}

/// Whether the output is a folder (one file per target): with several targets or
/// `--all-rooms`, no `-o`, an existing folder, or a path ending in `/`.
pub(super) fn is_folder(output: Option<&Path>, targets: usize, all_rooms: bool) -> bool {
    match output {
        None => true,
        Some(p) => {
            targets > 1
                || all_rooms
                || p.is_dir()
                || p.as_os_str()
                    .to_string_lossy()
                    .ends_with(['/', std::path::MAIN_SEPARATOR])
        }
    }
}

/// Each target with its file: `folder/ROOM.EXT` or `folder/ROOM--CHANNEL.EXT` when
/// `as_folder`, else `output` itself (one target). Refuses, as a usage error naming both
/// targets and the file, two targets whose files are the same on a file system that ignores
/// case.
pub(super) fn plan(
    targets: Vec<Named>,
    as_folder: bool,
    output: &Path,
    format: Format,
) -> Result<Vec<Target>, CliError> {
    let mut planned = Vec::with_capacity(targets.len());
    // The file name without case, and the target that has it.
    let mut taken: HashMap<String, usize> = HashMap::new();
    for (room, channel, name) in targets {
        let output = if as_folder {
            let file = file_name(&room, channel.as_deref(), format);
            if let Some(&other) = taken.get(&file.to_ascii_lowercase()) {
                let other: &Target = &planned[other];
                return Err(CliError::Usage(format!(
                    "export: {} and {} would both be written to {} (file names keep ASCII \
                     letters, digits, '-', '_' and '.', and are compared without case, as on \
                     macOS and Windows); export them in separate runs, each with -o FILE",
                    terminal_line(&other.label()),
                    terminal_line(&label(&room, channel.as_deref())),
                    terminal_line(&output.join(&file).display().to_string()),
                )));
            }
            taken.insert(file.to_ascii_lowercase(), planned.len());
            output.join(file)
        } else {
            output.to_path_buf()
        };
        planned.push(Target {
            room,
            channel,
            name,
            output,
        });
    }
    Ok(planned)
}

/// The file of a target in a folder: `ROOM.EXT` or `ROOM--CHANNEL.EXT`, its ids made file
/// names; one whose first part (up to its first dot) is a name Windows reserves for a device
/// (`CON`, `PRN`, `AUX`, `NUL`, `COM1`-`COM9`, `LPT1`-`LPT9`, any case) gets a leading `_`;
/// a stem over [`LONGEST_STEM`] bytes is cut to its first 163 and `-` and 16 hex digits of
/// its SHA-256. A pure function (the fuzz target calls it with any input).
pub fn file_name(room: &str, channel: Option<&str>, format: Format) -> String {
    let stem = match channel {
        Some(c) => format!("{}--{}", safe_file_name(room), safe_file_name(c)),
        None => safe_file_name(room),
    };
    let first = stem.split('.').next().unwrap_or_default();
    let reserved = matches!(
        first.to_ascii_uppercase().as_str(),
        "CON" | "PRN" | "AUX" | "NUL"
    ) || (first.len() == 4
        && ["COM", "LPT"]
            .iter()
            .any(|device| first[..3].eq_ignore_ascii_case(device))
        && matches!(first.as_bytes()[3], b'1'..=b'9'));
    let mut stem = if reserved { format!("_{stem}") } else { stem };
    if stem.len() > LONGEST_STEM {
        // File systems hold 255 bytes a name, and the export's own files add up to 24
        // (`.roomchat-checkpoint.tmp`): a longer id keeps its beginning and, so that two
        // long ids that begin alike stay apart, a digest of the whole name.
        let digest = Sha256::digest(stem.as_bytes());
        let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
        // ASCII by now: any byte is a character boundary.
        stem.truncate(LONGEST_STEM - 1 - hex.len());
        stem.push('-');
        stem.push_str(&hex);
    }
    format!("{stem}.{}", format.extension())
}

/// The longest file name stem in a folder, in bytes: with the longest extension (`.jsonl`)
/// and the export's own suffixes (`.roomchat-checkpoint.tmp`), 210 of the 255 bytes a file
/// system allows a name.
pub(crate) const LONGEST_STEM: usize = 180;

/// An id as part of a file name: ASCII letters, digits, `-`, `_` and `.` kept, anything else
/// (a path separator, a blank, a control or non-ASCII character) `_`; a leading or trailing
/// dot `_` too (no hidden file, no name Windows would cut), and never empty.
pub fn safe_file_name(id: &str) -> String {
    let mut name: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.starts_with('.') || name.is_empty() {
        name.insert(0, '_');
    }
    let trailing = name.len() - name.trim_end_matches('.').len();
    name.truncate(name.len() - trailing);
    name.extend(std::iter::repeat_n('_', trailing));
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_become_portable_file_names() {
        let name = |room: &str, channel: Option<&str>| file_name(room, channel, Format::Jsonl);
        assert_eq!(name("bbNiVFoXm", None), "bbNiVFoXm.jsonl");
        assert_eq!(
            name("MG99xw-79", Some("6141fd87")),
            "MG99xw-79--6141fd87.jsonl"
        );
        assert_eq!(name("a b/c\\d", None), "a_b_c_d.jsonl");
        assert_eq!(name("é\u{1b}[2J", None), "___2J.jsonl");
        assert_eq!(name(".hidden", None), "_.hidden.jsonl");
        assert_eq!(name("", Some("")), "_--_.jsonl");
        assert_eq!(name("x.", None), "x_.jsonl");
        assert_eq!(name("x..", None), "x__.jsonl");
        assert_eq!(name("...", None), "____.jsonl");
        for reserved in [
            "CON", "con", "Nul", "aux", "PRN", "COM1", "com9", "LPT5", "nul.x",
        ] {
            assert_eq!(
                name(reserved, None),
                format!("_{reserved}.jsonl"),
                "{reserved}"
            );
        }
        for free in ["CONSOLE", "COM0", "COM10", "LPT", "NUL_", "xCON"] {
            assert_eq!(name(free, None), format!("{free}.jsonl"), "{free}");
        }
        assert_eq!(name("CON", Some("x")), "CON--x.jsonl");
        // Long ids: the beginning, then a digest of the whole (two that begin alike differ).
        let at_most = "r".repeat(LONGEST_STEM);
        assert_eq!(name(&at_most, None), format!("{at_most}.jsonl"));
        let long = name(&"r".repeat(300), None);
        let longer = name(&"r".repeat(301), None);
        assert_eq!(long.len(), LONGEST_STEM + ".jsonl".len(), "{long}");
        assert!(
            long.starts_with(&"r".repeat(163)) && long.as_bytes()[163] == b'-',
            "{long}"
        );
        assert_ne!(long, longer);
        assert_eq!(long, name(&"r".repeat(300), None));
        // Any text: a name, never a panic.
        for odd in ["\u{0}", "COM\u{b9}", "Ｃ", "中.文", "a\u{202e}b"] {
            let n = name(odd, Some(odd));
            assert!(n.is_ascii() && !n.contains('/'), "{n}");
        }
    }

    #[test]
    fn identical_targets_are_one_and_colliding_files_are_refused() {
        let named =
            |list: &[&str]| parse_targets(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(named(&["dup", "dup", "a/b", "a/b", "a"]).unwrap().len(), 3);
        let planned =
            |list: &[&str]| plan(named(list).unwrap(), true, Path::new("out"), Format::Jsonl);
        assert_eq!(planned(&["dup", "dup"]).unwrap().len(), 1);
        for (a, b, file) in [
            ("a b", "a_b", "a_b.jsonl"),
            ("k--C", "k/C", "k--C.jsonl"),
            ("Abc", "abc", "abc.jsonl"),
            ("con", "_CON", "_CON.jsonl"),
        ] {
            let e = planned(&[a, b]).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            let m = e.to_string();
            assert!(
                m.contains(a) && m.contains(b) && m.contains(&format!("out/{file}")),
                "{m}"
            );
        }
        // One target to a file: its path is the user's.
        let one = plan(
            named(&["a b"]).unwrap(),
            false,
            Path::new("x.jsonl"),
            Format::Jsonl,
        );
        assert_eq!(one.unwrap()[0].output, Path::new("x.jsonl"));
    }
}
