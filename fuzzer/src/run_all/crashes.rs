//! Real crashes and hangs over many functions: one entry per signal and top frame (a hang:
//! the frame the time limit stopped it in, without the column, which depends on timing), with
//! the functions it happens in, the most ordinary input over them and a command that runs it
//! again.

use super::order::order_of;
use crate::report_model::merged::{CrashExample, MergedCrash};
use crate::report_model::triage::{Crash, Hang, Input};
use numfuzz_abi::report::Frame;
use std::collections::BTreeMap;
use std::path::Path;

/// How many innermost frames an entry shows.
const TOP_FRAMES: usize = 5;

/// `function (file:line)`, or `?` when the program could not say.
fn place(frame: Option<&Frame>) -> String {
    match frame {
        Some(f) => match (&f.file, f.line) {
            (Some(file), Some(line)) => format!("{} ({file}:{line})", f.function),
            _ => f.function.clone(),
        },
        None => "?".into(),
    }
}

/// The entry a crash belongs to.
pub fn crash_key(c: &Crash) -> String {
    format!("crash {} at {}", c.signal, place(c.frame.as_ref()))
}

/// The entry a hang belongs to.
pub fn hang_key(h: &Hang) -> String {
    format!("hang at {}", place(h.frame.as_ref()))
}

/// `text` as one shell word.
fn shell_word(text: &str) -> String {
    let plain = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-:,+=@%".contains(c));
    if plain && !text.is_empty() {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// Where one function's inputs are and what runs them.
pub struct Origin<'a> {
    pub function: &'a str,
    pub binary: &'a Path,
    /// The campaign directory the report's input paths are relative to.
    pub campaign: &'a Path,
}

impl Origin<'_> {
    fn example(&self, input: &Input) -> CrashExample {
        let path = self.campaign.join(&input.path).display().to_string();
        CrashExample {
            function: self.function.to_string(),
            input: input.fields.clone(),
            reproduce: format!(
                "numfuzz replay {} {}",
                shell_word(&self.binary.display().to_string()),
                shell_word(&path)
            ),
            path,
        }
    }
}

/// One occurrence in one function's report.
pub struct Occurrence<'a> {
    pub key: String,
    pub signal: Option<&'a str>,
    pub frame: Option<&'a Frame>,
    pub stack: &'a [Frame],
    pub input: &'a Input,
    pub inputs: usize,
    pub first_seen_ms: Option<u64>,
}

impl<'a> From<&'a Crash> for Occurrence<'a> {
    fn from(c: &'a Crash) -> Occurrence<'a> {
        Occurrence {
            key: crash_key(c),
            signal: Some(&c.signal),
            frame: c.frame.as_ref(),
            stack: &c.stack,
            input: &c.input,
            inputs: c.input_count,
            first_seen_ms: c.first_seen_ms,
        }
    }
}

impl<'a> From<&'a Hang> for Occurrence<'a> {
    fn from(h: &'a Hang) -> Occurrence<'a> {
        Occurrence {
            key: hang_key(h),
            signal: None,
            frame: h.frame.as_ref(),
            stack: &h.stack,
            input: &h.input,
            inputs: 1,
            first_seen_ms: h.first_seen_ms,
        }
    }
}

/// Crashes (or hangs) merged by key, in the order first seen.
#[derive(Default)]
pub struct Groups {
    pub list: Vec<MergedCrash>,
    index: BTreeMap<String, usize>,
}

impl Groups {
    pub fn add(&mut self, o: Occurrence, origin: &Origin) {
        let Some(&at) = self.index.get(&o.key) else {
            self.index.insert(o.key.clone(), self.list.len());
            self.list.push(MergedCrash {
                signal: o.signal.map(str::to_string),
                frame: o.frame.cloned(),
                stack: o.stack.iter().take(TOP_FRAMES).cloned().collect(),
                functions: vec![origin.function.to_string()],
                inputs: o.inputs,
                first_seen_ms: o.first_seen_ms,
                example: origin.example(o.input),
            });
            return;
        };
        let g = &mut self.list[at];
        if !g.functions.iter().any(|f| f == origin.function) {
            g.functions.push(origin.function.to_string());
        }
        g.inputs += o.inputs;
        g.first_seen_ms = earliest(g.first_seen_ms, o.first_seen_ms);
        if order_of(&o.input.fields) < order_of(&g.example.input) {
            g.example = origin.example(o.input);
            g.stack = o.stack.iter().take(TOP_FRAMES).cloned().collect();
        }
    }
}

/// The earlier of two times, either unknown.
pub fn earliest(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproducers_quote_what_a_shell_would_split() {
        assert_eq!(shell_word("/o/id:000001,sig:11"), "/o/id:000001,sig:11");
        assert_eq!(shell_word("/my dir/it's"), "'/my dir/it'\\''s'");
    }
}
