//! Inline SVG charts: lines over time and horizontal bars. Plain shapes with axes and a
//! legend, no script; an empty chart says so in a text element.

use super::{escape, Html};
use std::fmt::Write as _;

/// One line: its points in drawing order, and the points drawn as a dot besides.
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    pub dots: Vec<(f64, f64)>,
}

/// What a chart's axes say.
pub struct Axes<'a> {
    pub title: &'a str,
    pub x: &'a str,
    pub y: &'a str,
}

const COLOURS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// Plot area of a line chart, in SVG units.
const LEFT: f64 = 60.0;
const TOP: f64 = 40.0;
const WIDTH: f64 = 560.0;
const HEIGHT: f64 = 260.0;

fn colour(n: usize) -> &'static str {
    COLOURS[n % COLOURS.len()]
}

/// `12`, `2.5`, `0.0135`: a tick label with three significant digits at most.
fn tick(v: f64) -> String {
    if v.fract() == 0.0 {
        return format!("{v}");
    }
    let decimals = (2.0 - v.abs().log10().floor()).clamp(0.0, 9.0) as usize;
    let text = format!("{v:.decimals$}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// An `<svg>` holding only `message` (a chart without data).
pub fn empty(axes: &Axes, message: &str) -> Html {
    Html::trusted(format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"800\" height=\"80\" role=\"img\"><title>{}</title><text x=\"10\" y=\"40\">{}</text></svg>\n",
        escape(axes.title),
        escape(message)
    ))
}

/// Axes from 0 to `max_x` and 0 to `max_y`, with their labels and end ticks.
fn frame(out: &mut String, axes: &Axes, max_x: f64, max_y: f64) {
    let (right, bottom) = (LEFT + WIDTH, TOP + HEIGHT);
    let _ = write!(
        out,
        "<text x=\"{LEFT}\" y=\"20\" font-weight=\"bold\">{}</text>\n<path d=\"M{LEFT} {TOP}V{bottom}H{right}\" fill=\"none\" stroke=\"#444\"/>\n",
        escape(axes.title)
    );
    for (v, y) in [(0.0, bottom), (max_y / 2.0, TOP + HEIGHT / 2.0), (max_y, TOP)] {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            LEFT - 6.0,
            y + 4.0,
            tick(v)
        );
    }
    for (v, x) in [(0.0, LEFT), (max_x / 2.0, LEFT + WIDTH / 2.0), (max_x, right)] {
        let _ = writeln!(
            out,
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            bottom + 16.0,
            tick(v)
        );
    }
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n<text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">{}</text>",
        LEFT + WIDTH / 2.0,
        bottom + 34.0,
        escape(axes.x),
        TOP + HEIGHT / 2.0,
        TOP + HEIGHT / 2.0,
        escape(axes.y)
    );
}

/// A line chart of `series` (one polyline each, in order), or `empty_message` when there is
/// no point to draw.
pub fn lines(axes: &Axes, series: &[Series], empty_message: &str) -> Html {
    if series.iter().all(|s| s.points.is_empty()) {
        return empty(axes, empty_message);
    }
    let all = series.iter().flat_map(|s| s.points.iter());
    let (max_x, max_y) = all.fold((0.0f64, 0.0f64), |(x, y), p| (x.max(p.0), y.max(p.1)));
    let (max_x, max_y) = (
        if max_x > 0.0 { max_x } else { 1.0 },
        if max_y > 0.0 { max_y } else { 1.0 },
    );
    let at = |(x, y): (f64, f64)| (LEFT + x / max_x * WIDTH, TOP + HEIGHT - y / max_y * HEIGHT);
    let legend_height = 20.0 * series.len() as f64;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"820\" height=\"{}\" role=\"img\" font-size=\"12\"><title>{}</title>\n",
        (TOP + HEIGHT + 50.0).max(TOP + legend_height + 10.0),
        escape(axes.title)
    );
    frame(&mut out, axes, max_x, max_y);
    for (n, s) in series.iter().enumerate() {
        let points: Vec<String> = s
            .points
            .iter()
            .map(|&p| at(p))
            .map(|(x, y)| format!("{x:.1},{y:.1}"))
            .collect();
        let _ = writeln!(
            out,
            "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>",
            colour(n),
            points.join(" ")
        );
        for &d in &s.dots {
            let (x, y) = at(d);
            let _ = writeln!(
                out,
                "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"4\" fill=\"{}\"/>",
                colour(n)
            );
        }
        let y = TOP + 20.0 * n as f64;
        let _ = writeln!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>",
            LEFT + WIDTH + 20.0,
            y - 10.0,
            colour(n),
            LEFT + WIDTH + 38.0,
            y,
            escape(&s.label)
        );
    }
    out.push_str("</svg>\n");
    Html::trusted(out)
}

/// Horizontal bars: one group per row (`label`, a value per name of `names`), longest bar
/// scaled to the width.
pub fn bars(title: &str, names: &[&str], rows: &[(String, Vec<usize>)]) -> Html {
    let axes = Axes { title, x: "", y: "" };
    if rows.is_empty() {
        return empty(&axes, "Nothing to chart.");
    }
    let (label_width, width, bar) = (200.0, 480.0, 10.0);
    let group = bar * names.len() as f64 + 8.0;
    let max = rows
        .iter()
        .flat_map(|(_, v)| v.iter())
        .copied()
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" font-size=\"12\"><title>{}</title>\n<text x=\"0\" y=\"16\" font-weight=\"bold\">{}</text>\n",
        label_width + width + 60.0,
        50.0 + group * rows.len() as f64,
        escape(title),
        escape(title)
    );
    for (n, name) in names.iter().enumerate() {
        let x = label_width + 120.0 * n as f64;
        let _ = writeln!(
            out,
            "<rect x=\"{x}\" y=\"24\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{}\" y=\"34\">{}</text>",
            colour(n),
            x + 16.0,
            escape(name)
        );
    }
    for (r, (label, values)) in rows.iter().enumerate() {
        let top = 46.0 + group * r as f64;
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            label_width - 6.0,
            top + group / 2.0,
            escape(label)
        );
        for (n, &v) in values.iter().enumerate() {
            let (y, w) = (top + bar * n as f64, v as f64 / max * width);
            let _ = writeln!(
                out,
                "<rect x=\"{label_width}\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{}\" font-size=\"10\">{v}</text>",
                bar - 1.0,
                colour(n),
                label_width + w + 4.0,
                y + bar - 1.0
            );
        }
    }
    out.push_str("</svg>\n");
    Html::trusted(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_without_points_says_so_in_an_svg() {
        let axes = Axes {
            title: "t",
            x: "x",
            y: "y",
        };
        let svg = lines(&axes, &[], "No records <yet>.").into_string();
        assert!(
            svg.starts_with("<svg") && svg.contains("<text x=\"10\" y=\"40\">No records &lt;yet&gt;.</text>"),
            "{svg}"
        );
    }

    #[test]
    fn ticks_keep_three_significant_digits() {
        let ticks: Vec<String> = [0.0, 8.0, 2.5, 0.0135, 0.007, 1234.6].map(tick).to_vec();
        assert_eq!(ticks, ["0", "8", "2.5", "0.0135", "0.007", "1235"]);
    }

    #[test]
    fn bars_are_scaled_to_the_largest_value() {
        let svg = bars(
            "b",
            &["findings", "bugs"],
            &[("f<1>".into(), vec![4, 2]), ("g".into(), vec![0, 0])],
        )
        .into_string();
        assert!(
            svg.contains("width=\"480.0\"") && svg.contains("width=\"240.0\""),
            "{svg}"
        );
        assert!(svg.contains("f&lt;1&gt;"), "{svg}");
        assert_eq!(svg.matches("<rect").count(), 2 + 4, "{svg}");
    }
}
