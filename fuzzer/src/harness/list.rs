//! `numfuzz harness --list`: each function with its parameters as the conventions must name
//! them, their types and what the harness would do with each; the way to write conventions
//! for a header whose parameters have no names.

use super::ast::Prototype;
use super::conventions::Conventions;
use super::plan::{self, ResultDecl, Use};

/// A block per function: `NAME (HEADER): harnessed, signature SIG` or `skipped: REASON`, then
/// a line per parameter and one for the return value, in aligned columns.
pub fn listing(
    protos: &[&Prototype],
    header_of: impl Fn(&Prototype) -> String,
    conv: &Conventions,
) -> anyhow::Result<String> {
    let mut text = String::new();
    for p in protos {
        text += &function_block(p, &header_of(p), conv)?;
    }
    Ok(text)
}

fn function_block(p: &Prototype, header: &str, conv: &Conventions) -> anyhow::Result<String> {
    let verdict = match plan::plan(p, conv)? {
        Ok(plan) => format!("harnessed, signature {}", plan.signature()),
        Err(skip) => format!("skipped: {}", skip.reason),
    };
    let (ret, params) = plan::uses(p, conv)?;
    let mut rows: Vec<[String; 3]> = p
        .params
        .iter()
        .zip(&params)
        .map(|(q, u)| {
            let name = if q.unnamed {
                format!("{} (unnamed)", q.name)
            } else {
                q.name.clone()
            };
            [name, q.spelled.clone(), describe(u)]
        })
        .collect();
    rows.push(["return".into(), p.spelled_return.clone(), describe(&ret)]);
    Ok(format!("{} ({header}): {verdict}\n{}", p.name, aligned(&rows)))
}

/// What the harness does with it, in words.
fn describe(u: &Use) -> String {
    match u {
        Use::Input(field) => format!("input {field}"),
        Use::Output(results) => format!("result {}", results_text(results)),
        Use::Inout(field, results) => format!("input {field}, result {}", results_text(results)),
        Use::Status => "status (non-zero: an error the library reported)".into(),
        Use::Nothing => "none".into(),
        Use::Skipped(reason) => format!("skipped: {reason}"),
    }
}

/// `r.val (primary), r.err (named)`.
fn results_text(results: &[ResultDecl]) -> String {
    let each: Vec<String> = results
        .iter()
        .map(|r| format!("{} ({})", r.name, if r.primary { "primary" } else { "named" }))
        .collect();
    each.join(", ")
}

/// Rows indented by two spaces, the first two columns padded to their widest cell.
fn aligned(rows: &[[String; 3]]) -> String {
    let width = |c: usize| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0);
    let (w0, w1) = (width(0), width(1));
    rows.iter()
        .map(|[name, ty, what]| format!("  {name:<w0$}  {ty:<w1$}  {what}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::ast::{CType, Param};
    use numfuzz_abi::op::FloatType;
    use numfuzz_abi::signature::FieldType;
    use std::path::PathBuf;

    #[test]
    fn a_block_names_each_parameter_its_type_and_what_the_harness_does() {
        let f64 = CType::Float(FloatType::F64);
        let param = |name: &str, unnamed, spelled: &str, ty: CType| Param {
            name: name.into(),
            unnamed,
            spelled: spelled.into(),
            ty,
        };
        let p = Prototype {
            name: "cdf_e".into(),
            header: PathBuf::from("/x/lib.h"),
            spelled_return: "int".into(),
            ret: CType::Int(FieldType::I32),
            params: vec![
                param("arg0", true, "double", f64.clone()),
                param("n", false, "int", CType::Int(FieldType::I32)),
                param(
                    "out",
                    false,
                    "double *",
                    CType::Pointer {
                        pointee: Box::new(f64),
                        is_const: false,
                    },
                ),
            ],
            variadic: false,
        };
        let conv = Conventions::parse(
            "[defaults]\nint_return = \"status\"\n[function.cdf_e]\ndomain = { arg0 = \"[0,1]\" }\n",
        )
        .unwrap();
        let text = listing(&[&p], |_| "lib.h".into(), &conv).unwrap();
        assert_eq!(
            text,
            "cdf_e (lib.h): harnessed, signature f64[0,1],i32\n\
             \x20 arg0 (unnamed)  double    input f64[0,1]\n\
             \x20 n               int       input i32\n\
             \x20 out             double *  result out (primary)\n\
             \x20 return          int       status (non-zero: an error the library reported)\n"
        );
    }
}
