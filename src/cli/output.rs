//! kubectl's `-o`: `table`, `wide`, `json`, `yaml`, and for `status` also `name`,
//! `jsonpath=TEMPLATE` and `custom-columns=HEADER:PATH,...`. Every command reads the base format
//! ([`OutputFormat`]); `status` reads the whole choice ([`OutputMode`]).

use std::ffi::OsStr;

use clap::builder::{PossibleValue, TypedValueParser};

use super::OutputFormat;

/// The whole `-o` choice.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum OutputMode {
    /// The table.
    #[default]
    Table,
    /// The table with more columns.
    Wide,
    /// JSON.
    Json,
    /// YAML.
    Yaml,
    /// `kind/name` lines.
    Name,
    /// A kubectl JSONPath template over the JSON output.
    JsonPath(String),
    /// Columns of the rows (`status`: the nodes), each a header and a JSONPath.
    CustomColumns(Vec<(String, String)>),
}

impl OutputMode {
    /// The base format the other commands act on.
    pub fn base(&self) -> OutputFormat {
        match self {
            OutputMode::Table | OutputMode::Name | OutputMode::CustomColumns(_) => {
                OutputFormat::Table
            }
            OutputMode::Wide => OutputFormat::Wide,
            OutputMode::Json | OutputMode::JsonPath(_) => OutputFormat::Json,
            OutputMode::Yaml => OutputFormat::Yaml,
        }
    }

    /// Whether only `status` takes it.
    pub fn status_only(&self) -> bool {
        matches!(
            self,
            OutputMode::Name | OutputMode::JsonPath(_) | OutputMode::CustomColumns(_)
        )
    }
}

/// Whether `command` takes `-o` with `value` (a format, or a template's `jsonpath=` /
/// `custom-columns=` prefix): `name` and the templates only `status`, none `completion` and
/// `uninstall` (they print no formats). The parser refuses and completion leaves out the same.
pub fn accepts(command: &str, value: &str) -> bool {
    let status_only =
        value == "name" || value.starts_with("jsonpath") || value.starts_with("custom-columns");
    match command {
        "completion" | "uninstall" => false,
        "status" => true,
        "init" | "doctor" | "explain" | "simulate" | "run" | "version" => !status_only,
        // No subcommand yet: anything some command takes.
        _ => true,
    }
}

/// Parses an `-o` value.
///
/// # Errors
/// An unknown format or an empty template, in kubectl's words.
pub fn parse(text: &str) -> Result<OutputMode, String> {
    let template = |prefix: &str| {
        text.strip_prefix(prefix)
            .and_then(|t| t.strip_prefix('='))
            .map(str::to_string)
    };
    Ok(match text {
        "table" => OutputMode::Table,
        "wide" => OutputMode::Wide,
        "json" => OutputMode::Json,
        "yaml" => OutputMode::Yaml,
        "name" => OutputMode::Name,
        _ => {
            if let Some(t) = template("jsonpath") {
                if t.trim().is_empty() {
                    return Err("jsonpath template format specified but no template given".into());
                }
                OutputMode::JsonPath(t)
            } else if let Some(spec) = template("custom-columns") {
                OutputMode::CustomColumns(columns(&spec)?)
            } else {
                return Err(format!(
                    "unable to match a printer suitable for the output format {text:?}, allowed \
                     formats are: table, wide, json, yaml, name, jsonpath=TEMPLATE, \
                     custom-columns=HEADER:PATH,..."
                ));
            }
        }
    })
}

/// `HEADER:PATH,HEADER:PATH` (kubectl's custom-columns spec).
fn columns(spec: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for part in spec.split(',') {
        match part.split_once(':') {
            Some((header, path)) if !header.is_empty() && !path.trim().is_empty() => {
                out.push((header.to_string(), path.trim().to_string()));
            }
            _ => {
                return Err(format!(
                    "custom-columns format expects HEADER:PATH pairs separated by commas, got \
                     {part:?}"
                ));
            }
        }
    }
    Ok(out)
}

/// clap's value parser for `-o`: validates the whole value, keeps the base format (the raw text
/// is read again for [`OutputMode`]), and lists the formats for help and completion.
#[derive(Debug, Clone, Copy)]
pub struct OutputParser;

impl TypedValueParser for OutputParser {
    type Value = OutputFormat;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<OutputFormat, clap::Error> {
        let text = value.to_str().ok_or_else(|| {
            clap::Error::raw(clap::error::ErrorKind::InvalidUtf8, "-o is not UTF-8\n").with_cmd(cmd)
        })?;
        parse(text).map(|m| m.base()).map_err(|problem| {
            let flag = arg.map_or("--output".to_string(), |a| a.to_string());
            clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!("invalid value for {flag}: {problem}\n"),
            )
            .with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            [
                ("table", "A human-readable table or tree"),
                ("wide", "The table with more columns"),
                ("json", "JSON for scripts"),
                ("yaml", "YAML for scripts"),
                ("name", "kind/name lines (status)"),
                ("jsonpath=", "A JSONPath template over the JSON (status)"),
                (
                    "custom-columns=",
                    "HEADER:PATH,... columns over the nodes (status)",
                ),
            ]
            .into_iter()
            .map(|(v, help)| PossibleValue::new(v).help(help)),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kubectl_forms() {
        assert_eq!(parse("wide"), Ok(OutputMode::Wide));
        assert_eq!(parse("name"), Ok(OutputMode::Name));
        assert_eq!(
            parse("jsonpath={.cost.currentPerHour}"),
            Ok(OutputMode::JsonPath("{.cost.currentPerHour}".to_string()))
        );
        assert_eq!(
            parse("custom-columns=NODE:.name,PRICE:.pricePerHour"),
            Ok(OutputMode::CustomColumns(vec![
                ("NODE".to_string(), ".name".to_string()),
                ("PRICE".to_string(), ".pricePerHour".to_string())
            ]))
        );
        assert!(parse("jsonpath=").is_err());
        assert!(
            parse("custom-columns=NODE")
                .unwrap_err()
                .contains("\"NODE\"")
        );
        assert!(parse("xml").unwrap_err().contains("allowed formats"));
    }
}
