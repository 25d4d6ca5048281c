//! Progress on stderr for long runs (loading large `-f` inputs, listing live clusters, replaying a
//! `simulate --timeline`): drawn only when stderr is a terminal and only once the work has taken
//! [`DELAY`], so quick commands, pipes, CI logs and tests never see it.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// How long work runs before progress appears.
pub const DELAY: Duration = Duration::from_secs(1);
/// How often a spinner turns.
const TICK: Duration = Duration::from_millis(120);

/// Whether progress is drawn: on a terminal, once the work has run for [`DELAY`].
pub fn visible(stderr_is_terminal: bool, elapsed: Duration) -> bool {
    stderr_is_terminal && elapsed >= DELAY
}

/// A spinner with a message for work that reports no steps (a blocking parse, an API listing),
/// turning on its own thread from [`DELAY`] on; cleared when dropped.
#[must_use = "the spinner stops when dropped"]
pub struct Spinner {
    done: Option<mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// Starts a [`Spinner`] saying `message` (e.g. `loading 3 input(s)`), drawn only when `terminal`
/// (the [`super::Printer`] knows whether stderr is one).
pub(crate) fn spinner_on(terminal: bool, message: String) -> Spinner {
    if !terminal {
        return Spinner {
            done: None,
            thread: None,
        };
    }
    let (done, stop) = mpsc::channel::<()>();
    let started = Instant::now();
    let thread = std::thread::Builder::new()
        .name("progress".to_string())
        .spawn(move || {
            // Dropping the sender (the work finished) ends the wait early: nothing is drawn.
            if stop.recv_timeout(DELAY) != Err(RecvTimeoutError::Timeout)
                || !visible(terminal, started.elapsed())
            {
                return;
            }
            let bar = ProgressBar::new_spinner().with_elapsed(started.elapsed());
            if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} ({elapsed})") {
                bar.set_style(style);
            }
            bar.set_message(message);
            bar.enable_steady_tick(TICK);
            let _ = stop.recv();
            bar.finish_and_clear();
        })
        .ok();
    Spinner {
        done: Some(done),
        thread,
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        drop(self.done.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A bar for work that reports its position (a replay's simulated seconds), created on the first
/// update at which it is [`visible`]; cleared by [`Bar::finish`] or when dropped.
pub struct Bar {
    terminal: bool,
    started: Instant,
    template: &'static str,
    bar: Option<ProgressBar>,
}

impl Bar {
    /// A bar drawn with an indicatif `template` (e.g. `{msg} [{bar:40}] {pos}/{len}`), only when
    /// `terminal` (the [`super::Printer`] knows whether stderr is one).
    pub(crate) fn on(terminal: bool, template: &'static str) -> Bar {
        Bar {
            terminal,
            started: Instant::now(),
            template,
            bar: None,
        }
    }

    /// Moves the bar to `position` of `length` with `message`; draws it from [`DELAY`] on.
    pub fn update(&mut self, position: u64, length: u64, message: &str) {
        if self.bar.is_none() && visible(self.terminal, self.started.elapsed()) {
            let bar = ProgressBar::new(length).with_elapsed(self.started.elapsed());
            if let Ok(style) = ProgressStyle::with_template(self.template) {
                bar.set_style(style.progress_chars("=> "));
            }
            self.bar = Some(bar);
        }
        if let Some(b) = &self.bar {
            b.set_length(length);
            b.set_position(position);
            b.set_message(message.to_string());
        }
    }

    /// Whether the bar is on screen.
    pub fn is_drawn(&self) -> bool {
        self.bar.is_some()
    }

    /// Clears the bar.
    pub fn finish(mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_when_not_a_terminal_or_before_the_delay() {
        assert!(!visible(false, Duration::ZERO));
        assert!(!visible(false, Duration::from_secs(3600)));
        assert!(!visible(true, Duration::ZERO));
        assert!(!visible(true, Duration::from_millis(999)));
        assert!(visible(true, DELAY));
        assert!(visible(true, Duration::from_secs(5)));
    }

    #[test]
    fn a_bar_is_created_only_when_visible() {
        let mut off = Bar::on(false, "{msg} {pos}/{len}");
        off.started = Instant::now() - Duration::from_secs(10);
        off.update(1, 10, "x");
        assert!(!off.is_drawn(), "never on a pipe");
        let mut early = Bar::on(true, "{msg} {pos}/{len}");
        early.update(1, 10, "x");
        assert!(!early.is_drawn(), "not before the delay");
        early.started = Instant::now() - DELAY;
        early.update(2, 10, "x");
        assert!(early.is_drawn(), "drawn once the delay has passed");
        assert_eq!(early.bar.as_ref().map(|b| b.position()), Some(2));
        early.finish();
    }

    #[test]
    fn a_spinner_off_a_terminal_starts_no_thread() {
        let s = spinner_on(false, "loading".to_string());
        assert!(s.thread.is_none() && s.done.is_none());
        // On a terminal, work that ends before the delay ends the thread without drawing.
        let started = Instant::now();
        drop(spinner_on(true, "loading".to_string()));
        assert!(started.elapsed() < DELAY, "{:?}", started.elapsed());
    }
}
