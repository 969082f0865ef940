//! Progress on stderr: a bar per room on a terminal (messages done of the room's total, rate,
//! ETA), plain lines every few seconds otherwise, nothing with `--quiet`. Every line goes
//! through `safe_text::terminal_line`: a room's id, a channel's or a service's message can
//! neither move the cursor, recolour the screen nor start a line of its own.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::CliError;
use crate::safe_text::terminal_line;

/// How often a plain progress line is printed per room.
const PLAIN_EVERY: Duration = Duration::from_secs(2);

pub enum Progress {
    Quiet,
    Plain,
    Bars(MultiProgress),
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        if quiet {
            Progress::Quiet
        } else if std::io::stderr().is_terminal() {
            Progress::Bars(MultiProgress::with_draw_target(
                ProgressDrawTarget::stderr_with_hz(8),
            ))
        } else {
            Progress::Plain
        }
    }

    /// The progress of one room, `done` of `total` listed already (a resumed export).
    pub fn room(&self, label: &str, total: Option<u64>, done: u64) -> RoomBar<'_> {
        let label = terminal_line(label);
        let bar = match self {
            Progress::Bars(multi) => {
                let bar = multi.add(ProgressBar::new(total.unwrap_or(0)));
                bar.set_style(
                    ProgressStyle::with_template(
                        "{prefix:.bold} [{bar:32.cyan/blue}] {human_pos}/{human_len} messages  {msg}",
                    )
                    .expect("a valid template")
                    .progress_chars("=> "),
                );
                bar.set_prefix(label.to_string());
                bar.set_position(done);
                Some(bar)
            }
            _ => None,
        };
        RoomBar {
            progress: self,
            label: label.into_owned(),
            bar,
            started: Instant::now(),
            first_done: done,
            last_line: Mutex::new(None),
        }
    }

    /// A line above the bars (or on stderr), unless quiet.
    pub fn note(&self, line: &str) {
        let line = terminal_line(line);
        match self {
            Progress::Quiet => {}
            Progress::Plain => eprintln!("roomchat export: {line}"),
            Progress::Bars(multi) => {
                let _ = multi.println(format!("roomchat export: {line}"));
            }
        }
    }

    /// A room's export failed (said even when quiet: it is an error); `rerun` tells whether
    /// running the same command again can help (then it says so).
    pub fn failed(&self, label: &str, error: &CliError, rerun: bool) {
        let line = format!(
            "roomchat export: {} failed: {}{}",
            terminal_line(label),
            terminal_line(&error.to_string()),
            if rerun {
                " (run the same command again to resume)"
            } else {
                ""
            }
        );
        match self {
            Progress::Bars(multi) => {
                let _ = multi.println(line);
            }
            _ => eprintln!("{line}"),
        }
    }

    pub fn finish(&self) {
        if let Progress::Bars(multi) = self {
            let _ = multi.clear();
        }
    }
}

pub struct RoomBar<'a> {
    progress: &'a Progress,
    label: String,
    bar: Option<ProgressBar>,
    started: Instant,
    first_done: u64,
    last_line: Mutex<Option<Instant>>,
}

impl RoomBar<'_> {
    /// `done` messages listed of `total`.
    pub fn update(&self, done: u64, total: Option<u64>) {
        let elapsed = self.started.elapsed().as_secs_f64().max(1e-6);
        let rate = done.saturating_sub(self.first_done) as f64 / elapsed;
        let eta = match total {
            Some(t) if rate > 0.0 && t > done => {
                format!("ETA {}", human_secs((t - done) as f64 / rate))
            }
            Some(_) => "ETA 0s".to_owned(),
            None => String::new(),
        };
        match (&self.bar, self.progress) {
            (Some(bar), _) => {
                if let Some(t) = total {
                    bar.set_length(t.max(done));
                }
                bar.set_position(done);
                bar.set_message(format!("{:.0} msg/s  {eta}", rate));
            }
            (None, Progress::Plain) => {
                let mut last = self.last_line.lock().expect("progress line");
                if last.is_none_or(|at| at.elapsed() >= PLAIN_EVERY) {
                    *last = Some(Instant::now());
                    let of = match total {
                        Some(t) if t > 0 => {
                            format!(
                                "{done}/{t} messages ({:.0}%)",
                                100.0 * done as f64 / t as f64
                            )
                        }
                        _ => format!("{done} messages"),
                    };
                    eprintln!(
                        "roomchat export: {}: {of}, {rate:.0} messages/s, {eta}",
                        self.label
                    );
                }
            }
            _ => {}
        }
    }

    /// The room is exported: `messages` written, `bytes` in its file.
    pub fn done(&self, messages: u64, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        self.progress.note(&format!(
            "{}: done, {messages} messages, {bytes} bytes, {:.1} s",
            self.label,
            self.started.elapsed().as_secs_f64()
        ));
    }
}

fn human_secs(secs: f64) -> String {
    let s = secs.round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}
