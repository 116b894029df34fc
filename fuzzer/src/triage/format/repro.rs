//! `numfuzz triage --repro DIR`: one standalone C file per bug that runs the harness on the
//! bug's input (its minimised one when there is one) against the library built without
//! numfuzz-cc, prints what it returned and the reference, and exits 1 while the bug is there:
//! what a maintainer pastes into a tracker and keeps as a regression test.
//!
//! The file is `DIR/<finding id>.c`. It defines `NUMFUZZ_PLAIN_RUNTIME` before including
//! `numfuzz.h` (the header's plain mode: the entry points the harness calls, without the
//! runtime), and DIR gets copies of `numfuzz.h` and `numfuzz_abi.h`, so that any C compiler
//! builds it with the harness's source file and the plain library.
//!
//! The build line links the plain library with `--repro-link`'s arguments, as given (e.g.
//! `-lgsl -lgslcblas`, or `/path/libfoo.a`; with a `-I` for the library's headers when the
//! harness includes them by a path the compiler does not search, as the generated GSL
//! harnesses do: `-I/usr/include/gsl`, which cc takes anywhere on the line). numfuzz cannot
//! know them by itself: the target it replays links the library built with numfuzz-cc, which
//! is not what a maintainer has. Without them the line says [`PLACEHOLDER`] where they go, a
//! name no compiler takes for anything else (it fails on it as a missing file), and the
//! comment of the file says what to put there: a line that guessed would build against
//! whichever library happened to be installed, or fail with undefined references that hide
//! what is missing.

use super::results_text;
use crate::replay::DecodedField;
use crate::triage::references::oracle::Verdict;
use crate::triage::report::{Finding, Report, Reproducer};
use numfuzz_abi::signature::Signature;
use std::fmt::Write as _;
use std::path::Path;

/// numfuzz.h as numfuzz-cc ships it.
const NUMFUZZ_H: &str = include_str!("../../../../cc-wrapper/include/numfuzz.h");

/// What the bug's reproducer checks.
struct Check {
    /// The primary result judged against the reference, its reference and tolerance (a
    /// finite wrong value).
    reference: Option<(u32, String, f64)>,
}

fn c_string(text: &str) -> String {
    let escaped: String = text
        .chars()
        .map(|c| match c {
            '\\' => "\\\\".to_string(),
            '"' => "\\\"".to_string(),
            c if c.is_ascii_graphic() || c == ' ' => c.to_string(),
            c => format!("\\x{:02x}", c as u32 & 0xff),
        })
        .collect();
    format!("\"{escaped}\"")
}

/// A comment line safe inside `/* */`.
fn comment(text: &str) -> String {
    text.replace("*/", "* /")
}

fn shell_quote(path: &Path) -> String {
    let s = path.display().to_string();
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c)) {
        s
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// What the build line says where the plain library's link arguments go when `--repro-link`
/// did not give them.
pub const PLACEHOLDER: &str = "PLAIN_LIBRARY";

/// The build-and-run line of a reproducer: `link` (the plain library's link arguments, shell
/// words as the user wrote them) goes in as it is, [`PLACEHOLDER`] without it.
fn build_line(dir: &Path, id: &str, harness: Option<&Path>, link: Option<&str>) -> String {
    let harness = harness.map_or_else(|| "HARNESS.c".to_string(), shell_quote);
    let exe = dir.join(id);
    format!(
        "cc -I{} {harness} {} {} -lm -o {} && {}",
        shell_quote(dir),
        shell_quote(&dir.join(format!("{id}.c"))),
        link.unwrap_or(PLACEHOLDER),
        shell_quote(&exe),
        shell_quote(&exe)
    )
}

/// The C source of one bug's reproducer.
fn source(f: &Finding, signature: &Signature, input: &Embedded, build: &str) -> String {
    let check = Check {
        reference: f
            .reference
            .as_ref()
            .filter(|r| r.judged.verdict == Verdict::Wrong)
            .map(|r| (r.judged.index, r.judged.reference.clone(), r.judged.tolerance)),
    };
    let mut c = String::new();
    bug_comment(&mut c, f, signature, input);
    build_comment(&mut c, build, &check);
    c.push_str("#define NUMFUZZ_PLAIN_RUNTIME\n#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include \"numfuzz.h\"\n\n");
    input_data(&mut c, signature, &input.bytes);
    reference_data(&mut c, &check);
    c.push_str(MAIN);
    c
}

/// The input a reproducer embeds: the minimised one the report shows when triage minimised
/// the bug's input, else the campaign's.
struct Embedded {
    bytes: Vec<u8>,
    fields: Vec<DecodedField>,
    /// What it is and where it came from, for the comment.
    origin: String,
}

impl Embedded {
    fn of(f: &Finding, out_dir: &Path) -> std::io::Result<Embedded> {
        let original = out_dir.join(&f.input.rel);
        Ok(match &f.minimized {
            Some(m) => Embedded {
                bytes: std::fs::read(&m.path)?,
                fields: m.fields.clone(),
                origin: format!(
                    "the minimised input the report shows ({}); the campaign's original is {}",
                    m.path.display(),
                    original.display()
                ),
            },
            None => Embedded {
                bytes: f.input_bytes.clone(),
                fields: f.input.fields.clone(),
                origin: format!("the campaign's input {}", original.display()),
            },
        })
    }
}

/// The comment's first part: the bug, its input field by field and what numfuzz saw it return.
fn bug_comment(c: &mut String, f: &Finding, signature: &Signature, input: &Embedded) {
    let (expression, results) = match &f.minimized {
        Some(m) => (m.expression.clone(), &m.results),
        None => (f.example.expression(), &f.results),
    };
    let _ = writeln!(
        c,
        "/* numfuzz reproducer: {} at {} in {} [{}]",
        f.key.kind,
        f.site.location(),
        crate::replay::function_of(&f.example),
        f.id
    );
    let _ = writeln!(c, " *   {}", comment(&expression));
    let _ = writeln!(c, " * Input (signature {signature}), {}:", comment(&input.origin));
    for (k, field) in input.fields.iter().enumerate() {
        let _ = writeln!(
            c,
            " *   field {k} {}: {} = {}",
            field.ty,
            comment(&field.value),
            field.hex
        );
    }
    let reference = f.reference.as_ref().map_or(String::new(), |r| {
        format!(
            "; reference {} ({}, result {})",
            r.judged.reference,
            r.judged.verdict.name(),
            r.judged.index
        )
    });
    let _ = writeln!(
        c,
        " * numfuzz saw: returned {}{}.",
        comment(&results_text(results)),
        comment(&reference)
    );
}

/// The comment's second part: how to build it and what its exit status says.
fn build_comment(c: &mut String, build: &str, check: &Check) {
    let _ = writeln!(
        c,
        " * Build it with any C compiler against the library built without numfuzz-cc:"
    );
    let _ = writeln!(c, " *   {}", comment(build));
    if build.contains(PLACEHOLDER) {
        let _ = writeln!(
            c,
            " * where {PLACEHOLDER} stands for the plain library's link arguments (e.g. -lfoo, or\n * /path/libfoo.a; numfuzz triage --repro-link 'ARGS' puts them in the line)."
        );
    }
    let _ = writeln!(
        c,
        " * It exits 1 while the bug is there (a primary result is Inf or NaN{}, and the library\n * reports no error), 0 once it is fixed. */",
        if check.reference.is_some() {
            ", or off the reference"
        } else {
            ""
        }
    );
}

/// The input's bytes and where the signature's fields start in them (the header's plain mode
/// reads the fields at these offsets).
fn input_data(c: &mut String, signature: &Signature, bytes: &[u8]) {
    let offsets: Vec<String> = (0..signature.len())
        .map(|i| signature.range(i).start.to_string())
        .collect();
    let _ = writeln!(
        c,
        "const size_t numfuzz_plain_offsets[] = {{{}}};",
        if offsets.is_empty() {
            "0".into()
        } else {
            offsets.join(", ")
        }
    );
    let _ = writeln!(c, "const unsigned numfuzz_plain_fields = {};", signature.len());
    let hex: Vec<String> = bytes.iter().map(|b| format!("0x{b:02x}")).collect();
    let _ = writeln!(
        c,
        "static const uint8_t input[{}] = {{{}}};",
        bytes.len().max(1),
        hex.join(", ")
    );
    let _ = writeln!(c, "static const size_t input_size = {};", bytes.len());
}

/// What `main` judges the result against: the reference of a wrong finite value, or nothing.
fn reference_data(c: &mut String, check: &Check) {
    match &check.reference {
        Some((index, value, tolerance)) => {
            let _ = writeln!(
                c,
                "/* The reference of primary result {index}, and the relative error allowed. */\nstatic const int judged = {index};\nstatic const char *const reference = {};\nstatic const long double tolerance = {tolerance:e};",
                c_string(value)
            );
        }
        None => {
            c.push_str("static const int judged = -1;\nstatic const char *const reference = 0;\nstatic const long double tolerance = 0;\n");
        }
    }
}

/// The reproducer's `main`: runs the harness once and judges what it declared.
const MAIN: &str = r#"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  LLVMFuzzerTestOneInput(input, input_size);
  int bug = 0, primary = 0;
  for (unsigned k = 0; k < numfuzz_plain_count; k++) {
    const struct numfuzz_plain_result *r = &numfuzz_plain_results[k];
    if (r->name) {
      printf("%s = %.17Lg\n", r->name, r->value);
      continue;
    }
    printf("result %d = %.17Lg\n", primary, r->value);
    if (!isfinite(r->value))
      bug = 1;
    if (primary == judged && reference) {
      long double want = strtold(reference, 0);
      printf("reference %d = %s\n", primary, reference);
      if (isfinite(r->value) && fabsl(r->value - want) > tolerance * fabsl(want))
        bug = 1;
    }
    primary++;
  }
  if (numfuzz_plain_handled) {
    printf("the library reported an error\n");
    bug = 0;
  }
  printf("%s\n", bug ? "BUG: still there" : "fixed");
  return bug;
}
"#;

/// Writes the reproducer of every bug of `report` into `dir`, with numfuzz.h and
/// numfuzz_abi.h beside them; returns them by finding id. `link`: the plain library's link
/// arguments (`--repro-link`).
pub fn write(
    report: &Report,
    signature: &Signature,
    harness: Option<&Path>,
    link: Option<&str>,
    dir: &Path,
) -> std::io::Result<Vec<(String, Reproducer)>> {
    std::fs::create_dir_all(dir)?;
    let dir = std::fs::canonicalize(dir)?;
    std::fs::write(dir.join("numfuzz.h"), NUMFUZZ_H)?;
    std::fs::write(dir.join("numfuzz_abi.h"), numfuzz_abi::c_header::generate())?;
    let mut out = Vec::new();
    for f in report.bugs() {
        let input = Embedded::of(f, &report.out_dir)?;
        let build = build_line(&dir, &f.id, harness, link);
        let path = dir.join(format!("{}.c", f.id));
        std::fs::write(&path, source(f, signature, &input, &build))?;
        out.push((f.id.clone(), Reproducer { path, build }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_paths_are_quoted_for_c_and_the_shell() {
        assert_eq!(c_string("6.5e302"), "\"6.5e302\"");
        assert_eq!(c_string("a\"b\\"), "\"a\\\"b\\\\\"");
        assert_eq!(shell_quote(Path::new("/tmp/a b/x.c")), "'/tmp/a b/x.c'");
        assert_eq!(shell_quote(Path::new("/tmp/x-1.c")), "/tmp/x-1.c");
        let line = build_line(
            Path::new("/r"),
            "Overflow-a.c-1-2-fmul",
            Some(Path::new("/src/h.c")),
            None,
        );
        assert_eq!(
            line,
            "cc -I/r /src/h.c /r/Overflow-a.c-1-2-fmul.c PLAIN_LIBRARY -lm -o /r/Overflow-a.c-1-2-fmul && /r/Overflow-a.c-1-2-fmul"
        );
        assert!(build_line(Path::new("/r"), "x", None, None).contains(" HARNESS.c "));
        // --repro-link's arguments go in as they are, shell words and all.
        let line = build_line(
            Path::new("/r"),
            "x",
            Some(Path::new("/h.c")),
            Some("-L'/opt/my lib' -lgsl -lgslcblas"),
        );
        assert_eq!(
            line,
            "cc -I/r /h.c /r/x.c -L'/opt/my lib' -lgsl -lgslcblas -lm -o /r/x && /r/x"
        );
        assert_eq!(comment("a */ b"), "a * / b");
    }
}
