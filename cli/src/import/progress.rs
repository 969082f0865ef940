//! The import's progress: a bar on a terminal, a line every 2 s otherwise, nothing when quiet.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    plain: bool,
    total: u64,
    done: AtomicUsize,
    started: Instant,
    last: Mutex<Instant>,
}

impl Progress {
    pub fn new(quiet: bool, total: u64) -> Progress {
        let terminal = !quiet && std::io::stderr().is_terminal();
        let bar = terminal.then(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                Some(total),
                indicatif::ProgressDrawTarget::stderr_with_hz(8),
            );
            bar.set_style(
                indicatif::ProgressStyle::with_template(
                    "import users [{bar:32.cyan/blue}] {human_pos}/{human_len}  {per_sec}  ETA {eta}",
                )
                .expect("a valid template")
                .progress_chars("=> "),
            );
            bar
        });
        Progress {
            bar,
            plain: !quiet && !terminal,
            total,
            done: AtomicUsize::new(0),
            started: Instant::now(),
            last: Mutex::new(Instant::now()),
        }
    }

    pub fn step(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(bar) = &self.bar {
            bar.inc(1);
        } else if self.plain {
            let mut last = self.last.lock().expect("progress");
            if last.elapsed() >= Duration::from_secs(2) {
                *last = Instant::now();
                eprintln!(
                    "roomchat import users: {done}/{} rows, {:.0} rows/s",
                    self.total,
                    done as f64 / self.started.elapsed().as_secs_f64().max(1e-6)
                );
            }
        }
    }

    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
