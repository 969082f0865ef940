//! Progress on stderr: a bar per room on a terminal (messages done of the room's total, rate,
//! ETA), plain lines every few seconds otherwise, nothing with `--quiet`. Every line goes
//! through `safe_text::terminal_line`: a room's id, a channel's or a service's message can
//! neither move the cursor, recolour the screen nor start a line of its own.

use std::io::IsTerminal;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::CliError;
use crate::safe_text::terminal_line;

/// How often a plain progress line is printed per room.
const PLAIN_EVERY: Duration = Duration::from_secs(2);

pub enum Progress {
    Quiet,
    /// Plain lines: a ticker thread prints one per room in progress every [`PLAIN_EVERY`],
    /// however long its pages take (a page held 30 s by a rate limit still shows the room
    /// alive every 2 s, never a burst of a line per page).
    Plain(Ticker),
    Bars(MultiProgress),
}

/// Where a room's export stands, for its plain lines.
struct Standing {
    label: String,
    started: Instant,
    /// Listed already when this run began (a resumed export): not this run's rate.
    first_done: u64,
    done: u64,
    total: Option<u64>,
}

impl Standing {
    /// Messages per second this run, and the ETA's text.
    fn rate_and_eta(&self) -> (f64, String) {
        let elapsed = self.started.elapsed().as_secs_f64().max(1e-6);
        let rate = self.done.saturating_sub(self.first_done) as f64 / elapsed;
        let eta = match self.total {
            Some(t) if rate > 0.0 && t > self.done => {
                format!("ETA {}", human_secs((t - self.done) as f64 / rate))
            }
            Some(_) => "ETA 0s".to_owned(),
            None => String::new(),
        };
        (rate, eta)
    }

    fn line(&self) -> String {
        let (rate, eta) = self.rate_and_eta();
        let of = match self.total {
            Some(t) if t > 0 => format!(
                "{}/{t} messages ({:.0}%)",
                self.done,
                100.0 * self.done as f64 / t as f64
            ),
            _ => format!("{} messages", self.done),
        };
        format!(
            "roomchat export: {}: {of}, {rate:.0} messages/s, {eta}",
            self.label
        )
    }
}

type Rooms = Mutex<Vec<Arc<Mutex<Standing>>>>;

/// The plain lines' clock: its thread wakes every [`PLAIN_EVERY`] and prints a line per room
/// in progress, until [`Progress::finish`].
pub struct Ticker {
    rooms: Arc<Rooms>,
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Ticker {
    fn start() -> Ticker {
        let rooms: Arc<Rooms> = Arc::default();
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let thread = {
            let (rooms, stop) = (rooms.clone(), stop.clone());
            std::thread::spawn(move || {
                let (stopped, wake) = &*stop;
                let mut next = Instant::now() + PLAIN_EVERY;
                let mut done = stopped.lock().unwrap_or_else(|e| e.into_inner());
                while !*done {
                    let now = Instant::now();
                    if now < next {
                        done = wake
                            .wait_timeout(done, next - now)
                            .unwrap_or_else(|e| e.into_inner())
                            .0;
                        continue;
                    }
                    next += PLAIN_EVERY;
                    let lines: Vec<String> = rooms
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .iter()
                        .map(|room| room.lock().unwrap_or_else(|e| e.into_inner()).line())
                        .collect();
                    for line in lines {
                        eprintln!("{line}");
                    }
                }
            })
        };
        Ticker {
            rooms,
            stop,
            thread: Mutex::new(Some(thread)),
        }
    }

    fn stop(&self) {
        *self.stop.0.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.stop.1.notify_all();
        if let Some(thread) = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop();
    }
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
            Progress::Plain(Ticker::start())
        }
    }

    /// The progress of one room, `done` of `total` listed already (a resumed export).
    pub fn room(&self, label: &str, total: Option<u64>, done: u64) -> RoomBar<'_> {
        let label = terminal_line(label).into_owned();
        let standing = Arc::new(Mutex::new(Standing {
            label: label.clone(),
            started: Instant::now(),
            first_done: done,
            done,
            total,
        }));
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
                bar.set_prefix(label);
                bar.set_position(done);
                Some(bar)
            }
            Progress::Plain(ticker) => {
                ticker
                    .rooms
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(standing.clone());
                None
            }
            Progress::Quiet => None,
        };
        RoomBar {
            progress: self,
            standing,
            bar,
        }
    }

    /// A line above the bars (or on stderr), unless quiet.
    pub fn note(&self, line: &str) {
        let line = terminal_line(line);
        match self {
            Progress::Quiet => {}
            Progress::Plain(_) => eprintln!("roomchat export: {line}"),
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
        match self {
            Progress::Bars(multi) => {
                let _ = multi.clear();
            }
            Progress::Plain(ticker) => ticker.stop(),
            Progress::Quiet => {}
        }
    }
}

/// The progress of one room: a bar, or its standing for the plain lines. Dropped (done or
/// failed), it is no longer shown.
pub struct RoomBar<'a> {
    progress: &'a Progress,
    standing: Arc<Mutex<Standing>>,
    bar: Option<ProgressBar>,
}

impl RoomBar<'_> {
    /// `done` messages listed of `total`.
    pub fn update(&self, done: u64, total: Option<u64>) {
        let mut standing = self.standing.lock().unwrap_or_else(|e| e.into_inner());
        standing.done = done;
        if total.is_some() {
            standing.total = total;
        }
        if let Some(bar) = &self.bar {
            let (rate, eta) = standing.rate_and_eta();
            if let Some(t) = total {
                bar.set_length(t.max(done));
            }
            bar.set_position(done);
            bar.set_message(format!("{rate:.0} msg/s  {eta}"));
        }
    }

    /// The room is exported: `messages` written, `bytes` in its file.
    pub fn done(&self, messages: u64, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        let (label, started) = {
            let standing = self.standing.lock().unwrap_or_else(|e| e.into_inner());
            (standing.label.clone(), standing.started)
        };
        self.progress.note(&format!(
            "{label}: done, {messages} messages, {bytes} bytes, {:.1} s",
            started.elapsed().as_secs_f64()
        ));
    }
}

impl Drop for RoomBar<'_> {
    fn drop(&mut self) {
        if let Progress::Plain(ticker) = self.progress {
            ticker
                .rooms
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|room| !Arc::ptr_eq(room, &self.standing));
        }
        if let Some(bar) = &self.bar {
            if !bar.is_finished() {
                bar.finish_and_clear();
            }
        }
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
