//! The campaign screen, drawn from a `Snapshot`: what afl-fuzz's status screen shows about
//! speed and progress, and what only numfuzz knows about IEEE-754 exceptions and escapes.
//! Everything fits 80 columns; wider and taller terminals get one line per core.

use super::snapshot::{kinds, Snapshot};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use std::time::Duration;

/// `1h02m`, `3m05s`, `42s`.
pub fn span(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// `12.3k`, `1.25M`.
pub fn human(n: f64) -> String {
    if n >= 1e6 {
        format!("{:.2}M", n / 1e6)
    } else if n >= 1e3 {
        format!("{:.1}k", n / 1e3)
    } else {
        format!("{n:.0}")
    }
}

fn ago(d: Option<Duration>) -> String {
    d.map_or("none yet".into(), |d| format!("{} ago", span(d)))
}

fn row(label: &str, value: String) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{label:>14} "), Style::default().add_modifier(Modifier::DIM)),
        Span::raw(value),
    ])
}

fn boxed(title: &str) -> Block<'static> {
    Block::default().borders(Borders::ALL).title(format!(" {title} "))
}

fn progress(s: &Snapshot) -> Vec<Line<'static>> {
    let budget = s
        .budget
        .map_or(String::new(), |b| format!(" of {}", span(Duration::from_secs(b))));
    let edges = s.edges.map_or("-".into(), |(hit, total)| format!("{hit}/{total}"));
    let share = s.precise_percent().unwrap_or(0.0);
    let (precise, spared) = s
        .precise
        .map_or(("-".into(), "-".into()), |(runs, skipped, throttled)| {
            (
                format!("{} ({share:.0}% of runs)", human(runs as f64)),
                format!("{}  throttled {}", human(skipped as f64), human(throttled as f64)),
            )
        });
    vec![
        row("run time", format!("{}{budget}", span(s.elapsed))),
        row(
            "executions",
            format!("{} ({}/s)", human(s.execs as f64), human(s.execs_per_sec)),
        ),
        row("corpus", s.corpus.to_string()),
        row("edges", edges),
        row(
            "crashes+hangs",
            format!("{}  restarts {}", s.objectives, s.client_restarts),
        ),
        // Fast runs that raised a flag and ran no precise re-run: skipped because their path
        // and special sites ran precisely before, or throttled per site (`precise.rs`).
        row("precise runs", precise),
        row("not re-run", spared),
    ]
}

fn exceptions(s: &Snapshot) -> Vec<Line<'static>> {
    let mut lines: Vec<Line> = kinds(s)
        .map(|(kind, n, last)| {
            let when = if n > 0 {
                format!("  new {}", ago(last))
            } else {
                String::new()
            };
            row(&kind.to_string(), format!("{n}{when}"))
        })
        .collect();
    lines.push(row(
        "total",
        format!("{}  new {}", s.exceptions(), ago(s.last_exception())),
    ));
    lines
}

fn escapes(s: &Snapshot) -> Vec<Line<'static>> {
    let newest = match &s.newest_escape {
        Some((site, when)) => vec![
            row("newest", format!("{} ago", span(*when))),
            Line::from(Span::styled(
                format!(" {site}"),
                Style::default().add_modifier(Modifier::BOLD),
            )),
        ],
        None => vec![row("newest", "none yet".into())],
    };
    let mut lines = vec![row("escaping", s.escapes.to_string())];
    lines.extend(newest);
    if let Some((reached, execs)) = s.search {
        lines.push(row(
            "local search",
            format!("{reached} reached in {} runs", human(execs as f64)),
        ));
    }
    if let Some((traced, tried, kept)) = s.i2s {
        lines.push(row(
            "input-to-state",
            format!("{kept} kept of {} tried ({traced} traced)", human(tried as f64)),
        ));
    }
    lines
}

fn core_lines(s: &Snapshot) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(Span::styled(
        format!(
            "{:>8} {:>10} {:>10} {:>8} {:>10}",
            "client", "execs", "exec/s", "corpus", "exceptions"
        ),
        Style::default().add_modifier(Modifier::DIM),
    ))];
    lines.extend(s.cores.iter().map(|c| {
        Line::from(format!(
            "{:>8} {:>10} {:>10} {:>8} {:>10}",
            c.client,
            human(c.execs as f64),
            human(c.execs_per_sec),
            c.corpus,
            c.exceptions
        ))
    }));
    lines
}

/// Draws the whole screen into `area` (the frame's, in practice).
pub fn draw(frame: &mut Frame, area: Rect, title: &str, s: &Snapshot) {
    let cores = if area.height >= 24 + s.cores.len() as u16 + 3 && s.cores.len() > 1 {
        s.cores.len() as u16 + 3
    } else {
        0
    };
    let [head, top, bottom, per_core, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(9),
        Constraint::Length(7),
        Constraint::Length(cores),
        Constraint::Min(1),
    ])
    .areas(area);
    let heading = Line::from(vec![
        Span::styled("numfuzz ", Style::default().add_modifier(Modifier::BOLD)),
        Span::raw(title.to_string()),
    ]);
    frame.render_widget(Paragraph::new(heading), head);
    let [left, right] = Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(top);
    frame.render_widget(Paragraph::new(progress(s)).block(boxed("progress")), left);
    frame.render_widget(Paragraph::new(exceptions(s)).block(boxed("IEEE-754 exceptions")), right);
    frame.render_widget(Paragraph::new(escapes(s)).block(boxed("escapes to results")), bottom);
    if cores > 0 {
        frame.render_widget(Paragraph::new(core_lines(s)).block(boxed("per client")), per_core);
    }
    frame.render_widget(Paragraph::new(" q or Ctrl-C: stop (findings are kept)"), foot);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::snapshot::CoreLine;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    fn snapshot() -> Snapshot {
        Snapshot {
            elapsed: Duration::from_secs(65),
            budget: Some(600),
            execs: 1_234_567,
            execs_per_sec: 20_345.0,
            corpus: 245,
            edges: Some((812, 2011)),
            objectives: 0,
            by_kind: [1, 0, 8, 7],
            kind_last_new: [Some(Duration::from_secs(40)), None, Some(Duration::from_secs(3)), None],
            escapes: 2,
            newest_escape: Some(("Overflow exp.c:406:22 fmul".into(), Duration::from_secs(3))),
            search: Some((3, 12_000)),
            i2s: Some((40, 10_240, 17)),
            client_restarts: 1,
            precise: Some((61_000, 4_200, 530_000)),
            cores: vec![
                CoreLine {
                    client: 1,
                    execs: 600_000,
                    execs_per_sec: 10_000.0,
                    corpus: 120,
                    exceptions: 9,
                },
                CoreLine {
                    client: 2,
                    execs: 634_567,
                    execs_per_sec: 10_345.0,
                    corpus: 125,
                    exceptions: 7,
                },
            ],
        }
    }

    fn screen(width: u16, height: u16) -> Vec<String> {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal
            .draw(|f| draw(f, f.area(), "gsl_sf_exprel_2_e", &snapshot()))
            .unwrap();
        let buffer = terminal.backend().buffer().clone();
        (0..height)
            .map(|y| (0..width).map(|x| buffer[(x, y)].symbol().to_string()).collect())
            .collect()
    }

    #[test]
    fn eighty_columns_show_every_kind_the_escape_and_how_to_stop() {
        let lines = screen(80, 24);
        let text = lines.join("\n");
        for want in [
            "Overflow 8  new 3s ago",
            "Underflow 7",
            "Invalid 1  new 40s ago",
            "total 16  new 3s ago",
            "escaping 2",
            "Overflow exp.c:406:22 fmul",
            "1m05s of 10m00s",
            "1.23M (20.3k/s)",
            "812/2011",
            "restarts 1",
            "61.0k (5% of runs)",
            "4.2k  throttled 530.0k",
            "3 reached in 12.0k runs",
            "17 kept of 10.2k tried (40 traced)",
            "q or Ctrl-C: stop",
        ] {
            assert!(text.contains(want), "no `{want}` on\n{text}");
        }
        // Each line once: nothing drawn twice.
        let escaping = lines.iter().filter(|l| l.contains("escaping")).count();
        assert_eq!(escaping, 1, "{text}");
    }

    #[test]
    fn a_tall_terminal_gets_a_line_per_client() {
        let text = screen(100, 40).join("\n");
        assert!(text.contains("per client"), "{text}");
        assert!(text.contains("10.3k"), "{text}");
        let short = screen(80, 24).join("\n");
        assert!(!short.contains("per client"), "{short}");
    }

    #[test]
    fn durations_and_counts_read_as_people_write_them() {
        assert_eq!(span(Duration::from_secs(42)), "42s");
        assert_eq!(span(Duration::from_secs(185)), "3m05s");
        assert_eq!(span(Duration::from_secs(3720)), "1h02m");
        assert_eq!(human(12_345.0), "12.3k");
        assert_eq!(human(1_250_000.0), "1.25M");
        assert_eq!(human(7.0), "7");
    }
}
