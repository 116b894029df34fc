//! The build-time check of a harness's `NUMFUZZ_SIGNATURE`.
//!
//! Decision: the wrapper does not parse C. After clang wrote an output named with `-o` (an
//! object or an executable), the wrapper reads that file's signature section with the
//! `object` crate and parses every string in it with the same `numfuzz-abi` parser the fuzzer
//! uses, so the build refuses exactly what `numfuzz run` would. A refused output is deleted, so
//! `make` cannot pick up a target that fails only later. Outputs that are not ELF (assembly,
//! LLVM bitcode under `-flto`) are left to the link, which is checked the same way; a compile
//! of several files without `-o` is too (clang names its outputs).

use numfuzz_abi::signature::{Signature, SignatureError};
use numfuzz_abi::{HARNESS_SECTION, SIGNATURE_SECTION};
use object::{Object, ObjectSection};
use std::path::{Path, PathBuf};

/// A signature clang compiled into an output that the fuzzer would refuse.
#[derive(Debug)]
pub struct BadSignature {
    /// The harness's source file when the output names it, else the output.
    pub source: PathBuf,
    pub error: SignatureError,
}

/// The NUL-separated strings of one section (none when it is absent).
fn section_strings(file: &object::File<'_>, name: &str) -> Vec<String> {
    let Some(data) = file.section_by_name(name).and_then(|s| s.data().ok()) else {
        return Vec::new();
    };
    data.split(|&b| b == 0)
        .map(|part| String::from_utf8_lossy(part).trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Checks the signatures `output` carries; `Ok` when it has none, is no ELF file or is gone.
pub fn check(output: &Path) -> Result<(), BadSignature> {
    let Ok(data) = std::fs::read(output) else { return Ok(()) };
    let Ok(file) = object::File::parse(&*data) else {
        return Ok(());
    };
    for spec in section_strings(&file, SIGNATURE_SECTION) {
        if let Err(error) = Signature::parse(&spec) {
            let source = section_strings(&file, HARNESS_SECTION)
                .into_iter()
                .next()
                .map_or_else(|| output.to_path_buf(), PathBuf::from);
            return Err(BadSignature { source, error });
        }
    }
    Ok(())
}

/// The file `-o FILE` or `-oFILE` names, if any.
pub fn output_of(args: &[String]) -> Option<PathBuf> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-o" {
            return it.next().map(PathBuf::from);
        }
        if let Some(rest) = a.strip_prefix("-o").filter(|r| !r.is_empty()) {
            return Some(PathBuf::from(rest));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_output_name() {
        let args = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(output_of(&args("-O2 a.c -o prog -lm")), Some(PathBuf::from("prog")));
        assert_eq!(output_of(&args("-c a.c -oa.o")), Some(PathBuf::from("a.o")));
        assert_eq!(output_of(&args("-c a.c")), None);
    }
}
