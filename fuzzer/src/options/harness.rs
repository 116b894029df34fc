//! `numfuzz harness`: harnesses from a library's headers.

use std::path::PathBuf;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example: numfuzz harness examples/mathlib/mathlib.h -o mathlib-harnesses \\\n           --conventions examples/mathlib/conventions.toml --build examples/mathlib/build.sh\n\n\
The build command runs four times (plain, NUMFUZZ_CC_TAINT=1, NUMFUZZ_CC_SHADOW=1, NUMFUZZ_CC_SHADOW=mpfr) with CC/CXX set to\n\
numfuzz-cc/numfuzz-c++ and must put its static library into $NUMFUZZ_BUILD_DIR (the book: docs/src/guides/generating.md)."
)]
pub struct HarnessArgs {
    /// The library's headers; functions declared in them (not in the headers they include) get harnesses.
    #[arg(required = true, value_name = "HEADER")]
    pub headers: Vec<PathBuf>,
    /// Output directory: src/F.c, manifest.json, skipped.md (and bin/, build/ with --build).
    #[arg(short = 'o', long = "output", required_unless_present = "list", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print each function's parameters as the conventions name them (an unnamed one is argK),
    /// their types and what the harness would do with each; write nothing.
    #[arg(long, conflicts_with_all = ["build", "libs"])]
    pub list: bool,
    /// Only functions whose name this regular expression matches.
    #[arg(long, value_name = "REGEX", value_parser = regex)]
    pub include: Option<regex::Regex>,
    /// Leave out functions whose name this regular expression matches.
    #[arg(long, value_name = "REGEX", value_parser = regex)]
    pub exclude: Option<regex::Regex>,
    /// The library's conventions (TOML: integer returns, struct values, skips, oracle names,
    /// domains; see docs/src/guides/generating.md). A key that names no function or parameter
    /// of the headers is an error.
    #[arg(long, value_name = "FILE")]
    pub conventions: Option<PathBuf>,
    /// Build the library with this shell command four times and link every harness against it.
    #[arg(long, value_name = "COMMAND")]
    pub build: Option<String>,
    /// What a harness links (with --build; may be repeated; `$NUMFUZZ_BUILD_DIR` is the variant's
    /// build directory; default: every *.a the build command put there).
    #[arg(long = "lib", value_name = "LINKARGS", allow_hyphen_values = true)]
    pub libs: Vec<String>,
    /// The clang that reads the headers.
    #[arg(long, default_value = "clang-19")]
    pub clang: String,
    /// Arguments for clang when it reads the headers and compiles the harnesses (e.g. `-I include -DNDEBUG`).
    #[arg(last = true, value_name = "CLANG ARGS")]
    pub clang_args: Vec<String>,
}

fn regex(s: &str) -> Result<regex::Regex, String> {
    regex::Regex::new(s).map_err(|e| {
        format!(
            "not a regular expression: {}",
            e.to_string().lines().last().unwrap_or("")
        )
    })
}
