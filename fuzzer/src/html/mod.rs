//! What the HTML reports share: a small typed builder, the page skeleton (inline CSS, a few
//! lines of inline JS that sort tables) and the inline SVG charts. Pages are self-contained:
//! they load nothing.
//!
//! Text only becomes markup through [`Html`]: a `&str` or `String` given to any builder here
//! is escaped, tags are `&'static str`, and only this module (and its charts) may call
//! [`Html::trusted`]. No caller escapes by hand.

pub mod chart;

/// Markup that is safe to put in a page: escaped text, or elements built here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Html(String);

/// `text` safe as HTML element content or a quoted attribute value.
fn escape(text: &str) -> String {
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

impl Html {
    /// Plain text, escaped.
    pub fn text(text: &str) -> Html {
        Html(escape(text))
    }

    /// Markup this module writes itself; never text from a report.
    fn trusted(markup: String) -> Html {
        Html(markup)
    }

    /// `<tag>children</tag>`.
    pub fn element(tag: &'static str, children: impl Into<Html>) -> Html {
        Html(format!("<{tag}>{}</{tag}>", children.into().0))
    }

    /// `<tag class="class">children</tag>`.
    pub fn with_class(tag: &'static str, class: &'static str, children: impl Into<Html>) -> Html {
        Html(format!("<{tag} class=\"{class}\">{}</{tag}>", children.into().0))
    }

    /// A line break between inline items.
    pub fn br() -> Html {
        Html("<br>".into())
    }

    /// `items` with `separator` between them.
    pub fn join(items: impl IntoIterator<Item = Html>, separator: &Html) -> Html {
        let parts: Vec<String> = items.into_iter().map(|h| h.0).collect();
        Html(parts.join(&separator.0))
    }

    /// Appends markup or (escaped) text.
    pub fn push(&mut self, more: impl Into<Html>) {
        self.0.push_str(&more.into().0);
    }

    /// Ends a block with a line break in the page's source (readable, and what tests find).
    pub fn line(mut self) -> Html {
        self.0.push('\n');
        self
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl From<&str> for Html {
    fn from(text: &str) -> Html {
        Html::text(text)
    }
}

impl From<String> for Html {
    fn from(text: String) -> Html {
        Html::text(&text)
    }
}

impl From<&String> for Html {
    fn from(text: &String) -> Html {
        Html::text(text)
    }
}

impl FromIterator<Html> for Html {
    fn from_iter<I: IntoIterator<Item = Html>>(items: I) -> Html {
        Html(items.into_iter().map(|h| h.0).collect())
    }
}

/// `text` as inline code.
pub fn code(text: &str) -> Html {
    Html::element("code", text)
}

/// A heading of `level` 1 to 3.
pub fn heading(level: u8, content: impl Into<Html>) -> Html {
    let tag = match level {
        1 => "h1",
        2 => "h2",
        _ => "h3",
    };
    Html::element(tag, content).line()
}

/// A table. A `sortable` one sorts by a column when its header is clicked.
pub fn table(titles: &[&str], rows: &[Vec<Html>], sortable: bool) -> Html {
    let class = if sortable { " class=\"sortable\"" } else { "" };
    let head: String = titles.iter().map(|t| Html::element("th", *t).0).collect();
    let body: String = rows
        .iter()
        .map(|r| {
            format!(
                "<tr>{}</tr>\n",
                r.iter().map(|c| format!("<td>{}</td>", c.0)).collect::<String>()
            )
        })
        .collect();
    Html::trusted(format!(
        "<table{class}>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>\n"
    ))
}

impl Html {
    /// `parts` one after the other.
    pub fn concat(parts: impl IntoIterator<Item = Html>) -> Html {
        parts.into_iter().collect()
    }
}

/// Paragraphs, one per item of `lines` (plain text).
pub fn paragraphs(lines: impl IntoIterator<Item = String>) -> Html {
    lines.into_iter().map(|l| Html::element("p", l).line()).collect()
}

/// A list of term and description pairs, one pair a line.
pub fn definitions(items: Vec<(&str, Html)>) -> Html {
    let items: String = items
        .into_iter()
        .map(|(term, value)| format!("<dt>{}</dt><dd>{}</dd>\n", escape(term), value.0))
        .collect();
    Html::trusted(format!("<dl>\n{items}</dl>\n"))
}

/// A bulleted list.
pub fn list(items: impl IntoIterator<Item = Html>) -> Html {
    Html::element(
        "ul",
        items.into_iter().map(|i| Html::element("li", i)).collect::<Html>(),
    )
}

/// One entry of a bug list: a heading and its definitions, in a highlighted box.
pub fn entry(title: Html, items: Vec<(&str, Html)>) -> Html {
    Html::trusted(format!(
        "<section class=\"bug\">\n<h3>{}</h3>\n{}</section>\n",
        title.0,
        definitions(items).0
    ))
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

/// A whole page: `title` (plain text) and `body`.
pub fn page(title: &str, body: Html) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n{}<script>\n{SORT}</script>\n</body>\n</html>\n",
        escape(title),
        body.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_report_text_is_escaped() {
        assert_eq!(
            Html::text(r#"<b>"a" & 'b'</b>"#).as_str(),
            "&lt;b&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/b&gt;"
        );
        assert_eq!(code("x<y").as_str(), "<code>x&lt;y</code>");
        let t = table(&["a<b"], &[vec![code("1")]], true).into_string();
        assert!(t.starts_with("<table class=\"sortable\">"), "{t}");
        assert!(
            t.contains("<th>a&lt;b</th>") && t.contains("<td><code>1</code></td>"),
            "{t}"
        );
        let p = page("t & u", Html::element("p", "x"));
        assert!(p.contains("<title>t &amp; u</title>") && p.contains("<p>x</p>"), "{p}");
    }

    #[test]
    fn text_is_escaped_wherever_it_goes() {
        let e = entry(
            Html::text("1. <kind>"),
            vec![("a<b", Html::from("c&d")), ("list", list([Html::from("<li>")]))],
        )
        .into_string();
        assert!(!e.contains("<kind>") && !e.contains("<li><li>"), "{e}");
        assert!(e.contains("<dt>a&lt;b</dt><dd>c&amp;d</dd>"), "{e}");
        let joined = Html::join([Html::from("x|y"), code("<z>")], &Html::br());
        assert_eq!(joined.as_str(), "x|y<br><code>&lt;z&gt;</code>");
    }
}
