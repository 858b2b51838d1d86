//! A progress bar on stderr for work that takes a while: drawn only when stderr is a terminal, and only
//! once the work has run for [`DELAY`], so that quick runs and pipes see nothing.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before its bar appears.
const DELAY: Duration = Duration::from_millis(500);

/// A bar of `total` steps (bytes, sequences, runs), hidden until it is worth showing.
pub(crate) struct Progress {
    bar: ProgressBar,
    start: Instant,
    /// Whether it may be drawn at all (stderr is a terminal).
    drawable: bool,
    shown: bool,
}

impl Progress {
    /// A bar for `what` (a few words), counting `total` steps; `bytes` shows them as sizes.
    pub(crate) fn new(what: &str, total: u64, bytes: bool) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        let template = if bytes {
            "{msg:>12} [{bar:30}] {bytes}/{total_bytes} {elapsed}"
        } else {
            "{msg:>12} [{bar:30}] {pos}/{len} {elapsed}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(what.to_string());
        Progress {
            bar,
            start: Instant::now(),
            drawable: std::io::stderr().is_terminal(),
            shown: false,
        }
    }

    /// Starts a new stage of the same bar: `what`, out of `total`, from 0.
    pub(crate) fn stage(&mut self, what: &str, total: u64) {
        self.bar.set_message(what.to_string());
        self.bar.set_length(total);
        self.bar.set_position(0);
    }

    /// `done` steps of the stage are done.
    pub(crate) fn set(&mut self, done: u64) {
        self.bar.set_position(done);
        self.show_when_due();
    }

    /// `done` steps of `total` are done (for work whose size is learnt as it goes).
    pub(crate) fn set_of(&mut self, done: u64, total: u64) {
        self.bar.set_length(total.max(done));
        self.set(done);
    }

    /// `steps` more steps are done.
    pub(crate) fn add(&mut self, steps: u64) {
        self.bar.inc(steps);
        self.show_when_due();
    }

    fn show_when_due(&mut self) {
        if self.drawable && !self.shown && self.start.elapsed() >= DELAY {
            self.shown = true;
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }
}

impl Drop for Progress {
    /// Clears the bar, so that what is printed next (a result, or the one line of an error) starts on
    /// an empty line.
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
