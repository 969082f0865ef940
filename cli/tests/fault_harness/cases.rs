//! A case: its kind and its plan, drawn from the seed and its number alone (so a case replays
//! from those two), run against an emulator of its own in a scratch folder of its own.

use rand::SeedableRng;

use crate::export_common::{emulator, Scratch};
use crate::{exports, imports, listings, targets};

/// The cases' random numbers: xoshiro256++ (a named algorithm: a seed gives the same numbers
/// everywhere), seeded from the seed and the case's number.
pub type CaseRng = rand::rngs::Xoshiro256PlusPlus;

/// What a case exercises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// One room or channel exported through kills, deletions, posts and faults, then again.
    Export,
    /// Several targets: identical ones, ones that map to one file, many rooms.
    Targets,
    /// Runs of the same export at once.
    Concurrent,
    /// An export on a full disk, then again on a disk with room.
    DiskFull,
    /// `--after`/`--before`, times with non-ASCII characters among them.
    TimeFilter,
    /// `import users` through kills and faults on the creates, then again.
    Import,
    /// `room-messages` / `list-users` `--all --output csv`.
    ListingCsv,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Export,
        Kind::Targets,
        Kind::Concurrent,
        Kind::DiskFull,
        Kind::TimeFilter,
        Kind::Import,
        Kind::ListingCsv,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Export => "export",
            Kind::Targets => "targets",
            Kind::Concurrent => "concurrent",
            Kind::DiskFull => "disk-full",
            Kind::TimeFilter => "time-filter",
            Kind::Import => "import",
            Kind::ListingCsv => "listing-csv",
        }
    }

    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
}

enum Plan {
    Export(exports::Plan),
    Targets(targets::TargetsPlan),
    Import(imports::Plan),
    Listing(listings::Plan),
}

pub struct Case {
    pub kind: Kind,
    /// Its number, which also tells its rooms' ids apart.
    number: u64,
    plan: Plan,
    rng: CaseRng,
}

/// The random numbers of case `number` of `seed` (the two mixed by SplitMix64's finalizer, so
/// that neighbouring cases draw unrelated numbers).
fn case_rng(seed: u64, number: u64) -> CaseRng {
    let mut z = seed ^ number.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    CaseRng::seed_from_u64(z ^ (z >> 31))
}

impl Case {
    /// Case `number` of `seed`: the kinds take turns (every kind runs within a few cases),
    /// everything else is drawn.
    pub fn plan(seed: u64, number: u64, kinds: &[Kind], disk_full: bool) -> Case {
        let mut rng = case_rng(seed, number);
        let mut kind = kinds[(number % kinds.len() as u64) as usize];
        if kind == Kind::DiskFull && !disk_full {
            kind = Kind::Export;
        }
        let plan = match kind {
            Kind::Export | Kind::Concurrent | Kind::DiskFull | Kind::TimeFilter => {
                Plan::Export(exports::Plan::draw(&mut rng, kind))
            }
            Kind::Targets => Plan::Targets(targets::TargetsPlan::draw(&mut rng)),
            Kind::Import => Plan::Import(imports::Plan::draw(&mut rng)),
            Kind::ListingCsv => Plan::Listing(listings::Plan::draw(&mut rng)),
        };
        Case {
            kind,
            number,
            plan,
            rng,
        }
    }

    /// The case on one line.
    pub fn describe(&self) -> String {
        match &self.plan {
            Plan::Export(p) => p.describe(),
            Plan::Targets(p) => p.describe(),
            Plan::Import(p) => p.describe(),
            Plan::Listing(p) => p.describe(),
        }
    }

    /// Runs the case; `Err` says which invariant broke, and how.
    pub fn run(&self) -> Result<(), String> {
        let emu = emulator();
        let dir = Scratch::new(&format!("harness-{}", self.number));
        let mut rng = self.rng.clone();
        let room_id = format!("r{}", self.number);
        match &self.plan {
            Plan::Export(p) => p.run(&mut rng, &emu, &dir.0, &room_id),
            Plan::Targets(p) => p.run(&mut rng, &emu, &dir.0),
            Plan::Import(p) => p.run(&mut rng, &emu, &dir.0),
            Plan::Listing(p) => p.run(&mut rng, &emu, &dir.0, &room_id),
        }
    }
}
