//! `--all --output csv` listings (`room-messages`, and `list-users` as the guide's "Users as
//! CSV for a spreadsheet" runs it): every field of every item is in the CSV, in a column of
//! its own or in a JSON column, whatever the items' fields (the records' fields vary: a header
//! taken from the first item alone drops the later ones').

use std::path::Path;
use std::time::Duration;

use rand::seq::IndexedRandom;
use rand::RngExt;
use roomchat::{Client, RateLimitConfig, RawRequest};
use roomchat_emulator::Emulator;
use serde_json::{json, Value};

use crate::cases::CaseRng;
use crate::process::{self, tail, Stop};
use crate::room::{Room, Style};

pub struct Plan {
    users: bool,
    count: usize,
    page_size: u64,
}

impl Plan {
    pub fn draw(rng: &mut CaseRng) -> Plan {
        Plan {
            users: rng.random_bool(0.5),
            count: rng.random_range(2..=60),
            page_size: *[1, 2, 5, 10, 50, 200].choose(rng).expect("sizes"),
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "{} --all --output csv --page-size {} over {} {} whose fields vary",
            if self.users {
                "list-users"
            } else {
                "room-messages ROOM"
            },
            self.page_size,
            self.count,
            if self.users { "users" } else { "messages" }
        )
    }

    pub fn run(
        &self,
        rng: &mut CaseRng,
        emu: &Emulator,
        dir: &Path,
        room_id: &str,
    ) -> Result<(), String> {
        let (args, items): (Vec<String>, Vec<Value>) = if self.users {
            let client = Client::builder(emu.private_key())
                .base_url(emu.base_url())
                .rate_limit(RateLimitConfig::new(1_000_000, Duration::from_secs(60)))
                .build()
                .expect("a client");
            emu.create_room(json!({"roomId": "lobby", "name": "Lobby"}));
            for k in 0..self.count {
                // The first users have the fewest fields.
                let mut user = json!({"username": format!("user {k}"), "uniqueUserIdentifier": format!("crm-{k}")});
                if k % 3 == 1 {
                    user["email"] = json!(format!("user{k}@example.com"));
                }
                if k % 4 == 2 {
                    user["isModerator"] = json!(true);
                    user["chatRoom"] = json!("lobby");
                }
                if k % 5 == 3 {
                    user["meta"] = json!({"plan": format!("plan{k}"), "seats": k});
                }
                if k % 6 == 4 {
                    user["externalUserId"] = json!(format!("ext{k}"));
                }
                client
                    .raw_request(&RawRequest::new("POST", "/consumer/api/v1/user").body(user))
                    .map_err(|e| format!("creating user {k}: {e}"))?;
            }
            let items = emu
                .users()
                .into_iter()
                .filter(|u| u["active"] == true)
                .map(|mut u| {
                    u.as_object_mut().expect("a user").remove("active");
                    u
                })
                .collect();
            (
                ["list-users", "--all", "--output", "csv", "--page-size"]
                    .map(str::to_owned)
                    .into_iter()
                    .chain([self.page_size.to_string()])
                    .collect(),
                items,
            )
        } else {
            emu.create_room(json!({"roomId": room_id, "name": "Listing"}));
            let mut room = Room::new(
                room_id,
                None,
                Style {
                    well_typed: true,
                    ..Style::default()
                },
                rng.random(),
            );
            room.add(emu, rng, self.count);
            let items = room
                .recs
                .iter()
                .map(|r| serde_json::from_str(&r.text).expect("a record"))
                .collect();
            (
                [
                    "room-messages",
                    room_id,
                    "--all",
                    "--output",
                    "csv",
                    "--page-size",
                ]
                .map(str::to_owned)
                .into_iter()
                .chain([self.page_size.to_string()])
                .collect(),
                items,
            )
        };
        let out = dir.join("listing.csv");
        let ran = process::run(
            process::roomchat(emu, dir, &args),
            &Stop::Never,
            Duration::from_secs(20),
            Some(&out),
        );
        ran.broken(&args.join(" "))?;
        if !ran.ok() {
            return Err(format!("{}: {}", ran.summary(), tail(&ran.stderr)));
        }
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(&out)
            .map_err(|e| format!("the CSV: {e}"))?;
        let header: Vec<String> = reader
            .headers()
            .map_err(|e| format!("the CSV's header: {e}"))?
            .iter()
            .map(str::to_owned)
            .collect();
        let rows = process::csv_rows(&mut reader, "the CSV", items.len())?;
        for (k, (item, row)) in items.iter().zip(&rows).enumerate() {
            let mut leaves = Vec::new();
            leaves_of(item, String::new(), &mut leaves);
            for (path, text) in leaves {
                if !row.iter().any(|cell| cell.contains(&text)) {
                    return Err(format!(
                        "the listing's record {} loses its field {path} ({}): in no cell of its row (columns {header:?})",
                        k + 1,
                        process::shorten(&text, 80)
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Every scalar of `value` but nulls and empty text, with its path, as its CSV text would
/// hold it (text as is, numbers and booleans as JSON).
fn leaves_of(value: &Value, path: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(fields) => {
            for (k, v) in fields {
                let path = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                leaves_of(v, path, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                leaves_of(v, format!("{path}[{i}]"), out);
            }
        }
        Value::Null => {}
        Value::String(s) if s.is_empty() => {}
        Value::String(s) => out.push((path, s.clone())),
        other => out.push((path, other.to_string())),
    }
}
