//! `numfuzz harness HEADER... -o DIR`: harnesses from a library's headers (`numfuzz::harness`).

use crate::options::HarnessArgs;
use numfuzz::harness::build::{self, BuildOptions, VARIANTS};
use numfuzz::harness::{generate, list_functions, Options};

pub fn run(args: HarnessArgs) -> anyhow::Result<()> {
    if !args.libs.is_empty() && args.build.is_none() {
        anyhow::bail!("--lib says what the harnesses link, which needs --build 'BUILD COMMAND'");
    }
    let opts = Options {
        headers: args.headers,
        include: args.include,
        exclude: args.exclude,
        conventions: args.conventions,
        clang: args.clang,
        clang_args: args.clang_args,
    };
    let out = match args.out {
        Some(out) if !args.list => out,
        _ => return print_list(&opts),
    };
    let g = generate(&opts, &out)?;
    warn_of(&g.conventions_warnings);
    let m = &g.manifest;
    println!(
        "harnessed {} functions of {} in {} headers; skipped {} (see {})",
        m.harnesses.len(),
        g.considered,
        m.headers.len(),
        m.skipped.len(),
        out.join("skipped.md").display()
    );
    let Some(command) = &args.build else {
        return Ok(());
    };
    let functions: Vec<String> = m.harnesses.iter().map(|h| h.function.clone()).collect();
    let failures = build::build(
        &out,
        &functions,
        &BuildOptions {
            command,
            libs: &args.libs,
            compile_flags: g.compile_flags.clone(),
            error_hook: g.error_hook.as_deref(),
        },
    )?;
    for f in &failures {
        eprintln!("numfuzz: {} did not compile; see {}", f.binary, f.log.display());
    }
    println!(
        "built {} of {} harness binaries in {} (fuzz, .taint, .shadow, .mpfr)",
        functions.len() * VARIANTS.len() - failures.len(),
        functions.len() * VARIANTS.len(),
        out.join("bin").display()
    );
    anyhow::ensure!(
        failures.len() < functions.len() * 3 || functions.is_empty(),
        "no harness compiled; see the logs in {}",
        out.join("build/harness").display()
    );
    Ok(())
}

/// `--list`: the functions' parameters on stdout, nothing written.
fn print_list(opts: &Options) -> anyhow::Result<()> {
    let (text, warnings) = list_functions(opts)?;
    warn_of(&warnings);
    print!("{text}");
    Ok(())
}

/// The conventions' tables that name nothing in these headers, where the file says it also
/// describes others (`other_headers`).
fn warn_of(conventions_warnings: &[String]) {
    for w in conventions_warnings {
        eprintln!("numfuzz: warning: {w}");
    }
}
