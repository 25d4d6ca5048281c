//! The only place `init` asks questions: dialoguer prompts on a terminal that check each answer
//! as it is given and ask again on a bad one, or, when prompting is not allowed (`--yes`, or
//! stdin is not a terminal), a list of every missing input reported at once.

use crate::error::{Error, Result};

/// Checks one answer; the message says what is wrong with it.
pub type Check<'a> = &'a dyn Fn(&str) -> std::result::Result<(), String>;

/// One question: the flag that answers it, what it asks, a default when known, whether an empty
/// answer is allowed, and the check of an answer.
pub struct Question<'a> {
    /// `--cluster-name`.
    pub flag: &'a str,
    /// What to ask.
    pub text: &'a str,
    /// Offered as the answer when known.
    pub default: Option<&'a str>,
    /// Whether an empty answer is allowed.
    pub optional: bool,
    /// The check of a non-empty answer.
    pub check: Check<'a>,
}

/// Accepts any answer.
pub fn any(_: &str) -> std::result::Result<(), String> {
    Ok(())
}

/// Asks for missing inputs, or collects them.
pub trait Ask {
    /// The answer to `q`. When no answer can be had, returns `Ok(None)` and remembers the flag
    /// for [`Ask::finish`].
    fn ask(&mut self, q: &Question<'_>) -> Result<Option<String>>;

    /// A yes/no question `flag` answers; `Ok(None)` when prompting is off (the caller then
    /// applies its documented assumption and says so).
    fn confirm(&mut self, flag: &str, text: &str, default: bool) -> Result<Option<bool>>;

    /// After the last question: an error listing every input that could not be had.
    fn finish(&mut self) -> Result<()>;
}

/// Never asks: every missing required input is collected, and [`Ask::finish`] reports them all
/// in one error, as kubectl reports all missing required flags at once.
pub struct NoPrompt {
    /// Why prompting is off, for the message.
    pub reason: &'static str,
    /// `(flag, what it is)` of each missing input, in the order asked.
    missing: Vec<(String, String)>,
}

impl NoPrompt {
    /// Collects missing inputs; `reason` says why prompting is off.
    pub fn new(reason: &'static str) -> NoPrompt {
        NoPrompt {
            reason,
            missing: Vec::new(),
        }
    }
}

impl Ask for NoPrompt {
    fn ask(&mut self, q: &Question<'_>) -> Result<Option<String>> {
        if let Some(d) = q.default {
            return Ok(Some(d.to_string()));
        }
        if q.optional {
            return Ok(Some(String::new()));
        }
        self.missing.push((q.flag.to_string(), q.text.to_string()));
        Ok(None)
    }

    fn confirm(&mut self, _flag: &str, _text: &str, _default: bool) -> Result<Option<bool>> {
        Ok(None)
    }

    fn finish(&mut self) -> Result<()> {
        if self.missing.is_empty() {
            return Ok(());
        }
        let flags: Vec<&str> = self.missing.iter().map(|(f, _)| f.as_str()).collect();
        let width = flags.iter().map(|f| f.len()).max().unwrap_or(0);
        let mut message = format!(
            "required flag(s) {} not set; {}:",
            flags.join(", "),
            self.reason
        );
        for (flag, text) in &self.missing {
            message.push_str(&format!("\n  {flag:width$}  {text}"));
        }
        Err(Error::usage(message))
    }
}

/// Asks on the terminal (stderr), so stdout stays the generated YAML.
pub struct Terminal;

impl Ask for Terminal {
    fn ask(&mut self, q: &Question<'_>) -> Result<Option<String>> {
        let check = q.check;
        let optional = q.optional;
        let mut input = dialoguer::Input::<String>::new()
            .with_prompt(format!("{} ({})", q.text, q.flag))
            .allow_empty(optional)
            // A bad answer is said why and asked again; the answers before it stay as given.
            .validate_with(move |answer: &String| -> std::result::Result<(), String> {
                let answer = answer.trim();
                if answer.is_empty() {
                    return if optional {
                        Ok(())
                    } else {
                        Err("an answer is required".to_string())
                    };
                }
                check(answer)
            });
        if let Some(d) = q.default {
            input = input.default(d.to_string());
        }
        input
            .interact_text()
            .map(|a| Some(a.trim().to_string()))
            .map_err(|e| {
                Error::usage(format!(
                    "{}: could not read an answer from the terminal: {e}",
                    q.flag
                ))
            })
    }

    fn confirm(&mut self, flag: &str, text: &str, default: bool) -> Result<Option<bool>> {
        dialoguer::Confirm::new()
            .with_prompt(format!("{text} ({flag})"))
            .default(default)
            // Answered with Enter like every other question, so a typed answer is never
            // taken as the next question's.
            .wait_for_newline(true)
            .interact()
            .map(Some)
            .map_err(|e| {
                Error::usage(format!(
                    "{flag}: could not read an answer from the terminal: {e}"
                ))
            })
    }

    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
}

/// The prompter for this run: none with `--yes` or when stdin is not a terminal (every missing
/// input is then reported at once), else the terminal.
pub fn for_run(yes: bool) -> Box<dyn Ask> {
    use std::io::IsTerminal;
    if yes {
        Box::new(NoPrompt::new("pass them (prompting is off with --yes)"))
    } else if !std::io::stdin().is_terminal() {
        Box::new(NoPrompt::new(
            "pass them (stdin is not a terminal, so init cannot ask)",
        ))
    } else {
        Box::new(Terminal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q<'a>(
        flag: &'a str,
        text: &'a str,
        default: Option<&'a str>,
        optional: bool,
    ) -> Question<'a> {
        Question {
            flag,
            text,
            default,
            optional,
            check: &any,
        }
    }

    #[test]
    fn no_prompt_lists_every_missing_flag_at_once() {
        let mut p = NoPrompt::new("pass them (prompting is off with --yes)");
        assert_eq!(
            p.ask(&q(
                "--cluster-name",
                "name of the Cluster API Cluster",
                None,
                false
            ))
            .unwrap(),
            None
        );
        assert_eq!(
            p.ask(&q("--x", "x", Some("d"), false)).unwrap().as_deref(),
            Some("d")
        );
        assert_eq!(
            p.ask(&q("--y", "y", None, true)).unwrap().as_deref(),
            Some("")
        );
        assert_eq!(
            p.ask(&q(
                "--image",
                "container image of the controller",
                None,
                false
            ))
            .unwrap(),
            None
        );
        assert_eq!(
            p.finish().unwrap_err().to_string(),
            "required flag(s) --cluster-name, --image not set; pass them (prompting is off with --yes):\n  --cluster-name  name of the Cluster API Cluster\n  --image         container image of the controller"
        );
        assert!(NoPrompt::new("r").finish().is_ok());
        // A yes/no question is never answered for the user.
        assert_eq!(
            NoPrompt::new("r")
                .confirm("--self-hosted", "q", true)
                .unwrap(),
            None
        );
    }
}
