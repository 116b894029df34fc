//! The conventions file (TOML): what a prototype alone does not say about a library — what
//! its integer returns mean, which struct field is the value, which functions to leave out,
//! the oracle's names and the input domains. Every key is checked: a misspelt one is an error.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// A key as written, with where: the check of what the keys name reports its line.
pub type Key = Spanned<String>;

/// Default bound on integer arguments: orders and counts beyond it make recurrences run for
/// seconds (targets/gsl/conventions.toml gives GSL's measurements) and say little about
/// floating point.
pub const DEFAULT_INT_BOUND: u64 = 10000;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conventions {
    #[serde(default)]
    pub defaults: Defaults,
    #[serde(default, rename = "struct")]
    pub structs: BTreeMap<String, StructConvention>,
    #[serde(default, rename = "function")]
    pub functions: BTreeMap<Key, FunctionConvention>,
    #[serde(default, rename = "parameter")]
    pub parameters: BTreeMap<Key, ParameterConvention>,
    /// Where the text came from, to locate a key: `conventions file `PATH`` (empty when parsed
    /// from a string).
    #[serde(skip)]
    origin: String,
    /// The byte offset of every newline of the text.
    #[serde(skip)]
    newlines: Vec<usize>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Defaults {
    pub int_return: IntReturn,
    pub int_bound: u64,
    /// Headers every harness includes before the named ones (e.g. the library's error API).
    pub includes: Vec<String>,
    /// C statements run once before the first input (e.g. switching off an aborting handler).
    pub init: Option<String>,
    /// The file also describes headers not given to this run (one file for several runs over
    /// different headers): a `[function]` or `[parameter]` table naming nothing in these is a
    /// warning, not an error.
    pub other_headers: bool,
    /// The library's error-report hook, which it calls with each error it finds (`gsl_error`;
    /// comma-separated for several). `--build` builds the library with it named to numfuzz-cc
    /// (`NUMFUZZ_CC_ERROR_HOOK`), so that triage roots a result returned as a success after a
    /// report at the dropped report.
    pub error_hook: Option<String>,
    /// Every function is defined wherever its parameters lie inside their declared domains:
    /// the harnesses say `NUMFUZZ_DEFINED_IN_DOMAIN()`, and triage calls a NaN result there
    /// wrong (a bug) without an oracle. A `[function]` table may say otherwise for its function.
    pub defined_in_domain: bool,
}

impl Default for Defaults {
    fn default() -> Defaults {
        Defaults {
            int_return: IntReturn::Value,
            int_bound: DEFAULT_INT_BOUND,
            includes: Vec::new(),
            init: None,
            other_headers: false,
            error_hook: None,
            defined_in_domain: false,
        }
    }
}

/// What an integer return value means.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum IntReturn {
    /// Non-zero: the library reported an error (the harness calls NUMFUZZ_HANDLED()).
    Status,
    /// A value: declared as the named result "return" (converted to double).
    #[default]
    Value,
}

impl IntReturn {
    pub fn name(self) -> &'static str {
        match self {
            IntReturn::Status => "status",
            IntReturn::Value => "value",
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StructConvention {
    /// The field that is the value (a primary result); the other fields are named results.
    pub primary: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FunctionConvention {
    /// Leave the function out; the text is the reason listed.
    pub skip: Option<String>,
    pub int_return: Option<IntReturn>,
    pub int_bound: Option<u64>,
    /// The name the reference oracle knows the function by.
    pub oracle: Option<String>,
    /// Defined wherever its parameters lie inside their declared domains (default:
    /// `defaults.defined_in_domain`); `false` for a function with parameter combinations its
    /// domains cannot exclude (a flat distribution's a >= b).
    pub defined_in_domain: Option<bool>,
    /// Declared domain per parameter name, e.g. `{ x = "[0,inf]" }`.
    #[serde(default)]
    pub domain: BTreeMap<Key, String>,
    /// Role per pointer parameter name.
    #[serde(default)]
    pub role: BTreeMap<Key, Role>,
    /// Kind per output (a parameter's name, or `return`), e.g. `{ sgn = "named" }`.
    #[serde(default)]
    pub result: BTreeMap<Key, ResultKind>,
}

/// Defaults for every parameter of this name, in every function.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParameterConvention {
    pub domain: Option<String>,
    pub role: Option<Role>,
    pub result: Option<ResultKind>,
}

/// Whether an output is judged. Every floating-point output is a primary result unless the
/// conventions say `named`: a qualifier of another output (a sign, an exponent, an error
/// estimate) whose non-finite value would not be a wrong answer of the function.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ResultKind {
    /// Judged by triage (`NUMFUZZ_RESULT`).
    Primary,
    /// Reported, never judged (`NUMFUZZ_RESULT_NAMED`).
    Named,
}

/// What a pointer parameter is for.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Data the function reads (an array): no scalar harness.
    Input,
    /// Written by the function: a result (the default for a non-const pointer to a float or
    /// to a struct of numbers; an integer pointer only when declared so).
    Output,
    /// Read and written: a fuzzed input passed by address, and a result after the call.
    Inout,
}

impl Conventions {
    /// Reads `path`; any error is one line naming the file (and line, where toml gives one).
    pub fn load(path: &Path) -> anyhow::Result<Conventions> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("cannot read conventions file `{}`: {e}", path.display()))?;
        let origin = format!("conventions file `{}`", path.display());
        let mut conv = Conventions::parse(&text).map_err(|e| anyhow::anyhow!("{origin}{e}"))?;
        conv.origin = origin;
        Ok(conv)
    }

    /// Parses the TOML text; the error starts with `:LINE: ` when toml locates it.
    pub fn parse(text: &str) -> Result<Conventions, String> {
        let mut conv: Conventions = toml::from_str(text).map_err(|e| {
            let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
            match e.span() {
                Some(span) => format!(":{}: {message}", line_of(text, span.start)),
                None => format!(": {message}"),
            }
        })?;
        conv.newlines = text.match_indices('\n').map(|(i, _)| i).collect();
        Ok(conv)
    }

    /// `MESSAGE` located at `key`: `conventions file `PATH`:LINE: MESSAGE` (`:LINE: MESSAGE`
    /// when parsed from a string), as the parse errors are.
    pub fn located(&self, key: &Key, message: &str) -> String {
        let line = 1 + self.newlines.partition_point(|&n| n < key.span().start);
        format!("{}:{line}: {message}", self.origin)
    }

    pub fn function(&self, name: &str) -> Option<&FunctionConvention> {
        self.functions.get(name)
    }

    pub fn int_return(&self, function: &str) -> IntReturn {
        self.function(function)
            .and_then(|f| f.int_return)
            .unwrap_or(self.defaults.int_return)
    }

    pub fn defined_in_domain(&self, function: &str) -> bool {
        self.function(function)
            .and_then(|f| f.defined_in_domain)
            .unwrap_or(self.defaults.defined_in_domain)
    }

    pub fn int_bound(&self, function: &str) -> u64 {
        self.function(function)
            .and_then(|f| f.int_bound)
            .unwrap_or(self.defaults.int_bound)
    }

    /// A parameter's declared domain: the function's, else the parameter name's.
    pub fn domain(&self, function: &str, param: &str) -> Option<&str> {
        self.function(function)
            .and_then(|f| f.domain.get(param))
            .or_else(|| self.parameters.get(param).and_then(|p| p.domain.as_ref()))
            .map(String::as_str)
    }

    /// A pointer parameter's declared role: the function's, else the parameter name's.
    pub fn role(&self, function: &str, param: &str) -> Option<Role> {
        self.function(function)
            .and_then(|f| f.role.get(param).copied())
            .or_else(|| self.parameters.get(param).and_then(|p| p.role))
    }

    /// An output's declared kind (`param` is a parameter's name or `return`): the
    /// function's, else the parameter name's.
    pub fn result_kind(&self, function: &str, param: &str) -> Option<ResultKind> {
        self.function(function)
            .and_then(|f| f.result.get(param).copied())
            .or_else(|| self.parameters.get(param).and_then(|p| p.result))
    }

    pub fn struct_primary(&self, struct_name: &str) -> Option<&str> {
        self.structs.get(struct_name).and_then(|s| s.primary.as_deref())
    }
}

/// The 1-based line of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    1 + text[..offset].matches('\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_section_parses_and_lookups_fall_back_to_defaults() {
        let c = Conventions::parse(
            r#"
[defaults]
int_return = "status"
int_bound = 100
includes = ["lib/errors.h"]
init = "lib_errors_off();"

[struct.lib_result]
primary = "val"

[function.lib_foo_e]
skip = "needs a callback"

[function.lib_bar]
int_return = "value"
int_bound = 0
oracle = "bar"
domain = { x = "[0,inf]" }
role = { p = "inout" }
result = { return = "named" }

[parameter.nu]
domain = "[0,100]"
role = "input"

[parameter.sgn]
result = "named"
"#,
        )
        .unwrap();
        assert_eq!(c.int_return("lib_other"), IntReturn::Status);
        assert_eq!(c.int_return("lib_bar"), IntReturn::Value);
        assert_eq!(c.int_bound("lib_other"), 100);
        assert_eq!(c.int_bound("lib_bar"), 0);
        assert_eq!(
            c.function("lib_foo_e").unwrap().skip.as_deref(),
            Some("needs a callback")
        );
        assert_eq!(c.function("lib_bar").unwrap().oracle.as_deref(), Some("bar"));
        assert_eq!(c.domain("lib_bar", "x"), Some("[0,inf]"));
        assert_eq!(c.domain("lib_bar", "nu"), Some("[0,100]"));
        assert_eq!(c.domain("lib_bar", "y"), None);
        assert_eq!(c.role("lib_bar", "p"), Some(Role::Inout));
        assert_eq!(c.role("lib_other", "nu"), Some(Role::Input));
        assert_eq!(c.struct_primary("lib_result"), Some("val"));
        assert_eq!(c.result_kind("lib_bar", "return"), Some(ResultKind::Named));
        assert_eq!(c.result_kind("lib_bar", "sgn"), Some(ResultKind::Named));
        assert_eq!(c.result_kind("lib_other", "x"), None);
        assert_eq!(c.defaults.includes, ["lib/errors.h"]);
        assert_eq!(c.defaults.init.as_deref(), Some("lib_errors_off();"));
    }

    #[test]
    fn an_empty_file_means_the_defaults() {
        let c = Conventions::parse("").unwrap();
        assert_eq!(c.int_return("f"), IntReturn::Value);
        assert_eq!(c.int_bound("f"), DEFAULT_INT_BOUND);
    }

    #[test]
    fn an_unknown_key_is_one_line_with_its_line() {
        let e = Conventions::parse("[defaults]\nint_bound = 5\n\n[function.f]\noracel = \"f\"\n").unwrap_err();
        assert!(e.starts_with(":5: unknown field `oracel`"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn a_bad_value_and_bad_syntax_are_located() {
        let e = Conventions::parse("[defaults]\nint_return = \"maybe\"\n").unwrap_err();
        assert!(e.starts_with(":2: unknown variant `maybe`"), "{e}");
        let e = Conventions::parse("[defaults\n").unwrap_err();
        assert!(e.starts_with(":1: "), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }
}
