//! `numfuzz harness`: one harness per function of a library's headers whose inputs are
//! numbers, written from clang's reading of the prototypes and a conventions file, with a
//! manifest and the list of functions left out and why; optionally built three ways.

pub mod ast;
pub mod build;
pub mod conventions;
pub mod emit;
pub mod manifest;
pub mod plan;

use conventions::Conventions;
use manifest::{HarnessEntry, Manifest, SkippedEntry};
use regex::Regex;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

pub struct Options {
    pub headers: Vec<PathBuf>,
    pub out: PathBuf,
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
    /// Function names the conventions mention that no header declares.
    pub unknown_in_conventions: Vec<String>,
}

/// Writes DIR/src/F.c per harnessed function, DIR/manifest.json and DIR/skipped.md.
pub fn generate(opts: &Options) -> anyhow::Result<Generated> {
    let headers = absolute_headers(&opts.headers)?;
    let conv = match &opts.conventions {
        Some(p) => Conventions::load(p)?,
        None => Conventions::default(),
    };
    let all = ast::prototypes(&opts.clang, &headers, &opts.clang_args)?;
    // Names the conventions mention but no header declares (a filter does not make them so).
    let declared: BTreeSet<&str> = all.iter().map(|p| p.name.as_str()).collect();
    let unknown_in_conventions = conv
        .functions
        .keys()
        .filter(|f| !declared.contains(f.as_str()))
        .cloned()
        .collect();
    let protos: Vec<&ast::Prototype> = all
        .iter()
        .filter(|p| opts.include.as_ref().is_none_or(|r| r.is_match(&p.name)))
        .filter(|p| opts.exclude.as_ref().is_none_or(|r| !r.is_match(&p.name)))
        .collect();
    let names = include_names(&headers, &opts.clang_args);
    let all_includes: Vec<String> = headers.iter().map(|h| names[h].clone()).collect();
    let cx = emit::Context {
        includes: &conv.defaults.includes,
        headers: &all_includes,
        init: conv.defaults.init.as_deref(),
    };
    let src = opts.out.join("src");
    std::fs::create_dir_all(&src).map_err(|e| anyhow::anyhow!("cannot create `{}`: {e}", src.display()))?;
    let mut manifest = Manifest {
        schema_version: manifest::SCHEMA_VERSION,
        headers: headers.iter().map(|h| h.display().to_string()).collect(),
        harnesses: Vec::new(),
        skipped: Vec::new(),
    };
    for p in protos.iter().copied() {
        let header = &names[&p.header];
        match plan::plan(p, &conv)? {
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
    manifest.write(&opts.out)?;
    Ok(Generated {
        considered: protos.len(),
        compile_flags: compile_flags(&headers, &names, &opts.clang_args),
        unknown_in_conventions,
        manifest,
    })
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
    dirs.into_iter().filter_map(|d| d.canonicalize().ok()).collect()
}

/// How a harness includes each header: relative to an include directory of the clang
/// arguments that holds it (`gsl/gsl_sf.h`), else by its file name (its directory is then
/// on the harness's include path).
fn include_names(headers: &[PathBuf], clang_args: &[String]) -> HashMap<PathBuf, String> {
    let dirs = include_dirs(clang_args);
    headers
        .iter()
        .map(|h| {
            let name = dirs
                .iter()
                .find_map(|d| h.strip_prefix(d).ok())
                .unwrap_or_else(|| Path::new(h.file_name().unwrap_or_default()));
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
