//! kubectl's `-l/--selector` text as requirements: `k=v`, `k==v`, `k!=v`, `k`, `!k`,
//! `k in (a,b)`, `k notin (a,b)`, joined by commas (apimachinery `labels.Parse`).

use crate::model::labels::{Operator, Requirement};

/// Parses a label selector; an empty text selects everything.
///
/// # Errors
/// A term that is none of the forms above, named in the message.
pub fn parse(text: &str) -> Result<Vec<Requirement>, String> {
    let mut out = Vec::new();
    for term in split_terms(text) {
        let term = term.trim();
        if term.is_empty() {
            continue;
        }
        out.push(parse_term(term).ok_or_else(|| {
            format!(
                "invalid label selector term {term:?}: expected key=value, key!=value, key, !key, \
                 key in (a,b) or key notin (a,b)"
            )
        })?);
    }
    Ok(out)
}

/// Splits on commas outside parentheses.
fn split_terms(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&text[start..]);
    out
}

fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn parse_term(term: &str) -> Option<Requirement> {
    if let Some(key) = term.strip_prefix('!') {
        let key = key.trim();
        return valid_key(key).then(|| Requirement::new(key, Operator::DoesNotExist, &[]));
    }
    if let Some((key, value)) = term.split_once("!=") {
        let key = key.trim();
        return valid_key(key).then(|| Requirement::new(key, Operator::NotIn, &[value.trim()]));
    }
    if let Some((key, value)) = term.split_once('=') {
        let key = key.trim();
        let value = value.strip_prefix('=').unwrap_or(value).trim();
        return valid_key(key).then(|| Requirement::new(key, Operator::In, &[value]));
    }
    for (word, op) in [(" notin ", Operator::NotIn), (" in ", Operator::In)] {
        if let Some((key, rest)) = term.split_once(word) {
            let key = key.trim();
            let values = rest
                .trim()
                .strip_prefix('(')?
                .strip_suffix(')')?
                .split(',')
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .collect::<Vec<_>>();
            return (valid_key(key) && !values.is_empty())
                .then(|| Requirement::new(key, op, &values));
        }
    }
    valid_key(term).then(|| Requirement::new(term, Operator::Exists, &[]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        let r = parse("a=1,b==2,c!=3,d,!e,f in (x, y),g notin (z)").unwrap();
        let text: Vec<String> = r.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "a In [1]",
                "b In [2]",
                "c NotIn [3]",
                "d Exists",
                "e DoesNotExist",
                "f In [x, y]",
                "g NotIn [z]"
            ]
        );
        assert!(parse("").unwrap().is_empty());
    }

    #[test]
    fn a_bad_term_is_named() {
        let e = parse("a=1,f in x").unwrap_err();
        assert!(e.contains("\"f in x\""), "{e}");
    }
}
