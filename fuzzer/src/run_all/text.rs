//! The merged report's words: values as reports print them, the headline, and what "bugs"
//! counts.

use crate::report_model::merged::{Example, Failed, FunctionCounts, MergedDoc, ShardSource};
use crate::report_model::triage::Field;
use crate::triage::format::{count, short_decimal};
use numfuzz_abi::report::ResultReport;

/// What the bug count counts, said under the headline.
pub const COUNT_NOTE: &str = "Bugs are the entries below, each counted once however many functions reach it: a real crash per signal and top frame, a hang per place it was stopped, an exception per root site, a non-finite result of no single cause per function; the per-function column counts the entries that touch a function, so it can sum to more.";

/// Input values: integers as they are, floating-point values as short decimals.
pub fn fields_text(fields: &[Field]) -> String {
    fields
        .iter()
        .map(|f| {
            if f.is_integer() {
                f.value.clone()
            } else {
                short_decimal(&f.value)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn results_text(results: &[ResultReport]) -> String {
    results
        .iter()
        .map(|r| match &r.name {
            Some(n) => format!("{n} = {}", short_decimal(&r.value)),
            None => short_decimal(&r.value),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// An entry's functions, the first three and how many more.
pub fn functions_shown(functions: &[String]) -> String {
    if functions.len() > 3 {
        format!("{} (+{} more)", functions[..3].join(", "), functions.len() - 3)
    } else {
        functions.join(", ")
    }
}

/// `1.5 (wrong, shadow)`, or `-` without a reference.
pub fn reference_text(e: &Example) -> String {
    e.reference.as_ref().map_or("-".into(), |r| {
        format!("{} ({}, {})", short_decimal(&r.value), r.verdict, r.source)
    })
}

/// A function's findings, or why it has no report.
pub fn findings_text(f: &FunctionCounts, failed: &[Failed]) -> String {
    match f.findings {
        Some(n) => n.to_string(),
        None => {
            let why = failed
                .iter()
                .find(|g| g.function == f.function)
                .map_or("no report", |g| g.why.as_str());
            format!("- ({why})")
        }
    }
}

/// `3 chained, 12 absorbed, 1 input-borne`.
pub fn rest_text(doc: &MergedDoc) -> String {
    doc.rest
        .iter()
        .map(|(class, n)| format!("{n} {class}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `5 bugs over 4 functions (3 with a report, 4 s each): 1 real crash, 1 hang, 2 exception
/// root sites in 3 distinct exceptions, 1 non-finite result of no single cause`.
/// What the report covers when it is not one run of every function: `Shard 2/8 (OUT).`, or
/// `Merged from 8 shards: 1/8 (out-1), ...`.
pub fn shards_line(doc: &MergedDoc) -> Option<String> {
    let named = |s: &ShardSource| format!("{} ({})", s.shard.as_deref().unwrap_or("every function"), s.out);
    match doc.shards.as_slice() {
        [] => None,
        [one] if one.shard.is_some() => Some(format!(
            "Shard {}: this report covers this shard's functions only; `numfuzz run-all merge` merges the shards.",
            named(one)
        )),
        all => Some(format!(
            "Merged from {} run-all directories: {}.",
            all.len(),
            all.iter().map(named).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// `5 s each`, or under a budget `a budget of 600 s: 5-95 s each`.
fn fuzzing_text(doc: &MergedDoc) -> String {
    let Some(budget) = doc.budget else {
        return format!("{} s each", doc.seconds);
    };
    let given: Vec<u64> = doc.functions.iter().filter_map(|f| f.seconds).collect();
    match (given.iter().min(), given.iter().max()) {
        (Some(least), Some(most)) if least != most => format!("a budget of {budget} s: {least}-{most} s each"),
        (Some(each), _) => format!("a budget of {budget} s: {each} s each"),
        _ => format!("a budget of {budget} s"),
    }
}

pub fn headline(doc: &MergedDoc) -> String {
    let s = &doc.summary;
    format!(
        "{} over {} ({} with a report, {}): {}, {}, {} in {} distinct exceptions, {}",
        count(s.bugs, "bug", "bugs"),
        count(s.functions, "function", "functions"),
        s.reported,
        fuzzing_text(doc),
        count(s.crashes, "real crash", "real crashes"),
        count(s.hangs, "hang", "hangs"),
        count(s.root_sites, "exception root site", "exception root sites"),
        s.findings,
        count(
            s.unexplained,
            "non-finite result of no single cause",
            "non-finite results of no single cause"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_fields_print_as_integers() {
        let field = |ty: &str, value: &str| Field {
            ty: ty.into(),
            value: value.into(),
            hex: String::new(),
        };
        let shown = fields_text(&[
            field("f64", "2.50"),
            field("i32", "4095"),
            field("u8", "7"),
            field("f32", "4095"),
        ]);
        assert_eq!(shown, "2.5, 4095, 7, 4095.0");
    }
}
