//! Plain-text tables in kubectl's style: upper-case headers, columns padded with spaces.

/// A table of text cells.
#[derive(Debug, Default, Clone)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    /// `--no-headers`: the rows only (widths from the rows too).
    headless: bool,
}

impl Table {
    /// A table with these column headers.
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            headless: false,
        }
    }

    /// The same table printed without its header line, as kubectl's `--no-headers`, if `yes`.
    pub fn without_header(mut self, yes: bool) -> Table {
        self.headless = yes;
        self
    }

    /// Adds a row (missing cells print empty).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Renders with three spaces between columns, no trailing spaces. Cells may contain ANSI
    /// color codes; widths count visible characters only. A cell with line breaks (a wrapped
    /// long value) takes several lines, the other cells of its row on the first.
    pub fn render(&self) -> String {
        let cols = self
            .header
            .len()
            .max(self.rows.iter().map(Vec::len).max().unwrap_or(0));
        let mut widths = vec![0; cols];
        let header = (!self.headless).then_some(&self.header);
        for row in header.into_iter().chain(self.rows.iter()) {
            for (i, cell) in row.iter().enumerate() {
                for line in cell.lines() {
                    widths[i] = widths[i].max(visible_width(line));
                }
            }
        }
        let mut out = String::new();
        for row in header.into_iter().chain(self.rows.iter()) {
            let cells: Vec<Vec<&str>> = (0..cols)
                .map(|i| row.get(i).map(|c| c.lines().collect()).unwrap_or_default())
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(0).max(1);
            for l in 0..height {
                let mut line = String::new();
                for (i, width) in widths.iter().enumerate() {
                    let cell = cells[i].get(l).copied().unwrap_or("");
                    line.push_str(cell);
                    if i + 1 < cols {
                        line.push_str(&" ".repeat(width - visible_width(cell) + 3));
                    }
                }
                out.push_str(line.trim_end());
                out.push('\n');
            }
        }
        out
    }
}

/// Width in terminal columns (wide CJK characters count two, combining marks none), ignoring
/// ANSI escape sequences.
pub fn visible_width(text: &str) -> usize {
    let mut width = 0;
    let mut in_escape = false;
    for c in text.chars() {
        match (in_escape, c) {
            (false, '\u{1b}') => in_escape = true,
            (true, 'm') => in_escape = false,
            (true, _) => {}
            (false, c) => width += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0),
        }
    }
    width
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_columns_and_ignores_colors() {
        let mut t = Table::new(&["NAME", "CPU"]);
        t.row(vec!["\u{1b}[32mc3-8\u{1b}[0m".to_string(), "4".to_string()]);
        t.row(vec!["c3-16".to_string(), "8".to_string()]);
        let out = t.render();
        assert_eq!(out.lines().next(), Some("NAME    CPU"));
        assert_eq!(out.lines().nth(2), Some("c3-16   8"));
        assert!(out.lines().nth(1).unwrap().ends_with("   4"));
    }

    #[test]
    fn a_wrapped_cell_takes_several_lines() {
        let mut t = Table::new(&["A", "NODES", "Z"]);
        t.row(vec![
            "x".to_string(),
            "3x a +\n1x bb".to_string(),
            "9".to_string(),
        ]);
        assert_eq!(t.render(), "A   NODES    Z\nx   3x a +   9\n    1x bb\n");
    }

    #[test]
    fn wide_characters_take_two_columns() {
        assert_eq!(visible_width("ノード"), 6);
        assert_eq!(visible_width("e\u{301}"), 1);
        let mut t = Table::new(&["NAME", "CPU"]);
        t.row(vec!["ノード".to_string(), "4".to_string()]);
        t.row(vec!["c3-8".to_string(), "8".to_string()]);
        assert_eq!(t.render(), "NAME     CPU\nノード   4\nc3-8     8\n");
    }
}
