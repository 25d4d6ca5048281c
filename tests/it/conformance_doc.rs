//! `docs/conformance.md` keeps its word: the counts at its top are the counts of its rows, every
//! row has one of the four statuses, and every test a `covered` row names exists in the tree.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

fn doc() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/conformance.md"))
        .unwrap()
}

/// Row id, status word, status cell.
fn rows(text: &str) -> Vec<(String, String, String)> {
    text.lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim().trim_matches('|').split(" | ").collect();
            let id = cells.first()?.trim();
            let is_id = id.split('-').count() == 3
                && id.chars().next().is_some_and(|c| c.is_ascii_uppercase())
                && id
                    .rsplit('-')
                    .next()
                    .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()));
            if !is_id || cells.len() < 4 {
                return None;
            }
            let status = cells[cells.len() - 1].trim().to_string();
            let word = if status.starts_with("n/a") {
                "n/a".to_string()
            } else {
                // `covered (rule): ...` is covered.
                status
                    .split(':')
                    .next()
                    .and_then(|w| w.split_whitespace().next())
                    .unwrap_or("")
                    .to_string()
            };
            Some((id.to_string(), word, status))
        })
        .collect()
}

/// Every `fn` name in the sources and tests.
fn test_names() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates"),
    ];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                for part in text.split("fn ").skip(1) {
                    let name: String = part
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    out.insert(name);
                }
            }
        }
    }
    out
}

#[test]
fn every_row_has_a_status_and_every_covered_test_exists() {
    let text = doc();
    let rows = rows(&text);
    assert!(rows.len() > 1000, "{} rows", rows.len());
    let names = test_names();
    let mut missing = Vec::new();
    let mut seen = BTreeSet::new();
    for (id, word, status) in &rows {
        assert!(seen.insert(id.clone()), "{id} appears twice");
        assert!(
            ["covered", "gap", "n/a", "differs"].contains(&word.as_str()),
            "{id}: status {status:?}"
        );
        if word == "covered" {
            // `path::module::name` mentions; each name (the last segment) must be a fn.
            for token in status
                .split(|c: char| c.is_whitespace() || ",;()`".contains(c))
                .filter(|t| t.contains("::"))
            {
                let name: String = token
                    .rsplit("::")
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && !names.contains(&name) {
                    missing.push(format!("{id}: {name}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "tests named but not found: {missing:#?}"
    );
}

#[test]
fn the_counts_at_the_top_are_the_rows_counts() {
    let text = doc();
    let mut counted: BTreeMap<&str, [usize; 5]> = BTreeMap::new();
    for (id, word, _) in rows(&text) {
        let group = match &id[..2] {
            "D-" => "disruption",
            "B-" => "budgets",
            "T-" | "L-" | "E-" | "G-" | "N-" => "termination",
            "C-" => "capi",
            "K-" => "provider",
            "M-" => "nodepool",
            "U-" => "utils",
            "O-" => "other",
            _ => "scheduling",
        };
        let c = counted.entry(group).or_default();
        c[0] += 1;
        let k = ["covered", "gap", "n/a", "differs"]
            .iter()
            .position(|w| *w == word)
            .unwrap();
        c[k + 1] += 1;
    }
    let table: Vec<[usize; 5]> = text
        .lines()
        .skip_while(|l| !l.starts_with("| suite group |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| {
            let n: Vec<usize> = l
                .split('|')
                .filter_map(|c| c.trim().trim_matches('*').parse().ok())
                .collect();
            [n[0], n[1], n[2], n[3], n[4]]
        })
        .collect();
    let order = [
        "disruption",
        "budgets",
        "termination",
        "capi",
        "scheduling",
        "provider",
        "nodepool",
        "utils",
        "other",
    ];
    for (i, g) in order.iter().enumerate() {
        assert_eq!(table[i], counted[g], "{g}");
    }
    let total = counted.values().fold([0; 5], |mut t, c| {
        for k in 0..5 {
            t[k] += c[k];
        }
        t
    });
    assert_eq!(table[order.len()], total, "total");
}
