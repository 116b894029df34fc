//! The grouping of a campaign's replays into the triage report (`report`): findings by
//! (site, kind), real crashes by (signal, top frame), hangs, inputs that did not reproduce.

use crate::replay::{Frame, Replay, ReplayEnding};
use crate::triage::consequences::root::DroppedReport;
use crate::triage::consequences::{self, InputAnalysis};
use crate::triage::inputs::campaign::{Campaign, Expectation, InputFile};
use crate::triage::inputs::ordinariness::{self, Ordinariness};
use crate::triage::report::{
    returned_rank, view_fields, CrashGroup, Finding, Hang, InputView, NotReproduced, Unexplained,
};
use numfuzz_abi::report::ExceptionReport;
use numfuzz_abi::signature::Signature;
use numfuzz_outdir::{site_label, FindingKey};
use std::collections::{BTreeMap, HashMap, HashSet};

fn expected_text(e: &Expectation, hang_timeout_ms: u64) -> String {
    match e {
        Expectation::Exception { kind, site } => format!("{kind} at {site}"),
        Expectation::Crash => "a crash".into(),
        Expectation::Hang => format!("a hang (no end within {hang_timeout_ms} ms)"),
        Expectation::OutOfMemory => "an out-of-memory stop (the campaign's -m)".into(),
        Expectation::Anything => "an exception, a crash or a hang".into(),
    }
}

fn observed_text(replay: &Replay) -> String {
    let raised: Vec<String> = replay
        .exceptions
        .iter()
        .map(|e| format!("{} at {}", e.kind, site_label(&e.site)))
        .collect();
    let raised = if raised.is_empty() {
        "no exception".to_string()
    } else {
        raised.join(", ")
    };
    match &replay.ending {
        ReplayEnding::Completed { .. } => format!("{raised}; completed"),
        ReplayEnding::Crashed { .. } => format!("{raised}; crashed with {}", replay.crash_name().unwrap_or_default()),
        ReplayEnding::TimedOut { .. } => format!("{raised}; timed out"),
        ReplayEnding::Failed { status, output_tail } => {
            let last = output_tail.lines().last().map_or(String::new(), |l| format!(" ({l})"));
            format!(
                "{raised}; exited with status {}{last}",
                status.map_or("?".into(), |c| c.to_string())
            )
        }
    }
}

fn reproduces(e: &Expectation, replay: &Replay) -> bool {
    match e {
        Expectation::Exception { kind, site } => replay.raises(*kind, |r| site_label(&r.site) == *site),
        Expectation::Crash => matches!(replay.ending, ReplayEnding::Crashed { .. }),
        Expectation::Hang => matches!(replay.ending, ReplayEnding::TimedOut { .. }),
        Expectation::OutOfMemory => replay.out_of_memory(),
        Expectation::Anything => {
            !replay.exceptions.is_empty()
                || matches!(
                    replay.ending,
                    ReplayEnding::Crashed { .. } | ReplayEnding::TimedOut { .. }
                )
        }
    }
}

fn min_time(times: impl Iterator<Item = Option<u64>>) -> Option<u64> {
    times.flatten().min()
}

/// The exception of `key` in `replay` to show: its first origin when it has one (the
/// operands that generated the exceptional value), else its first exception.
pub fn example_exception<'a>(replay: &'a Replay, key: &FindingKey) -> Option<&'a ExceptionReport> {
    let mut of_key = replay.exceptions.iter().filter(|e| key.matches(e));
    let first = of_key.next()?;
    Some(if first.origin {
        first
    } else {
        of_key.find(|e| e.origin).unwrap_or(first)
    })
}

/// A campaign's replays grouped.
pub struct Grouped {
    pub findings: Vec<Finding>,
    pub crashes: Vec<CrashGroup>,
    pub hangs: Vec<Hang>,
    pub not_reproduced: Vec<NotReproduced>,
    pub unexplained: Vec<Unexplained>,
}

/// Groups the replays of a campaign's inputs (`replays[i]` is the replay of
/// `campaign.inputs[i]`). `analyses[i]` is the consequence analysis of `replays[i]` (`None`
/// when it was not replayed); `judge` says whether consequences count (they are left out when
/// they could not be computed).
pub fn group(
    campaign: &Campaign,
    replays: Vec<std::io::Result<Replay>>,
    analyses: &[Option<InputAnalysis>],
    judge: bool,
    signature: Option<&Signature>,
    hang_timeout_ms: u64,
) -> Grouped {
    let mut g = Grouping {
        signature,
        hang_timeout_ms,
        findings: BTreeMap::new(),
        crashes: BTreeMap::new(),
        hangs: Vec::new(),
        not_reproduced: Vec::new(),
        unexplained: BTreeMap::new(),
        replayed: HashMap::new(),
        analysed: BTreeMap::new(),
    };
    for (index, (input, result)) in campaign.inputs.iter().zip(replays).enumerate() {
        let replay = match result {
            Ok(r) => r,
            Err(e) => {
                g.not_reproduced.push(NotReproduced {
                    input: input.rel.clone(),
                    expected: expected_text(&input.expect, hang_timeout_ms),
                    observed: format!("could not be replayed: {e}"),
                });
                continue;
            }
        };
        g.add_exceptions(index, input, &replay);
        g.add_ending(input, &replay);
        if judge {
            if let Some(a) = analyses.get(index).and_then(Option::as_ref).filter(|a| a.unexplained) {
                g.add_unexplained(input, &replay, a);
            }
        }
        g.replayed.insert(input.rel.clone(), (input, replay));
    }
    g.finish(campaign, analyses, judge)
}

/// What [`group`] gathers while it goes through the replays.
struct Grouping<'a> {
    signature: Option<&'a Signature>,
    hang_timeout_ms: u64,
    findings: BTreeMap<FindingKey, Finding>,
    crashes: BTreeMap<(String, String), CrashGroup>,
    hangs: Vec<Hang>,
    not_reproduced: Vec<NotReproduced>,
    /// By dropped report when the inputs dropped one, else by origins.
    unexplained: BTreeMap<(Option<DroppedReport>, Vec<FindingKey>), Unexplained>,
    replayed: HashMap<String, (&'a InputFile, Replay)>,
    /// Per finding, the analyses of the inputs raising it (indices into the analyses).
    analysed: BTreeMap<FindingKey, Vec<usize>>,
}

impl<'a> Grouping<'a> {
    fn view(&self, input: &InputFile, bytes: &[u8]) -> InputView {
        InputView {
            rel: input.rel.clone(),
            fields: view_fields(self.signature, bytes),
        }
    }

    /// Each distinct (site, kind) the replay raised, as a new finding or one more input of one.
    fn add_exceptions(&mut self, index: usize, input: &InputFile, replay: &Replay) {
        let handled = replay.ending == ReplayEnding::Completed { handled: true };
        let mut seen = HashSet::new();
        for e in &replay.exceptions {
            let key = FindingKey::of(e.kind, &e.site);
            if !seen.insert(key.clone()) {
                continue;
            }
            self.analysed.entry(key.clone()).or_default().push(index);
            let view = self.view(input, &replay.bytes);
            let f = self.findings.entry(key.clone()).or_insert_with(|| Finding {
                id: String::new(),
                key,
                site: e.site.clone(),
                example: e.clone(),
                input: view,
                input_bytes: replay.bytes.clone(),
                results: replay.results.clone(),
                inputs: Vec::new(),
                handled_inputs: 0,
                silent_inputs: 0,
                first_seen_ms: None,
                minimized: None,
                minimize_note: None,
                origin: false,
                input_borne: false,
                out_of_domain: false,
                consequence: None,
                escape_root: None,
                root_by: None,
                ordinariness: Ordinariness::default(),
                examples: BTreeMap::new(),
                escapes_to: Vec::new(),
                reference: None,
                not_judged: None,
                dropped_report: None,
                inputs_not_isolated: 0,
                precision_lost: None,
                reproducer: None,
            });
            f.inputs.push(input.rel.clone());
            if handled {
                f.handled_inputs += 1;
            } else {
                f.silent_inputs += 1;
            }
        }
    }

    /// A crash (grouped by signal and top frame), a hang, and an input that did not do again
    /// what its name says.
    fn add_ending(&mut self, input: &InputFile, replay: &Replay) {
        match &replay.ending {
            ReplayEnding::Crashed { stack, .. } => {
                let frame = replay.crash_frame().cloned();
                let name = replay.crash_name().unwrap_or_default();
                let group_key = (name.clone(), frame.as_ref().map_or_else(String::new, Frame::display));
                let view = self.view(input, &replay.bytes);
                let g = self.crashes.entry(group_key).or_insert_with(|| CrashGroup {
                    signal: name,
                    frame,
                    stack: stack.clone(),
                    input: view,
                    inputs: Vec::new(),
                    first_seen_ms: None,
                });
                g.inputs.push(input.rel.clone());
                g.first_seen_ms = min_time([g.first_seen_ms, input.time_ms].into_iter());
            }
            ReplayEnding::TimedOut { stack } => {
                self.hangs.push(Hang {
                    input: self.view(input, &replay.bytes),
                    first_seen_ms: input.time_ms,
                    frame: replay.crash_frame().cloned(),
                    stack: stack.clone(),
                });
            }
            ReplayEnding::Completed { .. } | ReplayEnding::Failed { .. } => {}
        }
        if !reproduces(&input.expect, replay) {
            self.not_reproduced.push(NotReproduced {
                input: input.rel.clone(),
                expected: expected_text(&input.expect, self.hang_timeout_ms),
                observed: observed_text(replay),
            });
        }
    }

    /// A non-finite result no finding explains, grouped by its origins; the most ordinary
    /// input is shown.
    fn add_unexplained(&mut self, input: &InputFile, replay: &Replay, a: &InputAnalysis) {
        let origins: Vec<FindingKey> = a
            .findings
            .iter()
            .filter(|(_, f)| f.origin)
            .map(|(k, _)| k.clone())
            .collect();
        let view = self.view(input, &replay.bytes);
        let dropped = super::dropped_report::of(replay);
        let key = match &dropped {
            Some(d) => (Some(d.clone()), Vec::new()),
            None => (None, origins.clone()),
        };
        let u = self.unexplained.entry(key).or_insert_with(|| Unexplained {
            input: view.clone(),
            results: replay.results.clone(),
            origins: Vec::new(),
            inputs: Vec::new(),
            first_seen_ms: None,
            ordinariness: a.ordinariness,
            dropped_report: dropped,
        });
        for o in origins {
            if !u.origins.contains(&o) {
                u.origins.push(o);
            }
        }
        if a.ordinariness < u.ordinariness {
            u.input = view;
            u.results = replay.results.clone();
            u.ordinariness = a.ordinariness;
        }
        u.inputs.push(input.rel.clone());
        u.first_seen_ms = min_time([u.first_seen_ms, input.time_ms].into_iter());
    }

    /// The findings settled (first seen, consequences, the input shown, ids) and the rest in
    /// report order.
    fn finish(mut self, campaign: &Campaign, analyses: &[Option<InputAnalysis>], judge: bool) -> Grouped {
        // First seen: the earliest exceptions.jsonl record of the same identity over all
        // instances; for campaigns without one (afl-fuzz), the earliest `time:` of its inputs.
        let records = campaign.first_records();
        let time_of: BTreeMap<&str, Option<u64>> =
            campaign.inputs.iter().map(|i| (i.rel.as_str(), i.time_ms)).collect();
        let findings = std::mem::take(&mut self.findings);
        let ids = FindingKey::ids(findings.keys());
        let mut out = Vec::new();
        for ((key, mut f), id) in findings.into_iter().zip(ids) {
            let first = records.iter().find(|r| FindingKey::of(r.kind, &r.site) == key);
            f.first_seen_ms = match first {
                Some(r) => Some(r.time_ms),
                None => min_time(f.inputs.iter().map(|i| time_of.get(i.as_str()).copied().flatten())),
            };
            // The input shown is the one that record names, when it still raises it, unless
            // the consequences name a worse one.
            let show = first.and_then(|r| self.replayed.get(&r.input));
            let show = self
                .settle_consequences(&mut f, &key, campaign, analyses, judge)
                .or(show);
            if let Some((input, replay)) = show {
                if let Some(e) = example_exception(replay, &key) {
                    f.example = e.clone();
                    f.input = self.view(input, &replay.bytes);
                    f.input_bytes = replay.bytes.clone();
                    f.results = replay.results.clone();
                }
                f.dropped_report = super::dropped_report::of(replay);
            }
            f.ordinariness = ordinariness::of(self.signature, &f.input_bytes);
            f.id = id;
            out.push(f);
        }
        let mut unexplained: Vec<Unexplained> = self.unexplained.into_values().collect();
        unexplained.sort_by_key(|u| (u.ordinariness, returned_rank(&u.results)));
        Grouped {
            findings: out,
            crashes: self.crashes.into_values().collect(),
            hangs: self.hangs,
            not_reproduced: self.not_reproduced,
            unexplained,
        }
    }

    /// `f`'s consequences, merged over the inputs raising it; the replay of the example of the
    /// worst one, which is the input to show.
    fn settle_consequences(
        &self,
        f: &mut Finding,
        key: &FindingKey,
        campaign: &Campaign,
        analyses: &[Option<InputAnalysis>],
        judge: bool,
    ) -> Option<&(&'a InputFile, Replay)> {
        let with: Vec<(&InputAnalysis, &consequences::InInput, usize)> = self
            .analysed
            .get(key)
            .into_iter()
            .flatten()
            .filter_map(|&i| {
                let a = analyses.get(i)?.as_ref()?;
                Some((a, a.findings.get(key)?, i))
            })
            .collect();
        let pairs: Vec<(&InputAnalysis, &consequences::InInput)> = with.iter().map(|&(a, f, _)| (a, f)).collect();
        let merged = consequences::merge(key, &pairs);
        f.origin = merged.origin;
        f.input_borne = merged.input_borne;
        f.out_of_domain = merged.out_of_domain;
        if !judge {
            return None;
        }
        f.consequence = merged.consequence;
        f.escape_root = merged.root.clone();
        f.root_by = merged.root_by;
        f.escapes_to = merged.named.iter().cloned().collect();
        let replay_of = |k: usize| self.replayed.get(&campaign.inputs[with[k].2].rel);
        for (&c, &k) in &merged.examples {
            if let Some((input, replay)) = replay_of(k) {
                f.examples.insert(c, self.view(input, &replay.bytes));
            }
        }
        merged
            .consequence
            .and_then(|c| merged.examples.get(&c))
            .and_then(|&k| replay_of(k))
    }
}
