//! The shadow build measured against an oracle: with `--oracle` and a shadow build both
//! present, every input whose primary result came out Inf or NaN unreported (from finite
//! fields) is judged both ways, and the report counts the pairs of verdicts and lists the
//! inputs where they differ. References still come from the oracle.

use super::oracle::{ResultVerdict, Verdict};
use super::References;
use crate::replay::Replay;
use crate::triage::consequences;
use crate::triage::parallel;
use numfuzz_abi::signature::Signature;
use std::collections::BTreeMap;

/// One input the two references judged differently.
#[derive(Clone, Debug, PartialEq)]
pub struct Disagreement {
    /// Relative to the output directory.
    pub input: String,
    pub oracle: Option<ResultVerdict>,
    pub shadow: Option<ResultVerdict>,
}

/// The two references' verdicts over the same inputs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Agreement {
    /// (oracle's verdict, shadow's verdict) → inputs; `None`: that reference did not judge it.
    pub pairs: BTreeMap<(Option<Verdict>, Option<Verdict>), usize>,
    pub disagreements: Vec<Disagreement>,
}

impl Agreement {
    /// Inputs both references judged.
    pub fn judged_by_both(&self) -> usize {
        self.pairs
            .iter()
            .filter(|((o, s), _)| o.is_some() && s.is_some())
            .map(|(_, n)| n)
            .sum()
    }

    /// Inputs both judged, and judged alike.
    pub fn agreed(&self) -> usize {
        self.pairs
            .iter()
            .filter(|((o, s), _)| o.is_some() && o == s)
            .map(|(_, n)| n)
            .sum()
    }

    pub fn inputs(&self) -> usize {
        self.pairs.values().sum()
    }

    fn add(&mut self, input: String, oracle: Option<ResultVerdict>, shadow: Option<ResultVerdict>) {
        let key = (oracle.as_ref().map(|v| v.verdict), shadow.as_ref().map(|v| v.verdict));
        *self.pairs.entry(key).or_default() += 1;
        if key.0.is_some() && key.1.is_some() && key.0 != key.1 {
            self.disagreements.push(Disagreement { input, oracle, shadow });
        }
    }
}

/// Judges every escaping input of `replays` (named by `names`) by both references.
pub fn compare(
    oracle: &References,
    shadow: &References,
    replays: &[std::io::Result<Replay>],
    names: &[String],
    signature: Option<&Signature>,
    jobs: usize,
) -> Agreement {
    let escaping: Vec<usize> = (0..replays.len())
        .filter(|&i| {
            replays[i]
                .as_ref()
                .is_ok_and(|r| consequences::needs_attribution(r, signature))
        })
        .collect();
    let verdicts = parallel::map(
        &escaping,
        jobs,
        |&i| {
            let r = replays[i].as_ref().ok()?;
            Some((
                oracle.verdict(signature, &r.bytes, r),
                shadow.verdict(signature, &r.bytes, r),
            ))
        },
        |_| {},
    );
    let mut agreement = Agreement::default();
    for (&i, v) in escaping.iter().zip(verdicts) {
        if let Some((o, s)) = v {
            agreement.add(names[i].clone(), o, s);
        }
    }
    agreement
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(verdict: Verdict, reference: &str) -> Option<ResultVerdict> {
        Some(ResultVerdict {
            index: 0,
            returned: "inf".into(),
            reference: reference.into(),
            verdict,
            tolerance: 1e-6,
            beside: false,
            by_mpfr: false,
        })
    }

    #[test]
    fn pairs_count_and_only_judged_differences_are_listed() {
        let mut a = Agreement::default();
        a.add(
            "a".into(),
            judged(Verdict::Wrong, "1e302"),
            judged(Verdict::Wrong, "1.0000001e302"),
        );
        a.add("b".into(), judged(Verdict::UnreportedRange, "1e400"), None);
        a.add(
            "c".into(),
            judged(Verdict::Wrong, "5"),
            judged(Verdict::UnreportedRange, "1e400"),
        );
        a.add("d".into(), None, judged(Verdict::Wrong, "5"));
        assert_eq!((a.inputs(), a.judged_by_both(), a.agreed()), (4, 2, 1));
        assert_eq!(a.disagreements.len(), 1);
        assert_eq!(a.disagreements[0].input, "c");
        assert_eq!(a.pairs[&(Some(Verdict::UnreportedRange), None)], 1);
    }
}
