//! What the HTML reports share: escaping, tables, the page skeleton (inline CSS, a few lines
//! of inline JS that sort tables) and the inline SVG charts. Pages are self-contained: they
//! load nothing.

pub mod chart;

/// `text` safe as HTML element content or a quoted attribute value.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `text` as inline code.
pub fn code(text: &str) -> String {
    format!("<code>{}</code>", escape(text))
}

/// A table whose cells are HTML already (escape what comes from a report). A `sortable` one
/// sorts by a column when its header is clicked.
pub fn table(titles: &[&str], rows: &[Vec<String>], sortable: bool) -> String {
    let class = if sortable { " class=\"sortable\"" } else { "" };
    let head: String = titles.iter().map(|t| format!("<th>{}</th>", escape(t))).collect();
    let body: String = rows
        .iter()
        .map(|r| {
            format!(
                "<tr>{}</tr>\n",
                r.iter().map(|c| format!("<td>{c}</td>")).collect::<String>()
            )
        })
        .collect();
    format!("<table{class}>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>\n")
}

/// Paragraphs, one per item of `lines` (plain text).
pub fn paragraphs(lines: impl IntoIterator<Item = String>) -> String {
    lines.into_iter().map(|l| format!("<p>{}</p>\n", escape(&l))).collect()
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:80em;padding:0 1em;color:#222}
code,pre{font-family:ui-monospace,monospace;background:#f3f3f3;padding:0 .2em}
pre{padding:.5em;overflow-x:auto}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}
table.sortable th{cursor:pointer;background:#eef}
.bug{border-left:4px solid #c33;padding:.1em 1em;margin:1em 0}
.bug dt{font-weight:bold}
.muted{color:#666}
";

/// Sorts a `sortable` table by the clicked column (numbers as numbers), again to reverse.
const SORT: &str =
    "document.querySelectorAll('table.sortable th').forEach((th, i) => th.addEventListener('click', () => {
  const body = th.closest('table').tBodies[0], up = th.dataset.dir !== 'up', key = r => r.cells[i].textContent.trim();
  th.dataset.dir = up ? 'up' : 'down';
  const cmp = (a, b) => isNaN(a) || isNaN(b) ? a.localeCompare(b) : a - b;
  [...body.rows].sort((a, b) => (up ? 1 : -1) * cmp(key(a), key(b))).forEach(r => body.appendChild(r));
}));
";

/// A whole page: `title` (plain text) and `body` (HTML).
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n{body}<script>\n{SORT}</script>\n</body>\n</html>\n",
        escape(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_report_text_is_escaped() {
        assert_eq!(
            escape(r#"<b>"a" & 'b'</b>"#),
            "&lt;b&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/b&gt;"
        );
        assert_eq!(code("x<y"), "<code>x&lt;y</code>");
        let t = table(&["a<b"], &[vec![code("1")]], true);
        assert!(t.starts_with("<table class=\"sortable\">"), "{t}");
        assert!(
            t.contains("<th>a&lt;b</th>") && t.contains("<td><code>1</code></td>"),
            "{t}"
        );
        let p = page("t & u", "<p>x</p>\n");
        assert!(p.contains("<title>t &amp; u</title>") && p.contains("<p>x</p>"), "{p}");
    }
}
