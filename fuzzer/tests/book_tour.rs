//! The five-minute tour of README.md and the book's getting-started chapter, run as a user runs
//! it: `numfuzz harness` on examples/mathlib with its conventions and build script, a short
//! campaign on `ml_exp_ratio`, and its triage against the example's oracle, which prints the
//! bug list. The commands are the ones the two pages show, word for word (checked first), run
//! in a copy of examples/mathlib with `numfuzz` from the release build.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use testkit::{both, procs, Tools};

/// The tour's commands, as README.md and docs/src/getting-started.md show them.
const TOUR: [&str; 4] = [
    "cd examples/mathlib",
    "numfuzz harness mathlib.h -o h --conventions conventions.toml --build ./build.sh",
    "numfuzz run -o out -V 10 -- h/bin/ml_exp_ratio",
    "numfuzz triage out --oracle ./oracle.py",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `numfuzz ARGS` in `dir`, as from a shell (`CI` set, as on a CI machine: no screen).
fn numfuzz_in(dir: &Path, command: &str) -> Output {
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[0], "numfuzz", "{command}");
    procs::output(
        Command::new(Tools::get().numfuzz())
            .args(&words[1..])
            .current_dir(dir)
            .env("CI", "1"),
        &[],
    )
}

#[test]
fn the_pages_show_the_tour_this_test_runs() {
    for page in ["README.md", "docs/src/getting-started.md"] {
        let text = std::fs::read_to_string(repo().join(page)).unwrap();
        // The commands in order, in one shell block.
        let block = text
            .split("```sh\n")
            .skip(1)
            .map(|b| b.split("```").next().unwrap_or(""))
            .find(|b| b.contains(TOUR[1]))
            .unwrap_or_else(|| panic!("{page} has no sh block with `{}`", TOUR[1]));
        let commands: Vec<&str> = block
            .lines()
            .map(|l| l.split(" #").next().unwrap_or("").trim_end())
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        assert_eq!(commands, TOUR, "{page}'s tour differs from the commands this test runs");
    }
}

#[test]
fn the_tour_harnesses_fuzzes_and_triages_mathlib_to_its_bug_list() {
    let work = tempfile::Builder::new().prefix("numfuzz-tour-").tempdir().unwrap();
    let copy = work.path().join("examples/mathlib");
    std::fs::create_dir_all(&copy).unwrap();
    for entry in std::fs::read_dir(repo().join("examples/mathlib")).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
        }
    }
    let dir = work.path().join(TOUR[0].strip_prefix("cd ").unwrap());

    let harness = numfuzz_in(&dir, TOUR[1]);
    let text = both(&harness);
    assert!(harness.status.success(), "{text}");
    assert!(
        text.contains("harnessed 10 functions of 13 in 1 headers; skipped 3"),
        "{text}"
    );
    assert!(text.contains("built 40 of 40 harness binaries"), "{text}");

    let run = numfuzz_in(&dir, TOUR[2]);
    assert!(run.status.success(), "{}", both(&run));

    let triage = numfuzz_in(&dir, TOUR[3]);
    let text = both(&triage);
    assert!(triage.status.success(), "{text}");
    // The bug list: `2 * exp(x)` overflows where the true value is finite (x in 709.78..~721),
    // among the others the campaign finds in 10 s (a division by x * x = 0, ...).
    assert!(text.contains("\nBugs ("), "{text}");
    assert!(text.contains("Overflow at mathlib.c:10:"), "{text}");
    assert!(text.contains(" in ml_exp_ratio  ["), "{text}");
    assert!(text.contains("(wrong, result 0)"), "{text}");
    procs::end_all_under(work.path());
}
