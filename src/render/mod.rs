//! Output: the [`Printer`] every command writes through (stdout, stderr, progress, the color
//! decision), plus tables and structured (JSON/YAML) output.

pub mod chart;
pub mod doctor;
pub mod explain;
pub mod help;
pub mod man;
pub mod plan;
pub mod progress;
pub mod simulate;
pub mod status;
pub mod table;
pub mod timeline;
pub mod tree;

use std::io::Write;
use std::sync::Mutex;

use serde::Serialize;

use crate::cli::{ColorChoice, OutputFormat};
use crate::error::Result;

/// What a [`Printer`] is built from, as plain values (uv's printer is the model): what the
/// command line chose, and what the process's streams and environment are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrinterSettings {
    /// The output format.
    pub format: OutputFormat,
    /// `--color`.
    pub color: ColorChoice,
    /// `-v`, as kubectl counts it.
    pub verbosity: u8,
    /// `NO_COLOR` is set (and not empty).
    pub no_color: bool,
    /// stdout is a terminal (colors under `--color auto`).
    pub stdout_is_terminal: bool,
    /// stderr is a terminal (progress is drawn only there).
    pub stderr_is_terminal: bool,
}

impl PrinterSettings {
    /// The settings for this process: the choices given, the environment's `NO_COLOR` and
    /// whether stdout and stderr are terminals.
    pub fn detect(format: OutputFormat, color: ColorChoice, verbosity: u8) -> PrinterSettings {
        use std::io::IsTerminal;
        PrinterSettings {
            format,
            color,
            verbosity,
            no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
            stdout_is_terminal: std::io::stdout().is_terminal(),
            stderr_is_terminal: std::io::stderr().is_terminal(),
        }
    }

    /// Whether output is colored: `--color`, else (`auto`) a terminal without `NO_COLOR`.
    pub fn colored(&self) -> bool {
        match self.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => !self.no_color && self.stdout_is_terminal,
        }
    }
}

/// Where a command's output goes, and how it looks: it owns stdout (the command's output),
/// stderr (notes and reports beside it) and progress (drawn on a terminal stderr only).
pub struct Printer {
    /// The chosen format.
    pub format: OutputFormat,
    /// Whether to use ANSI colors.
    pub color: bool,
    /// `-v`, as kubectl counts it.
    pub verbosity: u8,
    /// Whether progress may be drawn (stderr is a terminal).
    progress: bool,
    out: Mutex<Box<dyn Write + Send>>,
    err: Mutex<Box<dyn Write + Send>>,
}

impl Printer {
    /// A printer on the process's stdout and stderr.
    pub fn new(settings: PrinterSettings) -> Printer {
        Printer::with_writers(
            settings,
            Box::new(std::io::stdout()),
            Box::new(std::io::stderr()),
        )
    }

    /// A printer into any writers (tests capture both streams).
    pub fn with_writers(
        settings: PrinterSettings,
        out: Box<dyn Write + Send>,
        err: Box<dyn Write + Send>,
    ) -> Printer {
        Printer {
            format: settings.format,
            color: settings.colored(),
            verbosity: settings.verbosity,
            progress: settings.stderr_is_terminal,
            out: Mutex::new(out),
            err: Mutex::new(err),
        }
    }

    /// A printer into any writer for stdout, with stderr the process's and no progress (tests).
    pub fn to_writer(format: OutputFormat, color: bool, out: Box<dyn Write + Send>) -> Printer {
        let settings = PrinterSettings {
            format,
            color: if color {
                ColorChoice::Always
            } else {
                ColorChoice::Never
            },
            verbosity: 0,
            no_color: false,
            stdout_is_terminal: false,
            stderr_is_terminal: false,
        };
        Printer::with_writers(settings, out, Box::new(std::io::stderr()))
    }

    /// A spinner saying `message` while work that reports no steps runs (see
    /// [`progress::Spinner`]); nothing unless stderr is a terminal.
    pub fn spinner(&self, message: impl Into<String>) -> progress::Spinner {
        progress::spinner_on(self.progress, message.into())
    }

    /// A progress bar drawn with an indicatif `template` (see [`progress::Bar`]); nothing unless
    /// stderr is a terminal.
    pub fn bar(&self, template: &'static str) -> progress::Bar {
        progress::Bar::on(self.progress, template)
    }

    /// Writes text as is.
    pub fn write(&self, text: &str) -> Result<()> {
        let mut out = self.out.lock().unwrap_or_else(|p| p.into_inner());
        out.write_all(text.as_bytes())?;
        out.flush()?;
        Ok(())
    }

    /// Writes one line.
    pub fn line(&self, text: &str) -> Result<()> {
        self.write(&format!("{text}\n"))
    }

    /// Writes one line to stderr as is: what a command reports beside its output (files written,
    /// what to do next), never mixed into machine-readable stdout.
    pub fn err(&self, text: &str) -> Result<()> {
        let mut err = self.err.lock().unwrap_or_else(|p| p.into_inner());
        writeln!(err, "{text}")?;
        err.flush()?;
        Ok(())
    }

    /// Writes a note for the user to stderr (never mixed into machine-readable stdout).
    pub fn note(&self, text: &str) -> Result<()> {
        self.err(&paint(self.color, &format!("note: {text}"), Style::Dim))
    }

    /// Writes a value as JSON or YAML per the format (JSON for table formats).
    pub fn structured<T: Serialize>(&self, value: &T) -> Result<()> {
        let text = structured_text(self.format, value)?;
        self.write(&text)
    }
}

/// A value as pretty JSON (with a trailing newline) or YAML.
pub fn structured_text<T: Serialize>(format: OutputFormat, value: &T) -> Result<String> {
    let io = |e: String| crate::error::Error::Io(std::io::Error::other(e));
    match format {
        OutputFormat::Yaml => serde_saphyr::to_string(value).map_err(|e| io(e.to_string())),
        _ => serde_json::to_string_pretty(value)
            .map(|s| s + "\n")
            .map_err(|e| io(e.to_string())),
    }
}

/// Paints text with a color when enabled.
pub fn paint(enabled: bool, text: &str, style: Style) -> String {
    use owo_colors::OwoColorize;
    if !enabled {
        return text.to_string();
    }
    match style {
        Style::Good => text.green().to_string(),
        Style::Bad => text.red().to_string(),
        Style::Warn => text.yellow().to_string(),
        Style::Dim => text.dimmed().to_string(),
        Style::Bold => text.bold().to_string(),
    }
}

/// Semantic styles (condition polarity: green good, red bad, yellow unknown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Success, ok.
    Good,
    /// Error.
    Bad,
    /// Warning or unknown.
    Warn,
    /// Secondary text.
    Dim,
    /// Headers.
    Bold,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A writer the test keeps a handle on.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let mut v = self.0.lock().unwrap_or_else(|p| p.into_inner());
            v.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    fn settings(color: ColorChoice, no_color: bool, terminal: bool) -> PrinterSettings {
        PrinterSettings {
            format: OutputFormat::Table,
            color,
            verbosity: 0,
            no_color,
            stdout_is_terminal: terminal,
            stderr_is_terminal: terminal,
        }
    }

    #[test]
    fn colors_follow_the_flag_then_no_color_then_the_terminal() {
        let colored = |c, n, t| settings(c, n, t).colored();
        assert!(colored(ColorChoice::Always, true, false));
        assert!(!colored(ColorChoice::Never, false, true));
        assert!(colored(ColorChoice::Auto, false, true));
        assert!(!colored(ColorChoice::Auto, true, true), "NO_COLOR");
        assert!(!colored(ColorChoice::Auto, false, false), "a pipe");
    }

    #[test]
    fn output_goes_to_stdout_and_notes_and_reports_to_stderr() {
        let (out, err) = (Captured::default(), Captured::default());
        let printer = Printer::with_writers(
            settings(ColorChoice::Never, false, false),
            Box::new(out.clone()),
            Box::new(err.clone()),
        );
        printer.line("plan").unwrap();
        printer.note("a repeated object").unwrap();
        printer.err("wrote DIR: 3 created").unwrap();
        assert_eq!(out.text(), "plan\n");
        assert_eq!(
            err.text(),
            "note: a repeated object\nwrote DIR: 3 created\n"
        );
        // Off a terminal no progress is drawn, however long the work.
        let mut bar = printer.bar("{pos}/{len}");
        bar.update(1, 2, "x");
        assert!(!bar.is_drawn());
    }
}
