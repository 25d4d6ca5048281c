//! `doctor`'s report as text: one tree per area, problems first, then a summary line.

use crate::diagnose::{Area, Finding, Report, Severity};
use crate::render::tree::{self, Tree};
use crate::render::{Style, paint};

/// The findings as one tree per area, problems first, then a summary line. Without `wide`, OK
/// findings are folded into a count per area (areas with only OK findings into one line), so
/// the problems of a large cluster are not lost among hundreds of healthy objects.
pub fn render_report(report: &Report, color: bool, wide: bool) -> String {
    if report.findings.is_empty() {
        return "Nothing to check: the input has no NodePools, MachineDeployments, NodeClaims, autoscaler RBAC or controller pods.\n"
            .to_string();
    }
    let rank = |s: Severity| match s {
        Severity::Error => 0,
        Severity::Warning => 1,
        Severity::Ok => 2,
    };
    let mut out = String::new();
    let mut all_ok = Vec::new();
    for area in Area::ALL {
        let mut findings: Vec<_> = report.findings.iter().filter(|f| f.area == area).collect();
        if findings.is_empty() {
            continue;
        }
        // Stable: within a severity, the order the checks produced.
        findings.sort_by_key(|f| rank(f.severity));
        let ok = findings
            .iter()
            .filter(|f| f.severity == Severity::Ok)
            .count();
        if !wide && ok == findings.len() {
            all_ok.push(format!("{} ({ok})", area.title()));
            continue;
        }
        let mut t = Tree::styled(area.title(), Style::Bold);
        // Folded without `wide` only: `-o wide` lists each check.
        let groups = if wide {
            findings
                .iter()
                .map(|f| (*f, vec![f.subject.as_str()]))
                .collect()
        } else {
            grouped(&findings)
        };
        for (f, subjects) in groups {
            if !wide && f.severity == Severity::Ok {
                continue;
            }
            let subject = match subjects.as_slice() {
                [one] => one.to_string(),
                [first, second] if first == second => format!("{first} (2 times)"),
                [first, rest @ ..] => format!("{first} and {} more", rest.len()),
                [] => String::new(),
            };
            let mut node = Tree::new("")
                .span(
                    format!("{:<7}", f.severity.as_str()),
                    Some(severity_style(f.severity)),
                )
                .span(format!(" {subject}  "), None)
                .span(f.cause.to_string(), Some(Style::Dim));
            if !f.message.is_empty() {
                node.push(Tree::new(f.message.clone()));
            }
            if !f.remedy.is_empty() {
                node.push(Tree::new("fix: ").span(f.remedy.clone(), Some(Style::Bold)));
            }
            t.push(node);
        }
        if !wide && ok > 0 {
            t.push(Tree::new("").span(format!("{ok} ok"), Some(Style::Good)));
        }
        out.push_str(&tree::render(&t, color));
        out.push('\n');
    }
    if !all_ok.is_empty() {
        out.push_str(&format!(
            "{} {} (-o wide lists each check)\n\n",
            paint(color, "All ok:", Style::Good),
            all_ok.join(", ")
        ));
    }
    let (errors, warnings, ok) = report.counts();
    out.push_str(&format!(
        "{}, {}, {}\n",
        paint(
            color && errors > 0,
            &format!("{errors} error(s)"),
            Style::Bad
        ),
        paint(
            color && warnings > 0,
            &format!("{warnings} warning(s)"),
            Style::Warn
        ),
        paint(color, &format!("{ok} ok"), Style::Good)
    ));
    out
}

/// Findings that say the same thing (severity, cause, message and fix) once, with every subject
/// they were found on, in first-seen order: repeated inputs or many objects stuck alike read as
/// one finding with a count.
fn grouped<'a>(findings: &[&'a Finding]) -> Vec<(&'a Finding, Vec<&'a str>)> {
    let mut out: Vec<(&Finding, Vec<&str>)> = Vec::new();
    for f in findings {
        match out.iter_mut().find(|(g, _)| {
            g.severity == f.severity
                && g.cause == f.cause
                && g.message == f.message
                && g.remedy == f.remedy
        }) {
            Some((_, subjects)) => subjects.push(&f.subject),
            None => out.push((f, vec![&f.subject])),
        }
    }
    out
}

/// Polarity colors: green ok, yellow warning, red error.
pub fn severity_style(s: Severity) -> Style {
    match s {
        Severity::Ok => Style::Good,
        Severity::Warning => Style::Warn,
        Severity::Error => Style::Bad,
    }
}
