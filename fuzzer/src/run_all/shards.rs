//! `numfuzz run-all merge OUT... -o MERGED`: the report of one run, from the run-all
//! directories of its shards (`--shard K/N`, each made on its own machine).
//!
//! The merge reads each OUT's `run-all.json` and its triage reports, and nothing of the
//! harness directory (the merging machine, a CI job downloading artifacts, may have none):
//! the functions are merged in the order of the whole run, exactly as one run merges them,
//! so the report is the one a single run over the same campaign directories writes, except
//! that its paths to inputs lead into the shards' directories. MERGED gets the report only;
//! the campaigns stay where they are.

use super::layout::Layout;
use super::shard::Shard;
use super::{merge_reports, read_state, Finished, Source, State};
use crate::report_model::merged::{self, MergedDoc, ShardSource};
use anyhow::bail;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One OUT given to the merge.
struct Part {
    out: PathBuf,
    state: State,
}

/// Merges the run-all directories `outs` into one report for `merged`, or says in one line
/// why they are not the shards of one run.
pub fn merge_shards(outs: &[PathBuf], merged: &Path) -> anyhow::Result<Finished> {
    refuse_occupied(merged)?;
    let mut parts = outs
        .iter()
        .map(|out| {
            Ok(Part {
                out: out.clone(),
                state: read_state(out)?,
            })
        })
        .collect::<anyhow::Result<Vec<Part>>>()?;
    // By shard, so that the report names them in one order however the shell globbed them.
    parts.sort_by_key(|p| p.state.shard.map(|s| s.k));
    let first = &parts[0];
    for p in &parts[1..] {
        same_run(first, p)?;
    }
    let owners = owners(&parts)?;
    complete(&parts, &owners)?;
    let layouts: Vec<Layout> = parts.iter().map(|p| Layout::new(&p.out)).collect();
    let sources: Vec<Source> = first
        .state
        .selection()
        .iter()
        .zip(&owners)
        .map(|(function, &i)| Source {
            function,
            layout: &layouts[i],
            harness_dir: &parts[i].state.harness_dir,
            seconds: parts[i].state.seconds,
        })
        .collect();
    Ok(Finished {
        merged: merge_reports(&sources)?,
        failed: failed(&parts, first.state.selection())?,
        layout: Layout::new(merged),
        harness_dir: first.state.harness_dir.clone(),
        seconds: first.state.seconds,
        budget: first.state.budget,
        shards: parts.iter().map(source).collect(),
    })
}

/// MERGED is new or empty: a merge never mixes its report with other files.
fn refuse_occupied(merged: &Path) -> anyhow::Result<()> {
    if merged.read_dir().is_ok_and(|mut d| d.next().is_some()) {
        bail!(
            "{} is not empty: run-all merge writes a new directory, choose another -o",
            merged.display()
        );
    }
    Ok(())
}

/// Refuses two OUTs that are not shards of one run: another manifest, another choice of
/// functions, another number of shards, or another fuzzing time (the report states one).
fn same_run(a: &Part, b: &Part) -> anyhow::Result<()> {
    let (sa, sb) = (&a.state, &b.state);
    let shards = |s: &State| s.shard.unwrap_or(Shard { k: 1, n: 1 }).n;
    let differ = if sa.manifest != sb.manifest || (sa.manifest.is_none() && sa.harness_dir != sb.harness_dir) {
        Some(format!(
            "of different harness directories ({} and {})",
            sa.harness_dir.display(),
            sb.harness_dir.display()
        ))
    } else if sa.selection() != sb.selection() {
        Some("of different function lists (--functions)".to_string())
    } else if shards(sa) != shards(sb) {
        Some(format!("split {} and {} ways", shards(sa), shards(sb)))
    } else if sa.seconds != sb.seconds || sa.budget != sb.budget {
        Some(format!("of {} and {}", sa.fuzzing_time(), sb.fuzzing_time()))
    } else {
        None
    };
    match differ {
        Some(how) => bail!(
            "{} and {} are run-alls {how}, not shards of one run",
            a.out.display(),
            b.out.display()
        ),
        None => Ok(()),
    }
}

/// For each function of the run, the part that ran it; a function in two parts is refused
/// (two reports of one function would count its bugs twice).
fn owners(parts: &[Part]) -> anyhow::Result<Vec<usize>> {
    let selection = parts[0].state.selection();
    let mut owner = vec![usize::MAX; selection.len()];
    for (i, part) in parts.iter().enumerate() {
        for f in &part.state.functions {
            let Some(at) = selection.iter().position(|g| g == f) else {
                bail!(
                    "{} ran `{f}`, which its run-all.json does not select",
                    part.out.display()
                );
            };
            if owner[at] != usize::MAX {
                bail!(
                    "`{f}` is in both {} and {}: give each shard once",
                    parts[owner[at]].out.display(),
                    part.out.display()
                );
            }
            owner[at] = i;
        }
    }
    Ok(owner)
}

/// Refuses a merge that lacks a shard: its report would look like the whole run's. (A
/// shard that failed on its machine can be run again there, or here, with `--shard K/N`.)
fn complete(parts: &[Part], owners: &[usize]) -> anyhow::Result<()> {
    let Some(missing) = owners.iter().position(|&o| o == usize::MAX) else {
        return Ok(());
    };
    let n = parts[0].state.shard.map_or(1, |s| s.n);
    let given: BTreeSet<usize> = parts.iter().filter_map(|p| p.state.shard).map(|s| s.k).collect();
    let absent: Vec<String> = (1..=n)
        .filter(|k| !given.contains(k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    bail!(
        "shard {} missing (`{}` is in none of the directories given): give every shard's OUT",
        absent.join(", "),
        parts[0].state.selection()[missing]
    )
}

/// The functions each part's own report says failed (a part without a report, stopped
/// before it wrote one, has none), in the run's order.
fn failed(parts: &[Part], selection: &[String]) -> anyhow::Result<Vec<(String, String)>> {
    let mut all = Vec::new();
    for p in parts {
        let path = Layout::new(&p.out).merged("json");
        if !path.exists() {
            continue;
        }
        let doc: MergedDoc = crate::report_model::read(&path, &merged::KIND).map_err(anyhow::Error::msg)?;
        all.extend(doc.failed.into_iter().map(|f| (f.function, f.why)));
    }
    all.sort_by_key(|(f, _)| selection.iter().position(|g| g == f));
    Ok(all)
}

fn source(p: &Part) -> ShardSource {
    ShardSource {
        shard: p.state.shard.map(|s| s.to_string()),
        out: p.out.display().to_string(),
    }
}
