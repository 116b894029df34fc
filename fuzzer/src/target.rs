//! A target binary as numfuzz sees it from outside: whether numfuzz-cc built it, its input
//! signature (read from the ELF file, without running it) and its site table.

use numfuzz_abi::signature::Signature;
use numfuzz_abi::site::SiteTable;
use numfuzz_abi::{
    ABI_VERSION, DEFINED_SECTION, FUNCTION_SECTION, HARNESS_SECTION, RUNTIME_MARKER_PREFIX, RUNTIME_SECTION,
    SHADOW_SECTION, SIGNATURE_SECTION, TAINT_SECTION,
};
use object::{Object, ObjectSection, ObjectSymbol};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, thiserror::Error)]
pub enum TargetError {
    #[error("target `{0}` does not exist (check the path, or rebuild it)")]
    Missing(PathBuf),
    #[error("cannot read target `{0}`: {1}")]
    Read(PathBuf, std::io::Error),
    #[error("`{0}` is not an ELF executable: {1}")]
    NotElf(PathBuf, object::Error),
    #[error("`{0}` was not built with numfuzz-cc (no numfuzz runtime inside); rebuild it with CC=numfuzz-cc")]
    NotNumfuzz(PathBuf),
    #[error("`{path}` was built by a numfuzz-cc of ABI version {found}, this numfuzz speaks version {ABI_VERSION}; rebuild the target")]
    AbiMismatch { path: PathBuf, found: u32 },
    #[error("`{0}` declares several signatures ({1}); keep one NUMFUZZ_SIGNATURE")]
    ManySignatures(PathBuf, String),
    #[error("`{0}` has an invalid NUMFUZZ_SIGNATURE: {1}; fix the declaration in the harness and rebuild the target")]
    BadSignature(PathBuf, numfuzz_abi::signature::SignatureError),
    #[error("running `{0}` for its site table failed: {1}")]
    SiteTable(PathBuf, String),
}

/// What the ELF file says about a target.
#[derive(Clone, Debug)]
pub struct Target {
    pub path: PathBuf,
    /// ABI version of the numfuzz runtime linked in, if any.
    pub runtime_abi: Option<u32>,
    /// The declared input signature.
    pub signature: Option<Signature>,
    /// It defines `LLVMFuzzerTestOneInput` (a libFuzzer-style harness, so the runtime's
    /// `main` can run the in-process engine).
    pub has_harness: bool,
    /// The function under test it names (`NUMFUZZ_FUNCTION`).
    pub function: Option<String>,
    /// The function is declared defined inside its declared domains (`NUMFUZZ_DEFINED_IN_DOMAIN`).
    pub defined_in_domain: bool,
    /// A taint build (`NUMFUZZ_CC_TAINT=1 numfuzz-cc`): replay only.
    pub is_taint: bool,
    /// A shadow build (`NUMFUZZ_CC_SHADOW=1 numfuzz-cc`): replay only.
    pub is_shadow: bool,
    /// A shadow build whose shadows are MPFR values (`NUMFUZZ_CC_SHADOW=mpfr`): every unit
    /// compiled so (the pass marks its section with 2, an x87 unit with 1).
    pub is_mpfr_shadow: bool,
    /// The source file that defines the harness, as the compiler saw it (absolute).
    pub harness_source: Option<PathBuf>,
    /// A coverage build (`NUMFUZZ_CC_COVERAGE=1 numfuzz-cc`, llvm-cov's mapping inside): no
    /// edges and no checkers, for `numfuzz cov` only.
    pub is_coverage: bool,
    /// Its runtime serves replay requests (numfuzz-abi's `serve`; older runtimes do not).
    pub serves_replays: bool,
}

/// The file carries llvm-cov's coverage mapping.
pub fn has_coverage_mapping(file: &object::File<'_>) -> bool {
    file.section_by_name("__llvm_covmap").is_some() || file.section_by_name("__llvm_covfun").is_some()
}

fn section_strings(file: &object::File<'_>, name: &str) -> Vec<String> {
    let Some(section) = file.section_by_name(name) else {
        return Vec::new();
    };
    let Ok(data) = section.data() else { return Vec::new() };
    let mut out: Vec<String> = Vec::new();
    for part in data.split(|&b| b == 0) {
        let s = String::from_utf8_lossy(part).trim().to_string();
        if !s.is_empty() && !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

impl Target {
    /// Reads `path` without running it.
    pub fn inspect(path: &Path) -> Result<Target, TargetError> {
        if !path.exists() {
            return Err(TargetError::Missing(path.to_path_buf()));
        }
        let data = std::fs::read(path).map_err(|e| TargetError::Read(path.to_path_buf(), e))?;
        let file = object::File::parse(&*data).map_err(|e| TargetError::NotElf(path.to_path_buf(), e))?;
        let runtime_marks = section_strings(&file, RUNTIME_SECTION);
        let serves_replays = runtime_marks.iter().any(|m| m == numfuzz_abi::serve::MARKER);
        let runtime_abi = runtime_marks
            .iter()
            .find_map(|m| m.strip_prefix(RUNTIME_MARKER_PREFIX).and_then(|v| v.parse().ok()));
        let sigs = section_strings(&file, SIGNATURE_SECTION);
        let signature = match sigs.as_slice() {
            [] => None,
            [one] => Some(Signature::parse(one).map_err(|e| TargetError::BadSignature(path.to_path_buf(), e))?),
            many => return Err(TargetError::ManySignatures(path.to_path_buf(), many.join(" | "))),
        };
        let is_taint = file.section_by_name(TAINT_SECTION).is_some();
        let shadow_marks = file
            .section_by_name(SHADOW_SECTION)
            .and_then(|s| s.data().ok().map(<[u8]>::to_vec));
        let is_shadow = shadow_marks.is_some();
        let is_mpfr_shadow = shadow_marks.is_some_and(|m| !m.is_empty() && m.iter().all(|&b| b == 2));
        // A taint build's definitions carry DataFlowSanitizer's `.dfsan` suffix.
        let has_harness = file.symbols().chain(file.dynamic_symbols()).any(|s| {
            s.is_definition()
                && matches!(
                    s.name(),
                    Ok("LLVMFuzzerTestOneInput") | Ok("LLVMFuzzerTestOneInput.dfsan")
                )
        });
        Ok(Target {
            path: path.to_path_buf(),
            runtime_abi,
            signature,
            has_harness,
            function: section_strings(&file, FUNCTION_SECTION).into_iter().next(),
            defined_in_domain: file.section_by_name(DEFINED_SECTION).is_some(),
            harness_source: section_strings(&file, HARNESS_SECTION)
                .into_iter()
                .next()
                .map(PathBuf::from),
            is_taint,
            is_shadow,
            is_mpfr_shadow,
            is_coverage: has_coverage_mapping(&file),
            serves_replays,
        })
    }

    /// Like [`Target::inspect`], but the target must carry a numfuzz runtime of our ABI.
    pub fn inspect_numfuzz(path: &Path) -> Result<Target, TargetError> {
        let t = Target::inspect(path)?;
        match t.runtime_abi {
            None => Err(TargetError::NotNumfuzz(path.to_path_buf())),
            Some(v) if v != ABI_VERSION => Err(TargetError::AbiMismatch {
                path: path.to_path_buf(),
                found: v,
            }),
            Some(_) => Ok(t),
        }
    }

    pub fn is_numfuzz(&self) -> bool {
        self.runtime_abi == Some(ABI_VERSION)
    }

    /// The name the reference oracle is asked about: `NUMFUZZ_FUNCTION`, else the file name
    /// (without a `.taint`, `.shadow` or `.mpfr` suffix).
    pub fn function_name(&self) -> String {
        self.function.clone().unwrap_or_else(|| {
            let name = self
                .path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            [".taint", ".shadow", ".mpfr"]
                .iter()
                .find_map(|s| name.strip_suffix(s))
                .map_or_else(|| name.clone(), str::to_string)
        })
    }

    /// Runs the target with `NUMFUZZ_SITES` to get its site table.
    pub fn site_table(&self) -> Result<SiteTable, TargetError> {
        let err = |m: String| TargetError::SiteTable(self.path.clone(), m);
        let dir = tempfile::tempdir().map_err(|e| err(e.to_string()))?;
        let out_path = dir.path().join("sites.json");
        let out = Command::new(&self.path)
            .env(numfuzz_abi::env::SITES, &out_path)
            .output()
            .map_err(|e| err(e.to_string()))?;
        if !out.status.success() {
            return Err(err(format!(
                "exit status {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let text = std::fs::read_to_string(&out_path).map_err(|e| {
            err(format!(
                "no site table written ({e}); does the program have its own main()?"
            ))
        })?;
        serde_json::from_str(&text).map_err(|e| err(format!("malformed site table: {e}")))
    }
}
