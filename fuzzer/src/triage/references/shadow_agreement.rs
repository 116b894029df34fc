//! The shadow build measured against an oracle: with `--oracle` and a shadow build both
//! present, every input whose primary result came out Inf or NaN unreported (from finite
//! fields) is judged both ways, and the report counts the pairs of verdicts and lists the
//! inputs where they differ, over every escaping input and over those inside the declared
//! domains (outside them an oracle may call a parameter undefined where the code's formula, and
//! so its shadow, still computes a number; those findings are `out-of-domain`, never bugs).
//! References still come from the oracle.

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
    pub in_domain: bool,
}

/// One escaping input the shadow left unjudged, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Unjudged {
    /// Relative to the output directory.
    pub input: String,
    /// The ladder's reason (which shadow ran out of range or precision, where); `None`: it
    /// gave none.
    pub why: Option<String>,
    pub oracle: Option<Verdict>,
    pub in_domain: bool,
}

/// (oracle's verdict, shadow's verdict) → inputs; `None`: that reference did not judge it.
pub type Pairs = BTreeMap<(Option<Verdict>, Option<Verdict>), usize>;

/// Inputs both references judged.
pub fn judged_by_both(pairs: &Pairs) -> usize {
    pairs
        .iter()
        .filter(|((o, s), _)| o.is_some() && s.is_some())
        .map(|(_, n)| n)
        .sum()
}

/// Inputs both judged, and judged alike.
pub fn agreed(pairs: &Pairs) -> usize {
    pairs
        .iter()
        .filter(|((o, s), _)| o.is_some() && o == s)
        .map(|(_, n)| n)
        .sum()
}

/// The two references' verdicts over the same inputs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Agreement {
    pub pairs: Pairs,
    /// The same, over the inputs inside every declared domain (all of them without domains).
    pub in_domain: Pairs,
    pub disagreements: Vec<Disagreement>,
    /// The escaping inputs the shadow did not judge: what keeps the share judged down.
    pub unjudged: Vec<Unjudged>,
    /// The escaping inputs the shadow judged, by what judged each ([`super::Source::name`]:
    /// the x87 build, its MPFR rung, a harness's declared domains).
    pub judged_by: BTreeMap<&'static str, usize>,
}

impl Agreement {
    pub fn judged_by_both(&self) -> usize {
        judged_by_both(&self.pairs)
    }

    pub fn agreed(&self) -> usize {
        agreed(&self.pairs)
    }

    pub fn inputs(&self) -> usize {
        self.pairs.values().sum()
    }

    fn add(
        &mut self,
        input: String,
        in_domain: bool,
        oracle: Option<ResultVerdict>,
        shadow: Result<ResultVerdict, Option<String>>,
    ) {
        let shadow = match shadow {
            Ok(v) => Some(v),
            Err(why) => {
                self.unjudged.push(Unjudged {
                    input: input.clone(),
                    why,
                    oracle: oracle.as_ref().map(|v| v.verdict),
                    in_domain,
                });
                None
            }
        };
        let key = (oracle.as_ref().map(|v| v.verdict), shadow.as_ref().map(|v| v.verdict));
        *self.pairs.entry(key).or_default() += 1;
        if in_domain {
            *self.in_domain.entry(key).or_default() += 1;
        }
        if key.0.is_some() && key.1.is_some() && key.0 != key.1 {
            self.disagreements.push(Disagreement {
                input,
                oracle,
                shadow,
                in_domain,
            });
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
            let by_shadow = shadow
                .verdict(signature, &r.bytes, r)
                .ok_or_else(|| shadow.why_unjudged(&r.bytes));
            Some((oracle.verdict(signature, &r.bytes, r), by_shadow))
        },
        |_| {},
    );
    let mut agreement = Agreement::default();
    for (&i, v) in escaping.iter().zip(verdicts) {
        if let Some((o, s)) = v {
            let bytes = replays[i].as_ref().map(|r| r.bytes.as_slice()).unwrap_or_default();
            let in_domain = signature.is_none_or(|sig| sig.in_domain(bytes));
            if let Ok(v) = &s {
                *agreement.judged_by.entry(shadow.source_of(v).name()).or_default() += 1;
            }
            agreement.add(names[i].clone(), in_domain, o, s);
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
            by_domain: false,
        })
    }

    #[test]
    fn pairs_count_and_only_judged_differences_are_listed() {
        let mut a = Agreement::default();
        a.add(
            "a".into(),
            true,
            judged(Verdict::Wrong, "1e302"),
            judged(Verdict::Wrong, "1.0000001e302").ok_or(None),
        );
        a.add(
            "b".into(),
            true,
            judged(Verdict::UnreportedRange, "1e400"),
            Err(Some("x87 shadow: beyond its range".into())),
        );
        a.add(
            "c".into(),
            false,
            judged(Verdict::Wrong, "5"),
            judged(Verdict::UnreportedRange, "1e400").ok_or(None),
        );
        a.add("d".into(), true, None, judged(Verdict::Wrong, "5").ok_or(None));
        assert_eq!((a.inputs(), a.judged_by_both(), a.agreed()), (4, 2, 1));
        // "c", the one disagreement, lies outside the declared domains.
        let inside = &a.in_domain;
        assert_eq!(
            (inside.values().sum::<usize>(), judged_by_both(inside), agreed(inside)),
            (3, 1, 1)
        );
        assert_eq!(a.disagreements.len(), 1);
        assert_eq!(
            (a.disagreements[0].input.as_str(), a.disagreements[0].in_domain),
            ("c", false)
        );
        assert_eq!(a.pairs[&(Some(Verdict::UnreportedRange), None)], 1);
        // "b", the one input the shadow did not judge, keeps its reason and the oracle's verdict.
        assert_eq!(
            a.unjudged,
            vec![Unjudged {
                input: "b".into(),
                why: Some("x87 shadow: beyond its range".into()),
                oracle: Some(Verdict::UnreportedRange),
                in_domain: true,
            }]
        );
    }
}
