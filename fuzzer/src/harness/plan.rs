//! From a prototype and the conventions to a harness plan (inputs, out-pointer locals, the
//! call, the results to declare), or to the reason no scalar harness can call the function.

use super::ast::{CType, Param, Prototype};
use super::conventions::{Conventions, IntReturn, ResultKind, Role};
use numfuzz_abi::domain::Domain;
use numfuzz_abi::signature::FieldType;

/// One fuzzed argument: a field of the input.
#[derive(Clone, Debug)]
pub struct Input {
    pub var: String,
    pub field: FieldType,
    /// The declared domain as written in the signature (`[0,inf]`).
    pub domain: Option<String>,
    /// Integer arguments beyond the bound are not tried.
    pub bounded: bool,
    /// An integer's declared domain where it is narrower than its type (inclusive ends, each
    /// `None` where the type's own limit is the end): values outside are not valid arguments
    /// (an enum's or a mode's other values) and are not tried either.
    pub valid: Option<(Option<i128>, Option<i128>)>,
}

/// A local the function writes through a pointer.
#[derive(Clone, Debug)]
pub struct Local {
    pub var: String,
    /// Its C type, as the header spells the pointee.
    pub c_type: String,
    pub is_struct: bool,
    /// An in/out value: initialised from this input instead of zero.
    pub from_input: Option<String>,
}

/// A declared result: NUMFUZZ_RESULT (primary: judged) or NUMFUZZ_RESULT_NAMED.
#[derive(Clone, Debug, PartialEq)]
pub struct ResultDecl {
    /// `return`, the parameter's name, or `param.field` for a struct's field.
    pub name: String,
    pub primary: bool,
    pub expr: String,
}

/// The return value of the call.
#[derive(Clone, Debug)]
pub enum Return {
    Void,
    /// Kept in `ret` of this C type; a status also marks the input handled when non-zero.
    Kept {
        c_type: String,
        status: bool,
    },
}

#[derive(Clone, Debug)]
pub struct Plan {
    pub function: String,
    /// What NUMFUZZ_FUNCTION names (the oracle's name, else the function's).
    pub oracle_name: String,
    pub oracle: Option<String>,
    pub inputs: Vec<Input>,
    pub locals: Vec<Local>,
    pub ret: Return,
    pub int_return: Option<IntReturn>,
    pub int_bound: u64,
    /// Declared defined inside its declared domains (`NUMFUZZ_DEFINED_IN_DOMAIN`).
    pub defined_in_domain: bool,
    /// The call's arguments as C expressions.
    pub args: Vec<String>,
    /// In declaration order: the return value, then the outputs in parameter order.
    pub results: Vec<ResultDecl>,
}

impl Plan {
    /// The NUMFUZZ_SIGNATURE text, e.g. `f64[0,inf],i32`.
    pub fn signature(&self) -> String {
        let fields: Vec<String> = self.inputs.iter().map(Input::signature_field).collect();
        fields.join(",")
    }
}

impl Input {
    /// Its field as the signature writes it, e.g. `f64[0,inf]`.
    pub fn signature_field(&self) -> String {
        format!("{}{}", self.field.name(), self.domain.as_deref().unwrap_or(""))
    }
}

/// Why a function gets no harness.
#[derive(Clone, Debug, PartialEq)]
pub struct Skip {
    pub parameter: Option<String>,
    pub reason: String,
}

/// A result before the conventions say whether it is judged.
struct Candidate {
    name: String,
    /// The parameter it comes from (`return` for the return value): the conventions' key.
    param: String,
    expr: String,
    /// A float that may be the primary result (a float return, a float out pointer, a
    /// struct's value field).
    may_be_primary: bool,
    is_float: bool,
}

/// Plans the harness of `p`, or says why it has none. An error is a conventions mistake
/// (a domain that does not parse, a struct primary that is no field).
pub fn plan(p: &Prototype, conv: &Conventions) -> anyhow::Result<Result<Plan, Skip>> {
    let fconv = conv.function(&p.name);
    if let Some(reason) = fconv.and_then(|f| f.skip.clone()) {
        return Ok(Err(Skip {
            parameter: None,
            reason,
        }));
    }
    if p.variadic {
        return Ok(Err(skip(None, "takes variable arguments (`...`)")));
    }
    let mut b = Builder::new(p, conv);
    let ret = match b.ret()? {
        Ok(r) => r,
        Err(s) => return Ok(Err(s)),
    };
    for param in &p.params {
        if let Err(s) = b.param(param)? {
            return Ok(Err(s));
        }
    }
    let has_float = b.inputs.iter().any(|i| i.field.float_type().is_some()) || b.candidates.iter().any(|c| c.is_float);
    if !has_float {
        return Ok(Err(skip(None, "no floating-point value")));
    }
    let oracle = fconv.and_then(|f| f.oracle.clone());
    let int_return = match &ret {
        Return::Kept { .. } if !matches!(p.ret, CType::Float(_)) => Some(conv.int_return(&p.name)),
        _ => None,
    };
    Ok(Ok(Plan {
        function: p.name.clone(),
        oracle_name: oracle.clone().unwrap_or_else(|| p.name.clone()),
        oracle,
        results: choose_primary(&p.name, conv, b.candidates),
        inputs: b.inputs,
        locals: b.locals,
        ret,
        int_return,
        int_bound: conv.int_bound(&p.name),
        defined_in_domain: conv.defined_in_domain(&p.name),
        args: b.args,
    }))
}

fn skip(parameter: Option<&Param>, reason: &str) -> Skip {
    Skip {
        parameter: parameter.map(|p| p.name.clone()),
        reason: reason.to_string(),
    }
}

/// Every candidate that may be primary is a primary result (a function's every floating-point
/// output is its answer) unless the conventions call its parameter `named`; a candidate that
/// may not be primary (an integer, a struct's other fields) is named whatever they say.
fn choose_primary(function: &str, conv: &Conventions, candidates: Vec<Candidate>) -> Vec<ResultDecl> {
    candidates
        .into_iter()
        .map(|c| ResultDecl {
            primary: c.may_be_primary && conv.result_kind(function, &c.param) != Some(ResultKind::Named),
            name: c.name,
            expr: c.expr,
        })
        .collect()
}

struct Builder<'a> {
    proto: &'a Prototype,
    conv: &'a Conventions,
    inputs: Vec<Input>,
    locals: Vec<Local>,
    args: Vec<String>,
    candidates: Vec<Candidate>,
}

/// What the harness does with one parameter or the return value (`numfuzz harness --list`).
#[derive(Clone, Debug, PartialEq)]
pub enum Use {
    /// A field of the input, as the signature writes it (`f64[0,inf]`).
    Input(String),
    /// Written by the function: the results declared from it.
    Output(Vec<ResultDecl>),
    /// Read from its input field, passed by address and declared as results after the call.
    Inout(String, Vec<ResultDecl>),
    /// An integer return read as a status.
    Status,
    /// A `void` return.
    Nothing,
    /// No scalar harness can pass it; the reason.
    Skipped(String),
}

/// What the harness would do with the return value and with each parameter of `p`, each
/// planned on its own, so that a function's skipped parameter does not hide the others.
pub fn uses(p: &Prototype, conv: &Conventions) -> anyhow::Result<(Use, Vec<Use>)> {
    let mut b = Builder::new(p, conv);
    let ret = match b.ret()? {
        Err(s) => Use::Skipped(s.reason),
        Ok(Return::Void) => Use::Nothing,
        Ok(Return::Kept { status: true, .. }) => Use::Status,
        Ok(Return::Kept { .. }) => Use::Output(choose_primary(&p.name, conv, b.candidates)),
    };
    let params = p.params.iter().map(|param| param_use(p, conv, param));
    Ok((ret, params.collect::<anyhow::Result<_>>()?))
}

fn param_use(p: &Prototype, conv: &Conventions, param: &Param) -> anyhow::Result<Use> {
    let mut b = Builder::new(p, conv);
    if let Err(s) = b.param(param)? {
        return Ok(Use::Skipped(s.reason));
    }
    let field = b.inputs.first().map(Input::signature_field);
    let results = choose_primary(&p.name, conv, b.candidates);
    Ok(match field {
        Some(f) if results.is_empty() => Use::Input(f),
        Some(f) => Use::Inout(f, results),
        None => Use::Output(results),
    })
}

/// A C identifier made from a parameter name.
fn ident(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// `const double *` → `double`: the type of a local the function writes through the pointer.
fn pointee_c_type(spelled: &str) -> String {
    let before_star = spelled.rfind('*').map_or(spelled, |i| &spelled[..i]);
    before_star
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "restrict" | "__restrict"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `double *p`, `double (*f)(double)`: a parameter as the header declares it.
fn declared(p: &Param) -> String {
    if p.spelled.contains("(*)") {
        return p.spelled.replacen("(*)", &format!("(*{})", p.name), 1);
    }
    let sep = if p.spelled.ends_with('*') { "" } else { " " };
    format!("{}{sep}{}", p.spelled, p.name)
}

impl<'a> Builder<'a> {
    fn new(proto: &'a Prototype, conv: &'a Conventions) -> Builder<'a> {
        Builder {
            proto,
            conv,
            inputs: Vec::new(),
            locals: Vec::new(),
            args: Vec::new(),
            candidates: Vec::new(),
        }
    }

    fn ret(&mut self) -> anyhow::Result<Result<Return, Skip>> {
        let p = self.proto;
        let c_type = || pointee_c_type(&format!("{}*", p.spelled_return));
        Ok(Ok(match &p.ret {
            CType::Void => Return::Void,
            CType::Float(_) => {
                self.candidates.push(Candidate {
                    name: "return".into(),
                    param: "return".into(),
                    expr: "ret".into(),
                    may_be_primary: true,
                    is_float: true,
                });
                Return::Kept {
                    c_type: c_type(),
                    status: false,
                }
            }
            CType::Int(_) | CType::Enum { .. } | CType::Bool => {
                let status = self.conv.int_return(&p.name) == IntReturn::Status;
                if !status {
                    self.candidates.push(Candidate {
                        name: "return".into(),
                        param: "return".into(),
                        expr: "(double)ret".into(),
                        may_be_primary: false,
                        is_float: false,
                    });
                }
                Return::Kept {
                    c_type: c_type(),
                    status,
                }
            }
            _ => {
                let reason = format!("returns `{}`, not a number", p.spelled_return);
                return Ok(Err(skip(None, &reason)));
            }
        }))
    }

    fn param(&mut self, param: &Param) -> anyhow::Result<Result<(), Skip>> {
        let role = self.conv.role(&self.proto.name, &param.name);
        match &param.ty {
            CType::Float(_) | CType::Int(_) | CType::Enum { .. } | CType::Bool => {
                let var = self.input(param, &param.ty)?;
                self.args.push(if param.ty == CType::Bool {
                    format!("{var} != 0")
                } else {
                    var
                });
                Ok(Ok(()))
            }
            CType::Pointer { pointee, is_const } => self.pointer(param, pointee, *is_const, role),
            other => Ok(Err(unsupported(param, other))),
        }
    }

    /// A scalar read from the next field; returns its variable.
    fn input(&mut self, param: &Param, ty: &CType) -> anyhow::Result<String> {
        let (field, implied) = match ty {
            CType::Float(f) => (FieldType::Float(*f), None),
            CType::Int(f) => (*f, None),
            CType::Bool => (FieldType::U8, Some("[0,1]".to_string())),
            CType::Enum { field, range } => (*field, range.map(|(lo, hi)| format!("[{lo},{hi}]"))),
            _ => unreachable!("only scalars are inputs"),
        };
        let declared = self.conv.domain(&self.proto.name, &param.name).map(str::to_string);
        let domain = declared.or(implied);
        let mut valid = None;
        if let Some(d) = &domain {
            let parsed = Domain::parse(field, d).map_err(|e| {
                anyhow::anyhow!(
                    "conventions: domain `{d}` of parameter `{}` of {} ({}): {e}",
                    param.name,
                    self.proto.name,
                    field.name()
                )
            })?;
            if let (Some((lo, hi)), Some((min, max))) = (parsed.int_extremes(), field.int_range()) {
                valid = Some(((lo > min).then_some(lo), (hi < max).then_some(hi)));
            }
        }
        let var = format!("in_{}", ident(&param.name));
        // A bound only where the type reaches beyond it (an i8 never exceeds 10000).
        let bound = self.conv.int_bound(&self.proto.name) as i128;
        let reaches = field.int_range().is_some_and(|(lo, hi)| hi > bound || lo < -bound);
        self.inputs.push(Input {
            var: var.clone(),
            field,
            domain,
            bounded: matches!(ty, CType::Int(_) | CType::Enum { .. }) && bound > 0 && reaches,
            valid,
        });
        Ok(var)
    }

    fn pointer(
        &mut self,
        param: &Param,
        pointee: &CType,
        is_const: bool,
        role: Option<Role>,
    ) -> anyhow::Result<Result<(), Skip>> {
        // A float pointer beside a `size_t` is an array (`double *v` with `size_t size`): only
        // the conventions can say it is one value.
        let sized = self.proto.params.iter().any(|q| q.spelled.contains("size_t"));
        if role.is_none() && sized && !is_const && matches!(pointee, CType::Float(_)) {
            return Ok(Err(skip(
                Some(param),
                &format!(
                    "`{}` beside a `size_t` parameter is an array (a `role` in the conventions says otherwise)",
                    declared(param)
                ),
            )));
        }
        let role = role.unwrap_or(if is_const { Role::Input } else { Role::Output });
        let scalar = matches!(pointee, CType::Float(_) | CType::Int(_) | CType::Enum { .. });
        let explicit_output = self.conv.role(&self.proto.name, &param.name) == Some(Role::Output);
        match (role, pointee) {
            (Role::Inout, _) if scalar && !is_const => {
                let var = self.input(param, pointee)?;
                self.out_local(param, Some(var), pointee);
                Ok(Ok(()))
            }
            (Role::Output, CType::Float(_)) if !is_const => {
                self.out_local(param, None, pointee);
                Ok(Ok(()))
            }
            // An `int *` is as often an array as a single output: only when the conventions say.
            (Role::Output, CType::Int(_) | CType::Enum { .. }) if !is_const && explicit_output => {
                self.out_local(param, None, pointee);
                Ok(Ok(()))
            }
            (Role::Output, CType::Struct(fields)) if !is_const => self.out_struct(param, fields),
            _ => Ok(Err(unsupported(param, &param.ty))),
        }
    }

    /// A scalar local passed by address and declared as a result after the call.
    fn out_local(&mut self, param: &Param, from_input: Option<String>, ty: &CType) {
        let var = format!("out_{}", ident(&param.name));
        let is_float = matches!(ty, CType::Float(_));
        self.locals.push(Local {
            var: var.clone(),
            c_type: pointee_c_type(&param.spelled),
            is_struct: false,
            from_input,
        });
        self.args.push(format!("&{var}"));
        self.candidates.push(Candidate {
            name: param.name.clone(),
            param: param.name.clone(),
            expr: if is_float { var } else { format!("(double){var}") },
            may_be_primary: is_float,
            is_float,
        });
    }

    /// A struct of numbers: each field a result, the value field (conventions, else the
    /// first float field) may be primary.
    fn out_struct(&mut self, param: &Param, fields: &[(String, CType)]) -> anyhow::Result<Result<(), Skip>> {
        let numeric = |t: &CType| matches!(t, CType::Float(_) | CType::Int(_) | CType::Enum { .. } | CType::Bool);
        if fields.is_empty() || !fields.iter().all(|(_, t)| numeric(t)) {
            let why = "is a pointer to a struct that is opaque or not all numbers";
            return Ok(Err(skip(Some(param), &format!("`{}` {why}", declared(param)))));
        }
        if !fields.iter().any(|(_, t)| matches!(t, CType::Float(_))) {
            let why = "is a pointer to a struct without a floating-point field";
            return Ok(Err(skip(Some(param), &format!("`{}` {why}", declared(param)))));
        }
        let c_type = pointee_c_type(&param.spelled);
        let primary = self.struct_primary(&c_type, fields)?;
        let var = format!("out_{}", ident(&param.name));
        for (name, t) in fields {
            let is_float = matches!(t, CType::Float(_));
            let member = format!("{var}.{name}");
            self.candidates.push(Candidate {
                name: format!("{}.{name}", param.name),
                param: param.name.clone(),
                expr: if is_float { member } else { format!("(double){member}") },
                may_be_primary: *name == primary,
                is_float,
            });
        }
        self.locals.push(Local {
            var: var.clone(),
            c_type,
            is_struct: true,
            from_input: None,
        });
        self.args.push(format!("&{var}"));
        Ok(Ok(()))
    }

    fn struct_primary(&self, c_type: &str, fields: &[(String, CType)]) -> anyhow::Result<String> {
        let bare = c_type.strip_prefix("struct ").unwrap_or(c_type);
        let given = self
            .conv
            .struct_primary(c_type)
            .or_else(|| self.conv.struct_primary(bare));
        match given {
            Some(f) if fields.iter().any(|(n, t)| n == f && matches!(t, CType::Float(_))) => Ok(f.to_string()),
            Some(f) => {
                anyhow::bail!("conventions: struct.{bare}.primary = \"{f}\" is not a floating-point field of {c_type}")
            }
            None => Ok(fields
                .iter()
                .find(|(_, t)| matches!(t, CType::Float(_)))
                .map(|(n, _)| n.clone())
                .unwrap_or_default()),
        }
    }
}

/// The reason a parameter stops the function.
fn unsupported(p: &Param, ty: &CType) -> Skip {
    let why = match ty {
        CType::FunctionPointer => "is a function pointer (a callback)".to_string(),
        CType::Struct(_) => "is a struct passed by value".to_string(),
        CType::Pointer { pointee, .. } if matches!(**pointee, CType::Int(FieldType::I8)) => "is a string".to_string(),
        CType::Pointer { pointee, is_const } if matches!(**pointee, CType::Float(_)) && *is_const => {
            "is not a scalar input or a floating-point output (a pointer to input data)".to_string()
        }
        _ => "is not a scalar input or a floating-point output".to_string(),
    };
    skip(Some(p), &format!("`{}` {why}", declared(p)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_abi::op::FloatType;
    use std::path::PathBuf;

    const F64: CType = CType::Float(FloatType::F64);

    fn param(name: &str, spelled: &str, ty: CType) -> Param {
        Param {
            name: name.into(),
            unnamed: false,
            spelled: spelled.into(),
            ty,
        }
    }

    fn ptr(t: CType, is_const: bool) -> CType {
        CType::Pointer {
            pointee: Box::new(t),
            is_const,
        }
    }

    fn proto(name: &str, ret: CType, spelled_return: &str, params: Vec<Param>) -> Prototype {
        Prototype {
            name: name.into(),
            header: PathBuf::from("/x/lib.h"),
            spelled_return: spelled_return.into(),
            ret,
            params,
            variadic: false,
        }
    }

    fn result_struct() -> CType {
        CType::Struct(vec![("val".into(), F64), ("err".into(), F64)])
    }

    #[test]
    fn a_status_function_with_a_struct_output_declares_val_primary_and_err_named() {
        let c =
            Conventions::parse("[defaults]\nint_return = \"status\"\n[function.f_e]\ndomain = { x = \"[0,inf]\" }\n")
                .unwrap();
        let p = proto(
            "f_e",
            CType::Int(FieldType::I32),
            "int",
            vec![
                param("x", "double", F64),
                param("n", "int", CType::Int(FieldType::I32)),
                param("r", "res *", ptr(result_struct(), false)),
            ],
        );
        let plan = plan(&p, &c).unwrap().unwrap();
        assert_eq!(plan.signature(), "f64[0,inf],i32");
        assert_eq!(plan.args, ["in_x", "in_n", "&out_r"]);
        assert_eq!(plan.int_return, Some(IntReturn::Status));
        let names: Vec<(&str, bool)> = plan.results.iter().map(|r| (r.name.as_str(), r.primary)).collect();
        assert_eq!(names, [("r.val", true), ("r.err", false)]);
        assert_eq!(plan.results[0].expr, "out_r.val");
        assert!(plan.inputs[1].bounded && !plan.inputs[0].bounded);
    }

    #[test]
    fn every_float_output_is_primary_unless_the_conventions_call_it_named() {
        let p = proto(
            "g",
            F64,
            "double",
            vec![
                param("x", "double", F64),
                param("c", "double *", ptr(F64, false)),
                param("sgn", "double *", ptr(F64, false)),
            ],
        );
        let c = Conventions::parse("[parameter.sgn]\nresult = \"named\"\n").unwrap();
        let plan = plan(&p, &c).unwrap().unwrap();
        let decl = |name: &str, primary, expr: &str| ResultDecl {
            name: name.into(),
            primary,
            expr: expr.into(),
        };
        assert_eq!(
            plan.results,
            [
                decl("return", true, "ret"),
                decl("c", true, "out_c"),
                decl("sgn", false, "out_sgn")
            ]
        );
        assert_eq!(plan.int_return, None);
    }

    #[test]
    fn pointers_to_input_data_callbacks_and_integer_only_functions_are_skipped() {
        let c = Conventions::parse("[function.h]\nrole = { p = \"input\" }\n").unwrap();
        let h = proto("h", F64, "double", vec![param("p", "double *", ptr(F64, false))]);
        let s = plan(&h, &c).unwrap().unwrap_err();
        assert_eq!(s.parameter.as_deref(), Some("p"));
        assert_eq!(s.reason, "`double *p` is not a scalar input or a floating-point output");
        let cb = proto(
            "cb",
            F64,
            "double",
            vec![param("f", "double (*)(double)", CType::FunctionPointer)],
        );
        let s = plan(&cb, &c).unwrap().unwrap_err();
        assert_eq!(s.reason, "`double (*f)(double)` is a function pointer (a callback)");
        let ints = proto(
            "i",
            CType::Int(FieldType::I32),
            "int",
            vec![param("n", "long", CType::Int(FieldType::I64))],
        );
        assert_eq!(plan(&ints, &c).unwrap().unwrap_err().reason, "no floating-point value");
        let array = proto(
            "seq",
            CType::Int(FieldType::I32),
            "int",
            vec![
                param("size", "size_t", CType::Int(FieldType::U64)),
                param("v", "double *", ptr(F64, false)),
            ],
        );
        let s = plan(&array, &c).unwrap().unwrap_err();
        assert_eq!(s.parameter.as_deref(), Some("v"));
        assert!(s.reason.contains("is an array"), "{}", s.reason);
    }

    #[test]
    fn a_bad_domain_in_the_conventions_is_an_error() {
        let c = Conventions::parse("[parameter.x]\ndomain = \"[1,0]\"\n").unwrap();
        let p = proto("g", F64, "double", vec![param("x", "double", F64)]);
        let e = plan(&p, &c).unwrap_err().to_string();
        assert!(e.contains("domain `[1,0]` of parameter `x` of g"), "{e}");
    }

    #[test]
    fn functions_are_defined_in_their_domains_where_the_conventions_say_so() {
        let c =
            Conventions::parse("[defaults]\ndefined_in_domain = true\n[function.flat_P]\ndefined_in_domain = false\n")
                .unwrap();
        let one = |name: &str| plan(&proto(name, F64, "double", vec![param("x", "double", F64)]), &c);
        assert!(one("fdist_P").unwrap().unwrap().defined_in_domain);
        assert!(!one("flat_P").unwrap().unwrap().defined_in_domain);
        let plain = Conventions::parse("").unwrap();
        let p = proto("g", F64, "double", vec![param("x", "double", F64)]);
        assert!(!plan(&p, &plain).unwrap().unwrap().defined_in_domain);
    }
}
