//! `numfuzz run-all DIR -o OUT -V SECONDS`: a campaign per harness, one merged report.

use crate::options::{MergedFormat, MinimizeWhich, RunAllArgs};
use numfuzz::run_all::{self, render, Options};

pub fn run(args: RunAllArgs) -> anyhow::Result<()> {
    let opts = Options {
        harness_dir: args.dir.clone(),
        out: args.out.clone(),
        seconds: args.seconds,
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
    };
    let finished = run_all::run(opts)?;
    let harness_dir = args.dir.canonicalize()?;
    let info = render::RunInfo {
        harness_dir: &harness_dir,
        seconds: args.seconds,
        failed: &finished.failed,
    };
    let m = &finished.merged;
    let texts = [
        ("md", render::markdown(m, &info)),
        ("json", render::json(m, &info)),
        ("sarif", render::sarif(m)),
        ("html", run_all::html::render(m, &info)),
    ];
    for (extension, text) in &texts {
        let path = finished.layout.merged(extension);
        std::fs::write(&path, text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    let shown = match args.format {
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
