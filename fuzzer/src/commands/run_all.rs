//! `numfuzz run-all DIR -o OUT -V SECONDS`: a campaign per harness, one merged report;
//! `numfuzz run-all merge OUT... -o MERGED`: the report of one run from its shards.

use crate::options::{MergedFormat, MinimizeWhich, RunAllArgs};
use anyhow::Context;
use numfuzz::run_all::shard::Shard;
use numfuzz::run_all::{self, render, shards, Finished, Options};

pub fn run(args: RunAllArgs) -> anyhow::Result<()> {
    if let Some(m) = args.merging() {
        let finished = shards::merge_shards(&m.outs, &m.merged)?;
        return write_reports(&finished, m.format);
    }
    // clap requires these without `merge`.
    let (Some(dir), Some(out)) = (args.dir.clone(), args.out.clone()) else {
        anyhow::bail!("run-all needs DIR, -o OUT and -V SECONDS or --budget DURATION");
    };
    let shard = args
        .shard
        .as_deref()
        .map(|s| s.parse::<Shard>().map_err(|e| anyhow::anyhow!("--shard: {e}")))
        .transpose()?;
    let opts = Options {
        harness_dir: dir,
        out,
        seconds: args.seconds,
        budget: args.budget,
        jobs: args.jobs.get(),
        oracle: args.oracle.clone(),
        functions: args.functions.clone(),
        resume: args.resume,
        retriage: args.retriage,
        minimize: args.minimize.map(|m| match m {
            MinimizeWhich::All => "all",
            MinimizeWhich::Bugs => "bugs",
        }),
        run_args: args.run_args.clone(),
        numfuzz: std::env::current_exe()?,
        shard,
    };
    let finished = run_all::run(opts)?;
    write_reports(&finished, args.format)
}

/// Writes the four reports into the report's directory, prints the one asked for, and says
/// on stderr what failed and the headline.
fn write_reports(finished: &Finished, format: MergedFormat) -> anyhow::Result<()> {
    let info = finished.info();
    let m = &finished.merged;
    let texts = [
        ("md", render::markdown(m, &info)),
        ("json", render::json(m, &info)),
        ("sarif", render::sarif(m)),
        ("html", run_all::html::render(m, &info)),
    ];
    let dir = &finished.layout.out;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (extension, text) in &texts {
        let path = finished.layout.merged(extension);
        std::fs::write(&path, text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    let shown = match format {
        MergedFormat::Md => 0,
        MergedFormat::Json => 1,
        MergedFormat::Sarif => 2,
        MergedFormat::Html => 3,
    };
    print!("{}", texts[shown].1);
    for (function, why) in &finished.failed {
        eprintln!("run-all: {function}: {why}");
    }
    eprintln!(
        "run-all: {}; reports in {}",
        render::headline(m, &info),
        finished.layout.merged("md").display()
    );
    Ok(())
}
