//! The grouped command listing of `--help` (Setup, Troubleshooting, Operate, Other), as clusterctl
//! prints it, rendered by clap itself from each subcommand's about text so it cannot drift from the
//! definitions.

use clap::Command;
use clap::builder::StyledStr;

/// Returns `cmd` with a help template that lists its subcommands under the given group headings
/// instead of one "Commands:" list.
///
/// # Guarantees
/// Every visible subcommand is listed exactly once: one that no group names is listed in the last
/// group rather than dropped (and `tests/it/help.rs` fails on it, so it gets a group).
pub fn grouped(cmd: Command, groups: &[(&str, &[&str])]) -> Command {
    // Building adds the `help` subcommand, which the listing should show like any other.
    let mut built = cmd.clone();
    built.build();
    let visible: Vec<&Command> = built
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .collect();
    let header = built.get_styles().get_header();

    let mut listing = String::new();
    for (index, (heading, names)) in groups.iter().enumerate() {
        let last = index + 1 == groups.len();
        let members: Vec<Command> = visible
            .iter()
            .filter(|s| {
                names.contains(&s.get_name())
                    || (last && !groups.iter().any(|(_, n)| n.contains(&s.get_name())))
            })
            .map(|s| (*s).clone())
            .collect();
        if members.is_empty() {
            continue;
        }
        listing.push_str(&format!("{header}{heading} Commands:{header:#}\n"));
        listing.push_str(
            subcommand_lines(&built, members)
                .ansi()
                .to_string()
                .trim_end(),
        );
        listing.push_str("\n\n");
    }

    let template = format!(
        "{{before-help}}{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{listing}\
         {header}Options:{header:#}\n{{options}}{{after-help}}"
    );
    cmd.help_template(template)
}

/// clap's own rendering of a subcommand list (alignment, wrapping, styles), for some of them.
fn subcommand_lines(parent: &Command, members: Vec<Command>) -> StyledStr {
    // The holder's own name never shows: the template prints only its subcommands.
    let mut holder = Command::new("group")
        .styles(parent.get_styles().clone())
        .disable_help_subcommand(true)
        .disable_help_flag(true)
        .disable_version_flag(true)
        .help_template("{subcommands}");
    for (order, member) in members.into_iter().enumerate() {
        holder = holder.subcommand(member.display_order(order));
    }
    holder.render_help()
}
