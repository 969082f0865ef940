//! `roomchat export` of several targets in one command: identical ones (exported once), ones
//! that map to one file (refused before anything is fetched), many rooms and channels through
//! kills.

use std::path::Path;
use std::time::Duration;

use rand::seq::{IndexedRandom, SliceRandom};
use rand::RngExt;
use roomchat_emulator::{Emulator, Fault, FaultAction};
use serde_json::json;

use crate::cases::CaseRng;
use crate::exports::{
    files_in, final_run, no_leftovers, run_to_its_end, stem, FORMATS, LISTINGS, RUN_LIMIT,
};
use crate::process::{self, tail, Stop};
use crate::room::{Filter, Room, Style};

/// Several targets in one command.
#[derive(Debug, Clone)]
enum Variant {
    /// The same target given more than once: exported once, into one correct file.
    Identical { copies: usize, channel: bool },
    /// `ROOM/CHANNEL` and a room named `ROOM--CHANNEL`: one file name.
    ChannelClash,
    /// Two room ids that become one file name once made safe (`a b`, `a_b`).
    SafeNameClash(&'static str, &'static str),
    /// Two room ids that differ only in case: one file on macOS and Windows.
    CaseClash,
    /// `--all-rooms` over rooms whose names differ only in case.
    AllRoomsCaseClash,
    /// Many rooms (`--all-rooms` or named) and channels, through kills.
    ManyRooms { rooms: usize, channels: usize },
}

pub struct TargetsPlan {
    variant: Variant,
    format: &'static str,
    page_size: u64,
    jobs: u16,
    sizes: Vec<usize>,
    idless: f64,
    /// A room that collides with nothing, named too.
    bystander: bool,
    /// Runs killed once this fraction of the pages were served (then within 3 ms).
    kills: Vec<f64>,
    all_rooms: bool,
}

impl TargetsPlan {
    pub fn draw(rng: &mut CaseRng) -> TargetsPlan {
        let variant = match rng.random_range(0..12) {
            0..=3 => Variant::Identical {
                copies: rng.random_range(2..=3),
                channel: rng.random_bool(0.25),
            },
            4 => Variant::ChannelClash,
            5 | 6 => {
                let (a, b) = *[
                    ("a b", "a_b"),
                    ("a:b", "a_b"),
                    ("a?b", "a*b"),
                    ("x\\y", "x_y"),
                ]
                .choose(rng)
                .expect("pairs");
                Variant::SafeNameClash(a, b)
            }
            7 => Variant::CaseClash,
            8 => Variant::AllRoomsCaseClash,
            _ => Variant::ManyRooms {
                rooms: rng.random_range(2..=7),
                channels: rng.random_range(0..=2),
            },
        };
        let rooms = match &variant {
            Variant::ManyRooms { rooms, .. } => *rooms,
            _ => 3,
        };
        let many = matches!(variant, Variant::ManyRooms { .. });
        TargetsPlan {
            format: FORMATS.choose(rng).expect("formats"),
            page_size: *[3, 10, 25, 50, 200].choose(rng).expect("sizes"),
            jobs: *[2, 4, 4, 8].choose(rng).expect("jobs"),
            sizes: (0..rooms)
                .map(|_| match rng.random_range(0..4) {
                    0 => rng.random_range(0..=3),
                    _ => rng.random_range(50..=400),
                })
                .collect(),
            // Records without ids only among many rooms: the other variants are about names.
            idless: if many && rng.random_bool(0.3) {
                0.05
            } else {
                0.0
            },
            bystander: rng.random_bool(0.5),
            kills: if many || matches!(variant, Variant::Identical { .. }) {
                (0..rng.random_range(0..=2))
                    .map(|_| rng.random_range(0.05..1.0))
                    .collect()
            } else {
                Vec::new()
            },
            all_rooms: many && rng.random_bool(0.5),
            variant,
        }
    }

    pub fn describe(&self) -> String {
        let what = match &self.variant {
            Variant::Identical { copies, channel } => format!(
                "the same {} named {copies} times",
                if *channel { "channel" } else { "room" }
            ),
            Variant::ChannelClash => "ROOM/CHANNEL beside a room ROOM--CHANNEL".into(),
            Variant::SafeNameClash(a, b) => format!("rooms {a:?} and {b:?} (one safe file name)"),
            Variant::CaseClash => "rooms Ab and aB".into(),
            Variant::AllRoomsCaseClash => "--all-rooms over rooms Xy and xY".into(),
            Variant::ManyRooms { rooms, channels } => format!(
                "{rooms} rooms and {channels} channel(s){}",
                if self.all_rooms { " (--all-rooms)" } else { "" }
            ),
        };
        format!(
            "{} export of {what}{}, rooms of {:?} messages{}, page {}, -j {}{}",
            self.format,
            if self.bystander {
                " and a bystander room"
            } else {
                ""
            },
            self.sizes,
            if self.idless > 0.0 {
                " (5% without _id)"
            } else {
                ""
            },
            self.page_size,
            self.jobs,
            if self.kills.is_empty() {
                String::new()
            } else {
                format!(
                    ", kill -9 at {:?}% of the pages then a final run",
                    self.kills
                        .iter()
                        .map(|f| (f * 100.0) as u32)
                        .collect::<Vec<_>>()
                )
            }
        )
    }

    pub fn run(&self, rng: &mut CaseRng, emu: &Emulator, dir: &Path) -> Result<(), String> {
        let style = Style {
            idless: self.idless,
            ..Style::default()
        };
        let mut rooms: Vec<Room> = Vec::new();
        let make = |rng: &mut CaseRng, id: &str, channel: bool, size: usize| -> Room {
            // A room that exists already (a channel's) answers 400: it is kept.
            emu.admin_request(
                "POST",
                "/rooms",
                &json!({"roomId": id, "name": format!("Room {id}")}),
            );
            let channel = channel.then(|| {
                emu.add_channel(id, json!({"channelName": "side"}))["_id"]
                    .as_str()
                    .expect("a channel id")
                    .to_owned()
            });
            let mut room = Room::new(id, channel.as_deref(), style.clone(), rng.random());
            room.add(emu, rng, size);
            room
        };
        let size = |k: usize| self.sizes[k % self.sizes.len()];
        // The targets as given; those that map to one file name and must be refused.
        let mut targets: Vec<String> = Vec::new();
        let mut clashing: Vec<String> = Vec::new();
        match &self.variant {
            Variant::Identical { copies, channel } => {
                let room = make(rng, "same", *channel, size(0));
                for _ in 0..*copies {
                    targets.push(room.target());
                }
                rooms.push(room);
            }
            Variant::ChannelClash => {
                let with_channel = make(rng, "k", true, size(0));
                let id = format!("k--{}", with_channel.channel.as_deref().expect("a channel"));
                let room = make(rng, &id, false, size(1));
                clashing = vec![with_channel.target(), room.target()];
                rooms.extend([with_channel, room]);
            }
            Variant::SafeNameClash(a, b) => {
                let (one, two) = (make(rng, a, false, size(0)), make(rng, b, false, size(1)));
                clashing = vec![one.target(), two.target()];
                rooms.extend([one, two]);
            }
            Variant::CaseClash | Variant::AllRoomsCaseClash => {
                let (a, b) = if matches!(self.variant, Variant::CaseClash) {
                    ("Ab", "aB")
                } else {
                    ("Xy", "xY")
                };
                let (one, two) = (make(rng, a, false, size(0)), make(rng, b, false, size(1)));
                clashing = vec![one.target(), two.target()];
                rooms.extend([one, two]);
            }
            Variant::ManyRooms { rooms: n, channels } => {
                for k in 0..*n {
                    let room = make(rng, &format!("room-{k}"), false, size(k));
                    if !self.all_rooms {
                        targets.push(room.target());
                    }
                    rooms.push(room);
                }
                for k in 0..*channels {
                    let channel = make(rng, &format!("room-{}", k % n), true, size(k + 1));
                    targets.push(channel.target());
                    rooms.push(channel);
                }
            }
        }
        if self.bystander {
            let room = make(rng, "bystander", false, size(2));
            if !self.all_rooms && !matches!(self.variant, Variant::AllRoomsCaseClash) {
                targets.push(room.target());
            }
            rooms.push(room);
        }
        if !matches!(self.variant, Variant::AllRoomsCaseClash) {
            targets.extend(clashing.iter().cloned());
        }
        targets.shuffle(rng);
        let mut args: Vec<String> = vec!["export".into()];
        if self.all_rooms || matches!(self.variant, Variant::AllRoomsCaseClash) {
            args.push("--all-rooms".into());
        }
        args.extend(targets);
        args.extend(
            [
                "-f",
                self.format,
                "--page-size",
                &self.page_size.to_string(),
                "-j",
                &self.jobs.to_string(),
                "-o",
                "out/",
            ]
            .map(str::to_owned),
        );
        let file_of = |room: &Room| {
            dir.join("out")
                .join(format!("{}.{}", stem(&room.target()), self.format))
        };

        if !clashing.is_empty() {
            emu.clear_journal();
            let ran = run_to_its_end(emu, dir, &args);
            ran.broken("the export")?;
            let stems: Vec<String> = clashing.iter().map(|t| stem(t).to_lowercase()).collect();
            let written: Vec<String> = files_in(&dir.join("out"))
                .into_iter()
                .filter(|name| {
                    let name = name.to_lowercase();
                    stems.iter().any(|s| name.starts_with(&format!("{s}.")))
                })
                .collect();
            let fetched: Vec<String> = rooms
                .iter()
                .filter(|r| clashing.contains(&r.target()) && listed(emu, r))
                .map(Room::target)
                .collect();
            if ran.code != Some(2) || !written.is_empty() || !fetched.is_empty() {
                return Err(format!(
                    "targets {clashing:?} map to one file (ignoring case): {} (a refusal is exit 2), wrote {written:?}, fetched {fetched:?}: {}",
                    ran.summary(),
                    tail(&ran.stderr)
                ));
            }
            // What collides with nothing may have been exported (or not: the command was
            // refused); if it was, it must be right.
            for room in rooms.iter_mut().filter(|r| !clashing.contains(&r.target())) {
                let file = file_of(room);
                if file.exists() {
                    room.run_begins();
                    room.runs_ended(true);
                    room.check_file(&file, self.format, &Filter::default())?;
                }
            }
            return Ok(());
        }

        let pages_served = || {
            emu.journal()
                .iter()
                .filter(|e| e.method == "GET" && e.path.ends_with("/messages") && e.status != 0)
                .count() as u64
        };
        let pages: u64 = rooms
            .iter()
            .map(|r| r.present().len() as u64 / self.page_size + 1)
            .sum();
        for (k, &fraction) in self.kills.iter().enumerate() {
            for room in &mut rooms {
                room.run_begins();
            }
            emu.clear_faults();
            emu.add_fault(Fault {
                method: Some("GET".into()),
                path: LISTINGS.into(),
                times: u32::MAX,
                action: FaultAction::Delay(Duration::from_millis(rng.random_range(1..=3))),
            });
            emu.clear_journal();
            let ran = process::run(
                process::roomchat(emu, dir, &args),
                &Stop::Progress {
                    progress: &pages_served,
                    at: ((pages as f64 * fraction) as u64).max(1),
                    then: Duration::from_micros(rng.random_range(0..3_000)),
                    fallback: Duration::from_secs(10),
                },
                RUN_LIMIT,
                None,
            );
            emu.clear_faults();
            ran.broken(&format!(
                "run {} (kill -9 at {:.0}% of the pages)",
                k + 1,
                fraction * 100.0
            ))?;
            for room in &mut rooms {
                room.runs_ended(file_of(room).exists());
            }
        }
        for room in &mut rooms {
            room.run_begins();
        }
        final_run(emu, dir, &args)?;
        for room in &mut rooms {
            room.runs_ended(true);
            let file = file_of(room);
            no_leftovers(&file)?;
            room.check_file(&file, self.format, &Filter::default())?;
        }
        Ok(())
    }
}

/// Whether the export asked for any page of `room`'s listing (the journal's paths are as
/// sent: percent-encoded).
fn listed(emu: &Emulator, room: &Room) -> bool {
    let wanted = match &room.channel {
        Some(c) => format!(
            "/consumer/api/v1/chatRoom/{}/channel/{c}/messages",
            room.room
        ),
        None => format!("/consumer/api/v1/chatRoom/{}/messages", room.room),
    };
    emu.journal()
        .iter()
        .any(|e| percent_decoded(&e.path) == wanted)
}

fn percent_decoded(path: &str) -> String {
    let b = path.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Ok(byte) = u8::from_str_radix(path.get(i + 1..i + 3).unwrap_or("zz"), 16) {
                out.push(byte);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}
