//! GitHub-flavoured Markdown as the reports write it: table cells through [`Md`], which
//! escapes what would end a cell (`|`) or a row (a line break) in one place; no renderer
//! escapes by hand.

/// Markdown safe inside a table cell.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Md(String);

/// `text` that cannot end a table cell or row.
fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

impl Md {
    /// Plain text.
    pub fn text(text: &str) -> Md {
        Md(escape(text))
    }

    /// Inline code (empty for empty text).
    pub fn code(text: &str) -> Md {
        if text.is_empty() {
            return Md::default();
        }
        let fence = if text.contains('`') { "``" } else { "`" };
        Md(format!("{fence}{}{fence}", escape(text)))
    }

    /// A line break within a cell.
    pub fn br() -> Md {
        Md("<br>".into())
    }

    /// Items on lines of their own within one cell.
    pub fn lines(items: impl IntoIterator<Item = Md>) -> Md {
        Md::join(items, "<br>")
    }

    /// `items` with `separator` (markup of ours, such as `, ` or ` ← `) between them.
    pub fn join(items: impl IntoIterator<Item = Md>, separator: &'static str) -> Md {
        let parts: Vec<String> = items.into_iter().map(|m| m.0).collect();
        Md(parts.join(separator))
    }

    /// Appends markup or (escaped) text.
    pub fn push(&mut self, more: impl Into<Md>) {
        self.0.push_str(&more.into().0);
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Md {
    fn from(text: &str) -> Md {
        Md::text(text)
    }
}

impl From<String> for Md {
    fn from(text: String) -> Md {
        Md::text(&text)
    }
}

impl std::fmt::Display for Md {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A table: the title row, the separator, a row per item of `rows`; a line each.
pub fn table(titles: &[&str], rows: &[Vec<Md>]) -> String {
    let row = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
    let mut out = row(titles.iter().map(|t| escape(t)).collect());
    out.push_str(&format!("|{}\n", "---|".repeat(titles.len())));
    for r in rows {
        out.push_str(&row(r.iter().map(|c| c.0.clone()).collect()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_cannot_end_its_cell_or_row() {
        let t = table(&["a", "b"], &[vec![Md::text("x|y\nz"), Md::code("p|q")]]);
        assert_eq!(t, "| a | b |\n|---|---|\n| x\\|y z | `p\\|q` |\n");
        assert_eq!(Md::code("a`b").as_str(), "``a`b``");
        assert_eq!(Md::lines([Md::text("1"), Md::code("2")]).as_str(), "1<br>`2`");
    }
}
