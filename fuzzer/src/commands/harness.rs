//! `numfuzz harness HEADER... -o DIR`: harnesses from a library's headers (`numfuzz::harness`).

use crate::options::HarnessArgs;
use numfuzz::harness::build::{self, BuildOptions};
use numfuzz::harness::{generate, Options};

pub fn run(args: HarnessArgs) -> anyhow::Result<()> {
    if !args.libs.is_empty() && args.build.is_none() {
        anyhow::bail!("--lib says what the harnesses link, which needs --build 'BUILD COMMAND'");
    }
    let opts = Options {
        headers: args.headers,
        out: args.out.clone(),
        include: args.include,
        exclude: args.exclude,
        conventions: args.conventions,
        clang: args.clang,
        clang_args: args.clang_args,
    };
    let g = generate(&opts)?;
    if !g.unknown_in_conventions.is_empty() {
        eprintln!(
            "numfuzz: warning: the conventions name functions no header declares: {}",
            g.unknown_in_conventions.join(", ")
        );
    }
    let m = &g.manifest;
    println!(
        "harnessed {} functions of {} in {} headers; skipped {} (see {})",
        m.harnesses.len(),
        g.considered,
        m.headers.len(),
        m.skipped.len(),
        args.out.join("skipped.md").display()
    );
    let Some(command) = &args.build else {
        return Ok(());
    };
    let functions: Vec<String> = m.harnesses.iter().map(|h| h.function.clone()).collect();
    let failures = build::build(
        &args.out,
        &functions,
        &BuildOptions {
            command,
            libs: &args.libs,
            compile_flags: g.compile_flags.clone(),
        },
    )?;
    for f in &failures {
        eprintln!("numfuzz: {} did not compile; see {}", f.binary, f.log.display());
    }
    println!(
        "built {} of {} harness binaries in {} (fuzz, .taint, .shadow)",
        functions.len() * 3 - failures.len(),
        functions.len() * 3,
        args.out.join("bin").display()
    );
    anyhow::ensure!(
        failures.len() < functions.len() * 3 || functions.is_empty(),
        "no harness compiled; see the logs in {}",
        args.out.join("build/harness").display()
    );
    Ok(())
}
