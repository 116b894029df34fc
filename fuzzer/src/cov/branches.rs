//! Branch coverage from `llvm-cov export` JSON, counted as `llvm-cov report` does.
//!
//! Every branch region (each leaf condition of `&&`/`||`, `if`, loops, `?:`, each `case` and
//! `default` label, and the implicit default of a switch without one) has two outcomes, taken
//! and not taken. A function's total is 2 × its branch regions; an outcome is covered when its
//! count is non-zero. A file's numbers are the file summary `llvm-cov report` prints.

use super::CovError;
use serde::Serialize;
use serde_json::Value;

/// Harness entry points: never the code under test.
const HARNESS_FUNCTIONS: &[&str] = &["LLVMFuzzerTestOneInput", "LLVMFuzzerInitialize"];

/// One branch region of a function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Branch {
    pub file: String,
    pub line: u64,
    pub column: u64,
    pub true_count: u64,
    pub false_count: u64,
}

/// A function of the coverage build.
#[derive(Clone, Debug)]
pub struct Function {
    /// As llvm-cov names it: `name`, or `file.c:name` for a static function.
    pub name: String,
    /// The file that defines it.
    pub file: String,
    /// How often it ran.
    pub count: u64,
    pub branches: Vec<Branch>,
}

/// Covered and total branch outcomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Outcomes {
    pub covered: u64,
    pub total: u64,
}

impl Outcomes {
    pub fn percent(&self) -> Option<f64> {
        (self.total > 0).then(|| 100.0 * self.covered as f64 / self.total as f64)
    }
}

/// An outcome no input produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MissedOutcome {
    pub file: String,
    pub line: u64,
    pub column: u64,
    /// `true`: the condition never held; `false`: it always held.
    pub outcome: bool,
}

impl Function {
    pub fn outcomes(&self) -> Outcomes {
        let covered = self
            .branches
            .iter()
            .map(|b| u64::from(b.true_count > 0) + u64::from(b.false_count > 0))
            .sum();
        Outcomes {
            covered,
            total: 2 * self.branches.len() as u64,
        }
    }

    pub fn missed(&self) -> Vec<MissedOutcome> {
        let mut out = Vec::new();
        for b in &self.branches {
            for (outcome, count) in [(true, b.true_count), (false, b.false_count)] {
                if count == 0 {
                    out.push(MissedOutcome {
                        file: b.file.clone(),
                        line: b.line,
                        column: b.column,
                        outcome,
                    });
                }
            }
        }
        out
    }

    /// The name without the `file.c:` prefix of static functions.
    pub fn plain_name(&self) -> &str {
        self.name.rsplit_once(':').map_or(&self.name, |(_, n)| n)
    }
}

/// A file of the coverage build with its `llvm-cov report` branch summary.
#[derive(Clone, Debug)]
pub struct File {
    pub name: String,
    pub outcomes: Outcomes,
}

/// The parts of an export this module uses.
#[derive(Clone, Debug, Default)]
pub struct CoverageData {
    pub functions: Vec<Function>,
    pub files: Vec<File>,
}

fn num(v: &Value) -> u64 {
    v.as_u64().or_else(|| v.as_f64().map(|f| f as u64)).unwrap_or(0)
}

impl CoverageData {
    pub fn from_export(json: &Value) -> Result<CoverageData, CovError> {
        let data = json
            .get("data")
            .and_then(|d| d.get(0))
            .ok_or_else(|| CovError::Export("no `data[0]` in the export".into()))?;
        let mut functions = Vec::new();
        for f in data.get("functions").and_then(Value::as_array).into_iter().flatten() {
            let filenames: Vec<String> = f
                .get("filenames")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|s| s.as_str().map(String::from)).collect())
                .unwrap_or_default();
            let mut branches = Vec::new();
            for b in f.get("branches").and_then(Value::as_array).into_iter().flatten() {
                // [line, col, end line, end col, true count, false count, file id, expanded file id, kind]
                let a = b
                    .as_array()
                    .filter(|a| a.len() >= 7)
                    .ok_or_else(|| CovError::Export(format!("branch entry {b}")))?;
                let file_id = num(&a[6]) as usize;
                branches.push(Branch {
                    file: filenames.get(file_id).cloned().unwrap_or_default(),
                    line: num(&a[0]),
                    column: num(&a[1]),
                    true_count: num(&a[4]),
                    false_count: num(&a[5]),
                });
            }
            functions.push(Function {
                name: f.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                file: filenames.first().cloned().unwrap_or_default(),
                count: f.get("count").map(num).unwrap_or(0),
                branches,
            });
        }
        let mut files = Vec::new();
        for f in data.get("files").and_then(Value::as_array).into_iter().flatten() {
            let summary = &f["summary"]["branches"];
            files.push(File {
                name: f
                    .get("filename")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                outcomes: Outcomes {
                    covered: num(&summary["covered"]),
                    total: num(&summary["count"]),
                },
            });
        }
        Ok(CoverageData { functions, files })
    }

    /// The function named `name`: exactly, or a static function `file.c:name`.
    pub fn function(&self, name: &str) -> Result<&Function, CovError> {
        if let Some(f) = self.functions.iter().find(|f| f.name == name) {
            return Ok(f);
        }
        let statics: Vec<&Function> = self.functions.iter().filter(|f| f.plain_name() == name).collect();
        match statics.as_slice() {
            [one] => Ok(one),
            [] => Err(CovError::NoFunction(name.to_string())),
            many => Err(CovError::AmbiguousFunction(
                name.to_string(),
                many.iter().map(|f| f.name.clone()).collect::<Vec<_>>().join(", "),
            )),
        }
    }

    /// The file `path` names: the same path, or the only file whose path ends with it
    /// (`e_acos.c`, `math/e_acos.c`).
    pub fn file(&self, path: &str) -> Result<&File, CovError> {
        if let Some(f) = self.files.iter().find(|f| f.name == path) {
            return Ok(f);
        }
        let wanted: Vec<&str> = path.trim_start_matches("./").split('/').collect();
        let matches: Vec<&File> = self
            .files
            .iter()
            .filter(|f| {
                let parts: Vec<&str> = f.name.split('/').collect();
                parts.len() >= wanted.len() && parts[parts.len() - wanted.len()..] == wanted[..]
            })
            .collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => Err(CovError::NoFile(path.to_string())),
            many => Err(CovError::AmbiguousFile(
                path.to_string(),
                many.iter().map(|f| f.name.clone()).collect::<Vec<_>>().join(", "),
            )),
        }
    }

    /// The function under test of a libFuzzer-style harness: the one function outside the
    /// harness's own translation unit that ran exactly as often as `LLVMFuzzerTestOneInput`
    /// (every execution called it once). Helpers the harness calls conditionally or in loops
    /// run a different number of times; a tie (a wrapper that always calls its worker) or no
    /// candidate is an error that asks for `--function`.
    pub fn function_under_test(&self) -> Result<&Function, CovError> {
        let entry = self
            .functions
            .iter()
            .find(|f| f.name == HARNESS_FUNCTIONS[0])
            .ok_or(CovError::NoHarness)?;
        if entry.count == 0 {
            return Err(CovError::NothingRan);
        }
        // Static functions of the harness's translation unit (e.g. numfuzz.h's readers) are
        // named after it: `acos.c:nf_f64`.
        let unit = entry.file.rsplit('/').next().unwrap_or_default();
        let static_prefix = format!("{unit}:");
        let candidates: Vec<&Function> = self
            .functions
            .iter()
            .filter(|f| {
                !HARNESS_FUNCTIONS.contains(&f.name.as_str())
                    && f.file != entry.file
                    && !f.name.starts_with(&static_prefix)
                    && f.count == entry.count
            })
            .collect();
        match candidates.as_slice() {
            [one] => Ok(one),
            [] => Err(CovError::NoFunctionUnderTest),
            many => Err(CovError::AmbiguousFunctionUnderTest(
                many.iter().map(|f| f.name.clone()).collect::<Vec<_>>().join(", "),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn export() -> Value {
        json!({"data": [{
            "functions": [
                {"name": "LLVMFuzzerTestOneInput", "count": 5, "filenames": ["/h/acos.c", "/h/fdlibm_harness.h"], "branches": []},
                {"name": "acos.c:nf_f64", "count": 5, "filenames": ["/inc/numfuzz.h"],
                 "branches": [[50, 3, 50, 9, 5, 0, 0, 0, 4]]},
                {"name": "__ieee754_acos", "count": 5, "filenames": ["/nl/math/e_acos.c", "/nl/common/fdlibm.h"],
                 "branches": [[70, 6, 70, 20, 2, 3, 0, 0, 4], [71, 10, 71, 15, 0, 2, 0, 0, 4], [90, 1, 90, 5, 1, 0, 1, 0, 4]]},
                {"name": "__ieee754_sqrt", "count": 2, "filenames": ["/nl/math/e_sqrt.c"], "branches": [[10, 1, 10, 2, 0, 0, 0, 0, 4]]},
                {"name": "e_j0.c:pzero", "count": 0, "filenames": ["/nl/math/e_j0.c"], "branches": []}
            ],
            "files": [
                {"filename": "/nl/math/e_acos.c", "summary": {"branches": {"count": 6, "covered": 4}}},
                {"filename": "/nl/math/e_sqrt.c", "summary": {"branches": {"count": 2, "covered": 0}}},
                {"filename": "/other/math/e_sqrt.c", "summary": {"branches": {"count": 2, "covered": 1}}}
            ]
        }]})
    }

    #[test]
    fn counts_two_outcomes_per_region() {
        let d = CoverageData::from_export(&export()).unwrap();
        let acos = d.function("__ieee754_acos").unwrap();
        assert_eq!(acos.outcomes(), Outcomes { covered: 4, total: 6 });
        assert_eq!(acos.outcomes().percent().map(|p| (p * 10.0).round()), Some(667.0));
        let missed = acos.missed();
        assert_eq!(missed.len(), 2);
        assert_eq!(
            missed[0],
            MissedOutcome {
                file: "/nl/math/e_acos.c".into(),
                line: 71,
                column: 10,
                outcome: true
            }
        );
        // A branch inside a macro expansion belongs to the expansion's file.
        assert_eq!(missed[1].file, "/nl/common/fdlibm.h");
        assert!(!missed[1].outcome);
    }

    #[test]
    fn finds_functions_and_files_by_name() {
        let d = CoverageData::from_export(&export()).unwrap();
        assert_eq!(d.function("pzero").unwrap().name, "e_j0.c:pzero");
        assert!(matches!(d.function("fdlibm_sin"), Err(CovError::NoFunction(_))));
        assert_eq!(d.file("e_acos.c").unwrap().outcomes, Outcomes { covered: 4, total: 6 });
        assert_eq!(d.file("nl/math/e_sqrt.c").unwrap().outcomes.covered, 0);
        assert!(matches!(d.file("e_sqrt.c"), Err(CovError::AmbiguousFile(..))));
        assert!(matches!(d.file("qcos.c"), Err(CovError::NoFile(_))));
    }

    #[test]
    fn infers_the_function_the_harness_calls_every_time() {
        let d = CoverageData::from_export(&export()).unwrap();
        assert_eq!(d.function_under_test().unwrap().name, "__ieee754_acos");
        let mut tie = export();
        tie["data"][0]["functions"][3]["count"] = json!(5);
        let d = CoverageData::from_export(&tie).unwrap();
        assert!(matches!(
            d.function_under_test(),
            Err(CovError::AmbiguousFunctionUnderTest(_))
        ));
        let mut idle = export();
        idle["data"][0]["functions"][0]["count"] = json!(0);
        let d = CoverageData::from_export(&idle).unwrap();
        assert!(matches!(d.function_under_test(), Err(CovError::NothingRan)));
    }
}
