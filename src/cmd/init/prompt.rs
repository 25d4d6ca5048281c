//! The only place `init` asks questions: dialoguer prompts on a terminal, or an error naming the
//! flag when prompting is not allowed (`--yes`, or stdin is not a terminal).

use crate::error::{Error, Result};

/// Asks for a missing input, or explains which flag to pass.
pub trait Ask {
    /// Asks for `flag`'s value; `default` is offered when known. An empty answer is allowed only
    /// when `optional`.
    fn ask(
        &mut self,
        flag: &str,
        question: &str,
        default: Option<&str>,
        optional: bool,
    ) -> Result<String>;
}

/// Never asks: every missing required input is an error naming its flag.
pub struct NoPrompt {
    /// Why prompting is off, for the message.
    pub reason: &'static str,
}

impl Ask for NoPrompt {
    fn ask(
        &mut self,
        flag: &str,
        question: &str,
        default: Option<&str>,
        optional: bool,
    ) -> Result<String> {
        if let Some(d) = default {
            return Ok(d.to_string());
        }
        if optional {
            return Ok(String::new());
        }
        Err(Error::usage(format!(
            "{flag} is required ({question}); {}",
            self.reason
        )))
    }
}

/// Asks on the terminal (stderr), so stdout stays the generated YAML.
pub struct Terminal;

impl Ask for Terminal {
    fn ask(
        &mut self,
        flag: &str,
        question: &str,
        default: Option<&str>,
        optional: bool,
    ) -> Result<String> {
        let mut input = dialoguer::Input::<String>::new()
            .with_prompt(format!("{question} ({flag})"))
            .allow_empty(optional);
        if let Some(d) = default {
            input = input.default(d.to_string());
        }
        input.interact_text().map_err(|e| {
            Error::usage(format!(
                "{flag}: could not read an answer from the terminal: {e}"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_prompt_names_the_flag() {
        let mut p = NoPrompt {
            reason: "pass it (prompting is off with --yes)",
        };
        assert_eq!(
            p.ask(
                "--cluster-name",
                "name of the Cluster API Cluster",
                None,
                false
            )
            .unwrap_err()
            .to_string(),
            "--cluster-name is required (name of the Cluster API Cluster); pass it (prompting is off with --yes)"
        );
        assert_eq!(p.ask("--x", "x", Some("d"), false).unwrap(), "d");
        assert_eq!(p.ask("--x", "x", None, true).unwrap(), "");
    }
}
