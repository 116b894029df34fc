//! The conventions' keys checked against the headers. A table or key that names no function or
//! parameter would be ignored without a word (a misspelt name, a name the header does not give
//! an unnamed parameter), so each is one line naming the file, the key's line and the names that
//! exist.
//!
//! The check is against every function the headers declare, not only those `--include` and
//! `--exclude` select: a conventions file describes the library, and one file serves every
//! selection of its functions (a `[function.F]` for a filtered-out F is no mistake).

use super::ast::Prototype;
use super::conventions::{Conventions, FunctionConvention, Key};
use std::collections::BTreeSet;

/// A key that names nothing.
#[derive(Clone, Debug)]
pub struct Unmatched {
    /// `conventions file `PATH`:LINE: [...] names ...`, one line.
    pub message: String,
    /// It names a function or a parameter no header given declares, which a file shared by
    /// runs over different headers may (`defaults.other_headers`). A key of a declared function
    /// that names none of its parameters is wrong whatever the headers.
    pub other_headers: bool,
    /// Where the key is in the text: the findings go in the file's order.
    offset: usize,
}

/// Every key of `conv` that names nothing `declared` declares, in the file's order.
pub fn unmatched(conv: &Conventions, declared: &[Prototype]) -> Vec<Unmatched> {
    let mut found = Vec::new();
    for (name, table) in &conv.functions {
        match declared.iter().find(|p| p.name == *name.get_ref()) {
            Some(p) => found.extend(unmatched_in_function(conv, p, table)),
            None => found.push(no_such_function(conv, name)),
        }
    }
    let parameters = parameter_names(declared);
    for name in conv.parameters.keys() {
        if !parameters.contains(name.get_ref().as_str()) {
            found.push(no_such_parameter(conv, name, &parameters));
        }
    }
    found.sort_by_key(|u| u.offset);
    found
}

fn finding(conv: &Conventions, key: &Key, message: &str, other_headers: bool) -> Unmatched {
    Unmatched {
        message: conv.located(key, message),
        other_headers,
        offset: key.span().start,
    }
}

fn no_such_function(conv: &Conventions, name: &Key) -> Unmatched {
    let message = format!(
        "[function.{}] names no function the headers declare; check the name against `numfuzz harness --list` \
         or remove the table",
        name.get_ref()
    );
    finding(conv, name, &message, true)
}

/// At most this many names are listed in a message (a library has hundreds of parameters).
const LISTED_NAMES: usize = 30;

fn no_such_parameter(conv: &Conventions, name: &Key, parameters: &BTreeSet<&str>) -> Unmatched {
    let mut listed: Vec<&str> = parameters.iter().copied().take(LISTED_NAMES).collect();
    if parameters.len() > LISTED_NAMES {
        listed.push("…");
    }
    let message = format!(
        "[parameter.{}] names no parameter of any function the headers declare (their parameters: {}; \
         {UNNAMED}; `numfuzz harness --list` prints them by function)",
        name.get_ref(),
        listed.join(", ")
    );
    finding(conv, name, &message, true)
}

/// How the conventions name a parameter the header leaves unnamed.
const UNNAMED: &str = "a parameter the header leaves unnamed is argK, K its position from 0";

fn parameter_names(declared: &[Prototype]) -> BTreeSet<&str> {
    declared
        .iter()
        .flat_map(|p| p.params.iter().map(|q| q.name.as_str()))
        .collect()
}

/// The `domain`, `role` and `result` keys of `[function.F]` that name no parameter of F
/// (`result` may also name `return`).
fn unmatched_in_function(conv: &Conventions, p: &Prototype, table: &FunctionConvention) -> Vec<Unmatched> {
    let names_something = |kind: &str, key: &Key| {
        p.params.iter().any(|q| q.name == *key.get_ref()) || (kind == "result" && key.get_ref() == "return")
    };
    let domain = table.domain.keys().map(|k| ("domain", k));
    let role = table.role.keys().map(|k| ("role", k));
    let result = table.result.keys().map(|k| ("result", k));
    domain
        .chain(role)
        .chain(result)
        .filter(|(kind, key)| !names_something(kind, key))
        .map(|(kind, key)| no_such_key(conv, p, kind, key))
        .collect()
}

fn no_such_key(conv: &Conventions, p: &Prototype, kind: &str, key: &Key) -> Unmatched {
    let what = match kind {
        "result" => format!("which is neither `return` nor a parameter of {}", p.name),
        _ => format!("which is no parameter of {}", p.name),
    };
    let message = format!(
        "[function.{}] {kind} names `{}`, {what} ({})",
        p.name,
        key.get_ref(),
        parameters_of(p)
    );
    finding(conv, key, &message, false)
}

/// `its parameters: x, arg1` and, where the header leaves some unnamed, how they are named.
fn parameters_of(p: &Prototype) -> String {
    if p.params.is_empty() {
        return "it has no parameters".to_string();
    }
    let names: Vec<&str> = p.params.iter().map(|q| q.name.as_str()).collect();
    let unnamed = if p.params.iter().any(|q| q.unnamed) {
        format!("; {UNNAMED}")
    } else {
        String::new()
    };
    format!("its parameters: {}{unnamed}", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::ast::{CType, Param};
    use numfuzz_abi::op::FloatType;
    use std::path::PathBuf;

    const F64: CType = CType::Float(FloatType::F64);

    /// `double NAME(double P0, ...)`; an empty name is an unnamed parameter.
    fn proto(name: &str, params: &[&str]) -> Prototype {
        let params = params
            .iter()
            .enumerate()
            .map(|(k, q)| Param {
                name: if q.is_empty() { format!("arg{k}") } else { q.to_string() },
                unnamed: q.is_empty(),
                spelled: "double".into(),
                ty: F64,
            })
            .collect();
        Prototype {
            name: name.into(),
            header: PathBuf::from("/x/lib.h"),
            spelled_return: "double".into(),
            ret: F64,
            params,
            variadic: false,
        }
    }

    fn messages(text: &str, declared: &[Prototype]) -> Vec<String> {
        let conv = Conventions::parse(text).unwrap();
        unmatched(&conv, declared).into_iter().map(|u| u.message).collect()
    }

    #[test]
    fn keys_that_name_parameters_functions_and_return_are_matched() {
        let declared = [proto("cdf", &["x", "sgn"]), proto("pdf", &["", ""])];
        let text = "[function.cdf]\ndomain = { x = \"[0,1]\" }\nresult = { return = \"named\", sgn = \"named\" }\n\
                    [function.pdf]\nrole = { arg1 = \"output\" }\n[parameter.x]\ndomain = \"[0,1]\"\n";
        assert_eq!(messages(text, &declared), Vec::<String>::new());
    }

    #[test]
    fn a_parameter_table_matching_nothing_names_its_line_and_the_parameters() {
        let declared = [proto("cdf", &["x", "a"])];
        let m = messages(
            "[parameter.x]\ndomain = \"[0,1]\"\n\n[parameter.log_p]\nresult = \"named\"\n",
            &declared,
        );
        assert_eq!(m.len(), 1, "{m:?}");
        assert!(
            m[0].starts_with(":4: [parameter.log_p] names no parameter of any function the headers declare (their parameters: a, x; "),
            "{}",
            m[0]
        );
    }

    #[test]
    fn a_role_naming_no_parameter_of_its_function_lists_them_and_says_how_unnamed_ones_are_named() {
        let declared = [proto("cdf", &["", "", ""])];
        let m = messages("[function.cdf]\nrole = { sgn = \"output\" }\n", &declared);
        assert_eq!(
            m,
            [
                ":2: [function.cdf] role names `sgn`, which is no parameter of cdf (its parameters: arg0, arg1, arg2; \
              a parameter the header leaves unnamed is argK, K its position from 0)"
            ]
        );
        let m = messages("[function.cdf]\nresult.retrun = \"named\"\n", &declared);
        assert!(
            m[0].contains("result names `retrun`, which is neither `return` nor a parameter of cdf"),
            "{m:?}"
        );
    }

    #[test]
    fn a_function_no_header_declares_is_unmatched_and_may_belong_to_other_headers() {
        let conv = Conventions::parse("[defaults]\nint_bound = 5\n[function.cfd]\noracle = \"cdf\"\n").unwrap();
        let found = unmatched(&conv, &[proto("cdf", &["x"])]);
        assert_eq!(found.len(), 1);
        assert!(found[0]
            .message
            .starts_with(":3: [function.cfd] names no function the headers declare"));
        assert!(found[0].other_headers);
    }
}
