//! Trees in clusterctl `describe`'s style: commands build a [`Tree`] of styled text, this module
//! draws it with box-drawing branches, coloring each span by its polarity when colors are on.

use super::{Style, paint};

/// A piece of a line with an optional style.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The text.
    pub text: String,
    /// Its style, if any.
    pub style: Option<Style>,
}

/// A node of a tree: one line of spans and its children.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tree {
    /// The line.
    pub line: Vec<Span>,
    /// Children, drawn below with branches.
    pub children: Vec<Tree>,
}

impl Tree {
    /// A plain line.
    pub fn new(text: impl Into<String>) -> Tree {
        Tree {
            line: vec![Span {
                text: text.into(),
                style: None,
            }],
            children: Vec::new(),
        }
    }

    /// A line in one style.
    pub fn styled(text: impl Into<String>, style: Style) -> Tree {
        Tree {
            line: vec![Span {
                text: text.into(),
                style: Some(style),
            }],
            children: Vec::new(),
        }
    }

    /// Appends a span to the line.
    pub fn span(mut self, text: impl Into<String>, style: Option<Style>) -> Tree {
        self.line.push(Span {
            text: text.into(),
            style,
        });
        self
    }

    /// Adds a child.
    pub fn child(mut self, child: Tree) -> Tree {
        self.children.push(child);
        self
    }

    /// Adds a child in place.
    pub fn push(&mut self, child: Tree) {
        self.children.push(child);
    }
}

/// Draws a tree; ANSI colors only when `color` is set.
pub fn render(tree: &Tree, color: bool) -> String {
    let mut out = String::new();
    out.push_str(&line(tree, color));
    out.push('\n');
    draw_children(tree, "", color, &mut out);
    out
}

fn line(tree: &Tree, color: bool) -> String {
    tree.line
        .iter()
        .map(|s| match s.style {
            Some(style) => paint(color, &s.text, style),
            None => s.text.clone(),
        })
        .collect()
}

fn draw_children(tree: &Tree, prefix: &str, color: bool, out: &mut String) {
    let last = tree.children.len().saturating_sub(1);
    for (i, child) in tree.children.iter().enumerate() {
        let (branch, cont) = if i == last {
            ("└─ ", "   ")
        } else {
            ("├─ ", "│  ")
        };
        out.push_str(prefix);
        out.push_str(&paint(color, branch, Style::Dim));
        out.push_str(&line(child, color));
        out.push('\n');
        draw_children(child, &format!("{prefix}{cont}"), color, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_branches_and_colors_only_when_asked() {
        let t = Tree::new("Pod default/big-0")
            .child(
                Tree::new("c3-4 ")
                    .span("does not fit", Some(Style::Bad))
                    .child(Tree::new("needs 3000m cpu")),
            )
            .child(Tree::new("c3-8 ").span("fits", Some(Style::Good)));
        assert_eq!(
            render(&t, false),
            "Pod default/big-0\n├─ c3-4 does not fit\n│  └─ needs 3000m cpu\n└─ c3-8 fits\n"
        );
        let colored = render(&t, true);
        assert!(
            colored.contains("\u{1b}[31mdoes not fit\u{1b}[39m"),
            "{colored:?}"
        );
    }
}
