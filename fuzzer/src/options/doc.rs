//! The book's options reference (`docs/src/reference/options.md`), rendered from the clap
//! definitions of this module, so that the page says what `numfuzz SUBCOMMAND --help` says.
//! The test below fails when the page differs from what is rendered now;
//! `NUMFUZZ_BLESS=1 cargo test --release -p numfuzz --bin numfuzz options_reference` rewrites it.

use clap::{Arg, ArgAction, Command};
use std::fmt::Write as _;

/// Where the page lives, from the crate's directory.
pub const PAGE: &str = "../docs/src/reference/options.md";

/// The whole page: a list of the subcommands, then one section per subcommand.
pub fn markdown(mut cli: Command) -> String {
    cli.build();
    let name = cli.get_name().to_string();
    let mut page = String::new();
    page.push_str(
        "<!-- Generated from the clap definitions by fuzzer/src/options/doc.rs: do not edit.\n     \
         NUMFUZZ_BLESS=1 cargo test --release -p numfuzz --bin numfuzz options_reference rewrites it. -->\n\n",
    );
    page.push_str("# Command-line options\n\n");
    if let Some(about) = cli.get_about() {
        let _ = writeln!(page, "`{name}`: {}\n", inline(&about.to_string()));
    }
    page.push_str(
        "Every subcommand's options as `--help` prints them, with their defaults and values. \
         The guides say what the options are for.\n\n",
    );
    let subcommands = documented(&cli, &name);
    page.push_str("| subcommand | what it does |\n|---|---|\n");
    for (parent, sub) in &subcommands {
        let title = format!("{parent} {}", sub.get_name());
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        let _ = writeln!(
            page,
            "| [`{title}`](#{}) | {} |",
            slug(&title),
            inline(&about).replace('|', "\\|")
        );
    }
    for (parent, sub) in subcommands {
        page.push('\n');
        subcommand(&mut page, &parent, sub);
    }
    page
}

/// The subcommands the page documents, each after its parent (`run-all`, then `run-all merge`),
/// with the command line that leads to it. clap's own `help` subcommands say nothing numfuzz's
/// `--help` does not.
fn documented<'a>(cli: &'a Command, name: &str) -> Vec<(String, &'a Command)> {
    let shown = |s: &&Command| !s.is_hide_set() && s.get_name() != "help";
    let mut found = Vec::new();
    for sub in cli.get_subcommands().filter(shown) {
        found.push((name.to_string(), sub));
        let parent = format!("{name} {}", sub.get_name());
        found.extend(
            sub.get_subcommands()
                .filter(shown)
                .map(|nested| (parent.clone(), nested)),
        );
    }
    found
}

/// One subcommand's section: what it does, its usage line, arguments, options, examples.
fn subcommand(page: &mut String, bin: &str, sub: &Command) {
    let _ = writeln!(page, "## {bin} {}\n", sub.get_name());
    if let Some(about) = sub.get_long_about().or(sub.get_about()) {
        paragraphs(page, &about.to_string(), "");
    }
    let usage = sub.clone().render_usage().to_string();
    let usage = usage.trim().strip_prefix("Usage: ").unwrap_or(usage.trim());
    let _ = writeln!(page, "```text\n{usage}\n```\n");
    let visible = |a: &&Arg| !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version");
    let positionals: Vec<&Arg> = sub.get_positionals().filter(visible).collect();
    if !positionals.is_empty() {
        page.push_str("Arguments:\n\n");
        for arg in positionals {
            item(page, arg);
        }
    }
    let options: Vec<&Arg> = sub
        .get_arguments()
        .filter(|a| !a.is_positional())
        .filter(visible)
        .collect();
    if !options.is_empty() {
        page.push_str("Options:\n\n");
        for arg in options {
            item(page, arg);
        }
    }
    if let Some(after) = sub.get_after_long_help().or(sub.get_after_help()) {
        let _ = writeln!(page, "```text\n{}\n```\n", after.to_string().trim_end());
    }
}

/// One argument: its spelling, then its help, default, values and whether it repeats.
fn item(page: &mut String, arg: &Arg) {
    let mut facts = Vec::new();
    if arg.is_required_set() {
        facts.push("required".to_string());
    }
    if matches!(arg.get_action(), ArgAction::Append) && !arg.is_positional() {
        facts.push("may be repeated".to_string());
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| format!("`{}`", v.to_string_lossy()))
        .collect();
    let flag = matches!(
        arg.get_action(),
        ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count
    );
    if !defaults.is_empty() && !flag {
        facts.push(format!("default {}", defaults.join(", ")));
    }
    let mut head = format!("- `{}`", spelling(arg));
    if !facts.is_empty() {
        let _ = write!(head, " ({})", facts.join("; "));
    }
    page.push_str(&head);
    page.push_str("\n\n");
    if let Some(help) = arg.get_long_help().or(arg.get_help()) {
        paragraphs(page, &help.to_string(), "  ");
    }
    let values: Vec<_> = arg
        .get_possible_values()
        .into_iter()
        .filter(|v| !v.is_hide_set())
        .collect();
    if arg.get_value_parser().possible_values().is_some() && !values.is_empty() {
        page.push_str("  Values:\n\n");
        for v in values {
            match v.get_help() {
                Some(h) => {
                    let _ = writeln!(page, "  - `{}`: {}", v.get_name(), inline(&h.to_string()));
                }
                None => {
                    let _ = writeln!(page, "  - `{}`", v.get_name());
                }
            }
        }
        page.push('\n');
    }
}

/// How the argument is written on the command line, as clap's help writes it.
fn spelling(arg: &Arg) -> String {
    let value = arg
        .get_value_names()
        .map(|names| names.iter().map(|n| format!("<{n}>")).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| format!("<{}>", arg.get_id().as_str().to_uppercase()));
    if arg.is_positional() {
        let many = arg.get_num_args().is_some_and(|n| n.max_values() > 1);
        let dots = if many { "..." } else { "" };
        return if arg.is_last_set() {
            format!("-- {value}{dots}")
        } else {
            format!("{value}{dots}")
        };
    }
    let mut names = Vec::new();
    if let Some(s) = arg.get_short() {
        names.push(format!("-{s}"));
    }
    if let Some(l) = arg.get_long() {
        names.push(format!("--{l}"));
    }
    let mut spelled = names.join(", ");
    if arg.get_action().takes_values() {
        let optional = arg.get_num_args().is_some_and(|n| n.min_values() == 0);
        if optional {
            let _ = write!(spelled, "[={value}]");
        } else {
            let _ = write!(spelled, " {value}");
        }
    }
    spelled
}

/// Help text as Markdown paragraphs, each line prefixed (a list item's indent).
fn paragraphs(page: &mut String, text: &str, indent: &str) {
    for paragraph in text.split("\n\n") {
        let lines: Vec<&str> = paragraph
            .lines()
            .map(str::trim_end)
            .filter(|l| !l.trim().is_empty())
            .collect();
        if lines.is_empty() {
            continue;
        }
        for line in lines {
            let _ = writeln!(page, "{indent}{}", inline(line));
        }
        page.push('\n');
    }
}

/// Help text made safe for Markdown: outside code spans, `<`, `>` and `*` are escaped (clap
/// help says `<report dir>`, which HTML would take for a tag).
fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for c in text.chars() {
        match c {
            '`' => {
                in_code = !in_code;
                out.push(c);
            }
            '<' if !in_code => out.push_str("&lt;"),
            '>' if !in_code => out.push_str("&gt;"),
            '*' if !in_code => out.push_str("\\*"),
            _ => out.push(c),
        }
    }
    out
}

/// A heading's anchor as mdBook and GitHub make it (the headings here are plain words).
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use std::path::Path;

    #[test]
    fn options_reference_is_what_clap_renders_now() {
        let rendered = markdown(super::super::Cli::command());
        let page = Path::new(env!("CARGO_MANIFEST_DIR")).join(PAGE);
        if std::env::var_os("NUMFUZZ_BLESS").is_some_and(|v| v == "1") {
            std::fs::write(&page, &rendered).unwrap();
            return;
        }
        let on_disk = std::fs::read_to_string(&page).unwrap_or_default();
        if on_disk != rendered {
            let line = on_disk
                .lines()
                .zip(rendered.lines())
                .position(|(a, b)| a != b)
                .unwrap_or_else(|| on_disk.lines().count().min(rendered.lines().count()));
            panic!(
                "{} differs from the clap definitions (first at line {}: {:?} on disk, {:?} rendered); \
                 rewrite it with NUMFUZZ_BLESS=1 cargo test --release -p numfuzz --bin numfuzz options_reference",
                page.display(),
                line + 1,
                on_disk.lines().nth(line).unwrap_or(""),
                rendered.lines().nth(line).unwrap_or("")
            );
        }
    }

    #[test]
    fn every_visible_option_of_every_subcommand_is_on_the_page() {
        let page = markdown(super::super::Cli::command());
        let mut cli = super::super::Cli::command();
        cli.build();
        for sub in cli.get_subcommands().filter(|s| s.get_name() != "help") {
            assert!(
                page.contains(&format!("## numfuzz {}\n", sub.get_name())),
                "{}",
                sub.get_name()
            );
            for arg in sub.get_arguments().filter(|a| !a.is_hide_set()) {
                if let Some(long) = arg.get_long() {
                    assert!(page.contains(&format!("--{long}")), "{} --{long}", sub.get_name());
                }
            }
        }
    }

    #[test]
    fn help_text_cannot_open_an_html_tag_or_emphasis() {
        assert_eq!(
            inline("<report dir>/x and `<kept>` *a*"),
            "&lt;report dir&gt;/x and `<kept>` \\*a\\*"
        );
        assert_eq!(slug("numfuzz run-all"), "numfuzz-run-all");
    }
}
