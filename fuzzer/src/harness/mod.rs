//! `numfuzz harness`: one harness per function of a library's headers whose inputs are
//! numbers, written from clang's reading of the prototypes and a conventions file, with a
//! manifest and the list of functions left out and why; optionally built four ways (fuzz, taint, shadow, MPFR shadow).

pub mod ast;
pub mod build;
pub mod conventions;
pub mod emit;
pub mod list;
pub mod manifest;
pub mod plan;
pub mod unmatched;

use conventions::Conventions;
use manifest::{HarnessEntry, Manifest, SkippedEntry};
use regex::Regex;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Which functions of which headers, read how.
pub struct Options {
    pub headers: Vec<PathBuf>,
    pub include: Option<Regex>,
    pub exclude: Option<Regex>,
    pub conventions: Option<PathBuf>,
    pub clang: String,
    pub clang_args: Vec<String>,
}

/// What `generate` wrote.
pub struct Generated {
    pub manifest: Manifest,
    /// Functions the headers declare that the filters selected.
    pub considered: usize,
    /// What a harness compile needs: the headers' directories and the clang arguments.
    pub compile_flags: Vec<String>,
    /// The conventions' tables that name nothing in these headers (`defaults.other_headers`).
    pub conventions_warnings: Vec<String>,
    /// The library's error-report hook (`defaults.error_hook`).
    pub error_hook: Option<String>,
}

/// The headers read and the conventions checked against them.
struct Reading {
    headers: Vec<PathBuf>,
    conv: Conventions,
    /// Every function the headers declare, whatever the filters.
    declared: Vec<ast::Prototype>,
    /// How a harness includes each header.
    include_names: HashMap<PathBuf, String>,
    conventions_warnings: Vec<String>,
}

impl Reading {
    fn new(opts: &Options) -> anyhow::Result<Reading> {
        let headers = absolute_headers(&opts.headers)?;
        let conv = match &opts.conventions {
            Some(p) => Conventions::load(p)?,
            None => Conventions::default(),
        };
        let declared = ast::prototypes(&opts.clang, &headers, &opts.clang_args)?;
        let conventions_warnings = check_conventions(&conv, &declared)?;
        Ok(Reading {
            include_names: include_names(&headers, &opts.headers, &opts.clang_args),
            headers,
            conv,
            declared,
            conventions_warnings,
        })
    }

    /// The functions `--include` and `--exclude` select.
    fn selected(&self, opts: &Options) -> Vec<&ast::Prototype> {
        self.declared
            .iter()
            .filter(|p| opts.include.as_ref().is_none_or(|r| r.is_match(&p.name)))
            .filter(|p| opts.exclude.as_ref().is_none_or(|r| !r.is_match(&p.name)))
            .collect()
    }
}

/// The conventions' keys that name nothing: the first is the error (with how many more); in a
/// file that also describes other headers, those naming what they may declare are warnings.
fn check_conventions(conv: &Conventions, declared: &[ast::Prototype]) -> anyhow::Result<Vec<String>> {
    let shared = conv.defaults.other_headers;
    let (warnings, errors): (Vec<_>, Vec<_>) = unmatched::unmatched(conv, declared)
        .into_iter()
        .partition(|u| shared && u.other_headers);
    if let Some(first) = errors.first() {
        let hint = match first.other_headers {
            true => "; if the file also describes other headers, say so: `other_headers = true` under [defaults]",
            false => "",
        };
        let more = match errors.len() - 1 {
            0 => String::new(),
            n => format!(" (and {n} more keys that name nothing)"),
        };
        anyhow::bail!("{}{hint}{more}", first.message);
    }
    Ok(warnings.into_iter().map(|u| u.message).collect())
}

/// `numfuzz harness --list`: the selected functions' parameters, types and uses; writes nothing.
pub fn list_functions(opts: &Options) -> anyhow::Result<(String, Vec<String>)> {
    let r = Reading::new(opts)?;
    let text = list::listing(&r.selected(opts), |p| r.include_names[&p.header].clone(), &r.conv)?;
    Ok((text, r.conventions_warnings))
}

/// Writes OUT/src/F.c per harnessed function, OUT/manifest.json and OUT/skipped.md; nothing
/// when the headers or the conventions are wrong.
pub fn generate(opts: &Options, out: &Path) -> anyhow::Result<Generated> {
    let r = Reading::new(opts)?;
    let selected = r.selected(opts);
    let planned = plan_all(&selected, &r.conv)?;
    let all_includes: Vec<String> = r.headers.iter().map(|h| r.include_names[h].clone()).collect();
    let cx = emit::Context {
        includes: &r.conv.defaults.includes,
        headers: &all_includes,
        init: r.conv.defaults.init.as_deref(),
    };
    let src = out.join("src");
    std::fs::create_dir_all(&src).map_err(|e| anyhow::anyhow!("cannot create `{}`: {e}", src.display()))?;
    let mut manifest = Manifest {
        schema_version: manifest::SCHEMA_VERSION,
        headers: r.headers.iter().map(|h| h.display().to_string()).collect(),
        harnesses: Vec::new(),
        skipped: Vec::new(),
    };
    for (p, planned) in selected.iter().zip(planned) {
        let header = &r.include_names[&p.header];
        match planned {
            Ok(plan) => {
                write_if_changed(
                    &src.join(format!("{}.c", p.name)),
                    &emit::harness_source(&plan, header, &cx),
                )?;
                manifest.harnesses.push(HarnessEntry::new(&plan, header));
            }
            Err(s) => manifest.skipped.push(SkippedEntry {
                function: p.name.clone(),
                header: header.clone(),
                parameter: s.parameter,
                reason: s.reason,
            }),
        }
    }
    remove_stale(&src, &manifest)?;
    manifest.write(out)?;
    Ok(Generated {
        considered: selected.len(),
        compile_flags: compile_flags(&r.headers, &r.include_names, &opts.clang_args),
        conventions_warnings: r.conventions_warnings,
        error_hook: r.conv.defaults.error_hook.clone(),
        manifest,
    })
}

/// Every function's plan before anything is written: a conventions mistake found while
/// planning (a domain that does not parse) leaves the output directory as it was.
fn plan_all(protos: &[&ast::Prototype], conv: &Conventions) -> anyhow::Result<Vec<Result<plan::Plan, plan::Skip>>> {
    protos.iter().map(|p| plan::plan(p, conv)).collect()
}

/// The headers as absolute, canonical paths; a missing one is an error.
fn absolute_headers(headers: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    headers
        .iter()
        .map(|h| {
            h.canonicalize()
                .map_err(|e| anyhow::anyhow!("header `{}`: {e}; give the path of an existing header", h.display()))
        })
        .collect()
}

/// The include directories named in clang's arguments (`-I dir`, `-Idir`, `-isystem dir`).
fn include_dirs(clang_args: &[String]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut it = clang_args.iter();
    while let Some(a) = it.next() {
        for flag in ["-I", "-isystem", "-iquote", "-idirafter"] {
            if a == flag {
                dirs.extend(it.next().map(PathBuf::from));
            } else if let Some(d) = a.strip_prefix(flag).filter(|_| flag == "-I") {
                dirs.push(PathBuf::from(d));
            }
        }
    }
    dirs
}

/// How a harness includes each header (`headers` canonical, `given` as named on the command
/// line, in the same order): relative to an include directory of the clang arguments that holds
/// it (`gsl/gsl_sf.h`), else by its file name (its directory is then on the harness's include
/// path). The paths as given are tried before the canonical ones: a header that is a symlink
/// under the include directory (GSL's build tree links `gsl/gsl_cdf.h` to `cdf/gsl_cdf.h`) is
/// included by its path there, not by its target's file name.
fn include_names(headers: &[PathBuf], given: &[PathBuf], clang_args: &[String]) -> HashMap<PathBuf, String> {
    let dirs = include_dirs(clang_args);
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    headers
        .iter()
        .zip(given)
        .map(|(h, g)| {
            let relative = |header: &Path, dir_of: &dyn Fn(&Path) -> PathBuf| {
                dirs.iter()
                    .find_map(|d| header.strip_prefix(dir_of(d)).ok().map(Path::to_path_buf))
            };
            let name = relative(&absolute(g), &absolute)
                .or_else(|| relative(h, &canonical))
                .unwrap_or_else(|| PathBuf::from(h.file_name().unwrap_or_default()));
            (h.clone(), name.display().to_string())
        })
        .collect()
}

/// `-I` for every header included by its file name, then the clang arguments.
fn compile_flags(headers: &[PathBuf], names: &HashMap<PathBuf, String>, clang_args: &[String]) -> Vec<String> {
    let mut flags: Vec<String> = Vec::new();
    for h in headers {
        let by_file_name = Path::new(&names[h]).parent().is_none_or(|p| p.as_os_str().is_empty());
        if let Some(dir) = h.parent().filter(|_| by_file_name) {
            let flag = format!("-I{}", dir.display());
            if !flags.contains(&flag) {
                flags.push(flag);
            }
        }
    }
    flags.extend(clang_args.iter().cloned());
    flags
}

/// Writes only what changed, so that a build tool relinks only those harnesses.
fn write_if_changed(path: &Path, text: &str) -> anyhow::Result<()> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    std::fs::write(path, text).map_err(|e| anyhow::anyhow!("cannot write `{}`: {e}", path.display()))
}

/// Removes the sources of functions no longer harnessed (renamed, now skipped or filtered).
fn remove_stale(src: &Path, manifest: &Manifest) -> anyhow::Result<()> {
    let wanted: BTreeSet<String> = manifest.harnesses.iter().map(|h| format!("{}.c", h.function)).collect();
    for entry in std::fs::read_dir(src)? {
        let path = entry?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        if name.ends_with(".c") && !wanted.contains(&name) {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}
