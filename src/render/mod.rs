//! Output: the [`Printer`] every command writes through (stdout, color decision), plus tables
//! and structured (JSON/YAML) output.

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

use crate::cli::{ColorChoice, GlobalArgs, OutputFormat};
use crate::error::Result;

/// Where a command's output goes, and how it looks.
pub struct Printer {
    /// The chosen format.
    pub format: OutputFormat,
    /// Whether to use ANSI colors.
    pub color: bool,
    out: Mutex<Box<dyn Write + Send>>,
}

impl Printer {
    /// A printer on stdout, coloring per `--color`, `NO_COLOR` and whether stdout is a terminal.
    pub fn stdout(global: &GlobalArgs) -> Printer {
        use std::io::IsTerminal;
        let color = match global.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::io::stdout().is_terminal()
            }
        };
        Printer {
            format: global.output,
            color,
            out: Mutex::new(Box::new(std::io::stdout())),
        }
    }

    /// A printer into any writer (tests).
    pub fn to_writer(format: OutputFormat, color: bool, out: Box<dyn Write + Send>) -> Printer {
        Printer {
            format,
            color,
            out: Mutex::new(out),
        }
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

    /// Writes a note for the user to stderr (never mixed into machine-readable stdout).
    pub fn note(&self, text: &str) -> Result<()> {
        let mut err = std::io::stderr();
        writeln!(
            err,
            "{}",
            paint(self.color, &format!("note: {text}"), Style::Dim)
        )?;
        Ok(())
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
