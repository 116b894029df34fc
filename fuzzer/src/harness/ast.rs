//! Prototypes from clang's JSON AST: the functions the named headers declare, with their
//! parameter and return types resolved through typedefs, tags and enums by clang itself.
//!
//! clang prints a location's `file` only when it differs from the previous location printed,
//! so the walk follows every location in document order (a node's `loc`, then its `range`,
//! then its children; a macro location's spelling before its expansion) to know which file a
//! declaration is in.

use anyhow::{bail, Context};
use numfuzz_abi::op::FloatType;
use numfuzz_abi::signature::FieldType;
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A C type as far as a harness cares.
#[derive(Clone, Debug, PartialEq)]
pub enum CType {
    Void,
    Float(FloatType),
    /// An integer scalar, read from a field of this type.
    Int(FieldType),
    Bool,
    /// An enum: its underlying integer type and the range of its enumerators (when known).
    Enum {
        field: FieldType,
        range: Option<(i128, i128)>,
    },
    /// A struct or union by value (fields empty when it is incomplete or a union).
    Struct(Vec<(String, CType)>),
    Pointer {
        pointee: Box<CType>,
        is_const: bool,
    },
    FunctionPointer,
    /// Anything else (arrays in structs, `__int128`, vectors, ...).
    Other,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// The name the header gives it, else `argK`, K its position from 0 (what the conventions
    /// call it).
    pub name: String,
    /// The header gives it no name (`double f(double, int *);`).
    pub unnamed: bool,
    /// The type as the header spells it (clang's `qualType`).
    pub spelled: String,
    pub ty: CType,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Prototype {
    pub name: String,
    /// The header that declares it, as canonical path.
    pub header: PathBuf,
    pub spelled_return: String,
    pub ret: CType,
    pub params: Vec<Param>,
    pub variadic: bool,
}

/// The node fields the walk reads; serde skips the rest.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Node {
    id: String,
    kind: String,
    name: Option<String>,
    loc: Option<Loc>,
    range: Option<Range>,
    #[serde(rename = "type")]
    ty: Option<TypeInfo>,
    #[serde(rename = "fixedUnderlyingType")]
    fixed_underlying: Option<TypeInfo>,
    variadic: bool,
    #[serde(rename = "completeDefinition")]
    complete: bool,
    #[serde(rename = "tagUsed")]
    tag_used: Option<String>,
    value: Option<serde_json::Value>,
    decl: Option<serde_json::Value>,
    #[serde(rename = "ownedTagDecl")]
    owned_tag: Option<serde_json::Value>,
    inner: Vec<Node>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Loc {
    file: Option<String>,
    #[serde(rename = "spellingLoc")]
    spelling: Option<Box<Loc>>,
    #[serde(rename = "expansionLoc")]
    expansion: Option<Box<Loc>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Range {
    begin: Option<Loc>,
    end: Option<Loc>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default)]
struct TypeInfo {
    #[serde(rename = "qualType")]
    qual: String,
    #[serde(rename = "desugaredQualType")]
    desugared: Option<String>,
}

/// A typedef: its type and, for a typedef of a tag, the tag's declaration.
struct Typedef {
    ty: TypeInfo,
    tag_id: Option<String>,
}

/// An enum's underlying field type and enumerator range.
#[derive(Clone, Copy)]
struct EnumInfo {
    field: FieldType,
    range: Option<(i128, i128)>,
}

/// Declarations collected by the walk: what type resolution needs, and the functions.
#[derive(Default)]
struct Collected {
    typedefs: HashMap<String, Typedef>,
    records: HashMap<String, Vec<(String, TypeInfo)>>,
    unions: HashSet<String>,
    enums: HashMap<String, EnumInfo>,
    /// "struct NAME" / "enum NAME" → declaration id of the definition.
    tags: HashMap<String, String>,
    functions: Vec<(Node, PathBuf)>,
}

/// Runs clang on a file that includes `headers` and returns the prototypes they declare.
pub fn prototypes(clang: &str, headers: &[PathBuf], clang_args: &[String]) -> anyhow::Result<Vec<Prototype>> {
    let json = dump_ast(clang, headers, clang_args)?;
    parse_ast(&json, headers)
}

/// The JSON AST of a temporary translation unit including every header, or a one-line error
/// naming the first place clang could not parse.
fn dump_ast(clang: &str, headers: &[PathBuf], clang_args: &[String]) -> anyhow::Result<Vec<u8>> {
    let mut unit = tempfile::Builder::new()
        .prefix("numfuzz-harness-")
        .suffix(".c")
        .tempfile()
        .context("creating a temporary file for clang")?;
    for h in headers {
        writeln!(unit, "#include \"{}\"", h.display())?;
    }
    unit.flush()?;
    let out = Command::new(clang)
        .args(["-x", "c", "-fsyntax-only", "-Xclang", "-ast-dump=json"])
        .args(clang_args)
        .arg(unit.path())
        .output()
        .map_err(|e| {
            anyhow::anyhow!("cannot run `{clang}` ({e}); install clang-19 (scripts/setup.sh) or pass --clang")
        })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        bail!(
            "clang cannot parse the headers: {} (fix the header, or give its include directories and macros after `--`)",
            first_error(&stderr)
        );
    }
    Ok(out.stdout)
}

/// clang's first error line (`file:line:col: error: message`), without the temporary file's
/// "In file included from" lines.
fn first_error(stderr: &str) -> String {
    stderr
        .lines()
        .find(|l| l.contains(": error: ") || l.contains(": fatal error: "))
        .unwrap_or_else(|| stderr.lines().next().unwrap_or("no message"))
        .trim()
        .to_string()
}

/// Prototypes declared in `headers` (canonical paths compared) from clang's JSON AST.
pub fn parse_ast(json: &[u8], headers: &[PathBuf]) -> anyhow::Result<Vec<Prototype>> {
    let root = read_tree(json)?;
    let wanted: HashSet<PathBuf> = headers.iter().map(|h| canonical(Path::new(h))).collect();
    let mut walk = Walk {
        current: None,
        wanted,
        seen_files: HashMap::new(),
        out: Collected::default(),
    };
    for node in root.inner {
        walk.top_level(node);
    }
    let c = walk.out;
    let mut seen = HashSet::new();
    let mut protos = Vec::new();
    for (f, header) in &c.functions {
        let name = f.name.clone().unwrap_or_default();
        if seen.insert(name.clone()) {
            protos.push(c.prototype(f, name, header.clone()));
        }
    }
    Ok(protos)
}

/// The AST as nodes (serde_json's depth limit, 128, is far above what declarations need).
fn read_tree(json: &[u8]) -> anyhow::Result<Node> {
    serde_json::from_slice(json).context("reading clang's JSON AST")
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

struct Walk {
    /// The file of the last location clang printed with one.
    current: Option<String>,
    wanted: HashSet<PathBuf>,
    /// File name as clang prints it → its canonical path, when it is a wanted header.
    seen_files: HashMap<String, Option<PathBuf>>,
    out: Collected,
}

impl Walk {
    /// Follows a location; returns the file it is in (its expansion's for a macro).
    fn follow(&mut self, loc: &Loc) -> Option<String> {
        if let Some(s) = &loc.spelling {
            self.follow(s);
        }
        if let Some(e) = &loc.expansion {
            return self.follow(e);
        }
        if let Some(f) = &loc.file {
            self.current = Some(f.clone());
        }
        self.current.clone()
    }

    /// Follows a node's own locations and returns the file its `loc` is in.
    fn follow_node(&mut self, node: &Node) -> Option<String> {
        let file = node.loc.as_ref().and_then(|l| self.follow(l));
        if let Some(r) = &node.range {
            for l in [&r.begin, &r.end].into_iter().flatten() {
                self.follow(l);
            }
        }
        file
    }

    /// Follows every location below `node` (children in document order).
    fn follow_children(&mut self, node: &Node) {
        for child in &node.inner {
            self.follow_node(child);
            self.follow_children(child);
        }
    }

    fn wanted_header(&mut self, file: &str) -> Option<PathBuf> {
        let wanted = &self.wanted;
        self.seen_files
            .entry(file.to_string())
            .or_insert_with(|| Some(canonical(Path::new(file))).filter(|p| wanted.contains(p)))
            .clone()
    }

    /// One declaration of the translation unit.
    fn top_level(&mut self, node: Node) {
        let file = self.follow_node(&node);
        self.follow_children(&node);
        match node.kind.as_str() {
            "TypedefDecl" => self.out.typedef(&node),
            "RecordDecl" => self.out.record(&node),
            "EnumDecl" => self.out.enumeration(&node),
            "FunctionDecl" => {
                if let Some(header) = file.and_then(|f| self.wanted_header(&f)) {
                    self.out.functions.push((node, header));
                }
            }
            _ => {}
        }
    }
}

/// The id in a `{"id": ..., "kind": ..., "name": ...}` reference.
fn ref_id(v: &Option<serde_json::Value>) -> Option<String> {
    v.as_ref()?.get("id")?.as_str().map(str::to_string)
}

/// The tag declaration a typedef's type nodes refer to (`ownedTagDecl` or a `decl`).
fn tag_of_type_nodes(node: &Node) -> Option<String> {
    node.inner.iter().find_map(|t| {
        if t.kind == "TypedefType" {
            return None;
        }
        ref_id(&t.owned_tag)
            .or_else(|| ref_id(&t.decl))
            .or_else(|| tag_of_type_nodes(t))
    })
}

impl Collected {
    fn typedef(&mut self, node: &Node) {
        if let (Some(name), Some(ty)) = (&node.name, &node.ty) {
            let tag_id = tag_of_type_nodes(node);
            self.typedefs.insert(name.clone(), Typedef { ty: ty.clone(), tag_id });
        }
    }

    fn record(&mut self, node: &Node) {
        if !node.complete {
            return;
        }
        let fields = node
            .inner
            .iter()
            .filter(|f| f.kind == "FieldDecl")
            .map(|f| (f.name.clone().unwrap_or_default(), f.ty.clone().unwrap_or_default()))
            .collect();
        self.records.insert(node.id.clone(), fields);
        let tag = node.tag_used.clone().unwrap_or_else(|| "struct".into());
        if tag == "union" {
            self.unions.insert(node.id.clone());
        }
        if let Some(name) = node.name.as_ref().filter(|n| !n.is_empty()) {
            self.tags.insert(format!("{tag} {name}"), node.id.clone());
        }
    }

    fn enumeration(&mut self, node: &Node) {
        let field = node
            .fixed_underlying
            .as_ref()
            .and_then(|t| match builtin(&t.qual) {
                Some(CType::Int(f)) => Some(f),
                _ => None,
            })
            .unwrap_or(FieldType::I32);
        let info = EnumInfo {
            field,
            range: enumerator_range(node),
        };
        self.enums.insert(node.id.clone(), info);
        if let Some(name) = node.name.as_ref().filter(|n| !n.is_empty()) {
            self.tags.insert(format!("enum {name}"), node.id.clone());
        }
    }

    fn prototype(&self, f: &Node, name: String, header: PathBuf) -> Prototype {
        let fn_type = f.ty.clone().unwrap_or_default();
        let spelled_return = fn_type.qual.split('(').next().unwrap_or("").trim().to_string();
        let params = f
            .inner
            .iter()
            .filter(|p| p.kind == "ParmVarDecl")
            .enumerate()
            .map(|(k, p)| {
                let ty = p.ty.clone().unwrap_or_default();
                let given = p.name.clone().filter(|n| !n.is_empty());
                Param {
                    unnamed: given.is_none(),
                    name: given.unwrap_or(format!("arg{k}")),
                    ty: self.resolve(&ty, 0),
                    spelled: ty.qual,
                }
            })
            .collect();
        Prototype {
            name,
            header,
            ret: self.resolve_str(&spelled_return, 0),
            spelled_return,
            params,
            variadic: f.variadic,
        }
    }

    fn resolve(&self, ty: &TypeInfo, depth: u32) -> CType {
        // The desugared type says what a typedef'd scalar or function pointer is; a pointer
        // to a typedef keeps its sugar, which resolve_str looks through.
        self.resolve_str(ty.desugared.as_deref().unwrap_or(&ty.qual), depth)
    }

    fn resolve_str(&self, s: &str, depth: u32) -> CType {
        let s = s.trim();
        if depth > 8 {
            return CType::Other;
        }
        if s.contains("(*") {
            return CType::FunctionPointer;
        }
        if s.contains('(') || s.contains('[') {
            return CType::Other;
        }
        if let Some(star) = s.rfind('*') {
            let pointee = &s[..star];
            let is_const = pointee.split_whitespace().any(|w| w == "const");
            // A struct field's pointers are never followed (a list's `next` would recurse).
            let pointee = if depth > 0 {
                CType::Other
            } else {
                self.resolve_str(pointee, depth + 1)
            };
            return CType::Pointer {
                pointee: Box::new(pointee),
                is_const,
            };
        }
        let base = unqualified(s);
        builtin(&base)
            .or_else(|| self.tag(&base, None, depth))
            .or_else(|| self.through_typedef(&base, depth))
            .unwrap_or(CType::Other)
    }

    fn through_typedef(&self, name: &str, depth: u32) -> Option<CType> {
        let t = self.typedefs.get(name)?;
        let under = unqualified(&t.ty.qual);
        if let Some(tagged) = self.tag(&under, t.tag_id.as_deref(), depth) {
            return Some(tagged);
        }
        Some(self.resolve(&t.ty, depth + 1))
    }

    /// A `struct X` / `union X` / `enum X`, by name or else by the typedef's tag declaration.
    fn tag(&self, base: &str, id: Option<&str>, depth: u32) -> Option<CType> {
        let kind = base.split_whitespace().next()?;
        if !matches!(kind, "struct" | "union" | "enum") {
            return None;
        }
        let id = self.tags.get(base).map(String::as_str).or(id);
        let Some(id) = id else {
            // Declared but never defined here: an opaque struct.
            return Some(if kind == "enum" {
                CType::Other
            } else {
                CType::Struct(vec![])
            });
        };
        if let Some(e) = self.enums.get(id) {
            return Some(CType::Enum {
                field: e.field,
                range: e.range,
            });
        }
        if self.unions.contains(id) {
            return Some(CType::Struct(vec![]));
        }
        let fields = self.records.get(id)?;
        let resolved = fields
            .iter()
            .map(|(n, t)| (n.clone(), self.resolve(t, depth + 1)))
            .collect();
        Some(CType::Struct(resolved))
    }
}

/// A type without `const`, `volatile` and `restrict`.
fn unqualified(s: &str) -> String {
    s.split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "restrict" | "__restrict" | "__restrict__"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// C's arithmetic types as clang spells them (LP64: `long` is 64 bits).
fn builtin(s: &str) -> Option<CType> {
    use FieldType::*;
    Some(match unqualified(s).as_str() {
        "void" => CType::Void,
        "float" => CType::Float(FloatType::F32),
        "double" => CType::Float(FloatType::F64),
        "long double" => CType::Float(FloatType::F80),
        "_Bool" | "bool" => CType::Bool,
        "char" | "signed char" => CType::Int(I8),
        "unsigned char" => CType::Int(U8),
        "short" | "signed short" => CType::Int(I16),
        "unsigned short" => CType::Int(U16),
        "int" | "signed int" | "signed" => CType::Int(I32),
        "unsigned int" | "unsigned" => CType::Int(U32),
        "long" | "long long" | "signed long" => CType::Int(I64),
        "unsigned long" | "unsigned long long" => CType::Int(U64),
        _ => return None,
    })
}

/// The smallest and largest enumerator; None when one has a value clang did not print.
fn enumerator_range(node: &Node) -> Option<(i128, i128)> {
    let mut next = 0i128;
    let mut range: Option<(i128, i128)> = None;
    for c in node.inner.iter().filter(|c| c.kind == "EnumConstantDecl") {
        let v = match c.inner.first() {
            None => next,
            Some(init) => init.value.as_ref()?.as_str()?.parse().ok()?,
        };
        range = Some(range.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))));
        next = v + 1;
    }
    range
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Prototypes of `header_text` through the real clang (skipped where clang-19 is missing).
    fn parse(header_text: &str) -> Option<Vec<Prototype>> {
        which::which("clang-19").ok()?;
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("other.h");
        std::fs::write(&other, "double not_wanted(double x);\ntypedef double real;\n").unwrap();
        let h = dir.path().join("lib.h");
        std::fs::write(&h, header_text).unwrap();
        Some(prototypes("clang-19", std::slice::from_ref(&h), &[]).unwrap())
    }

    fn find<'a>(p: &'a [Prototype], name: &str) -> &'a Prototype {
        p.iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no {name} in {p:#?}"))
    }

    #[test]
    fn functions_of_the_named_header_only_with_types_resolved() {
        let Some(p) = parse(
            "#include <stdint.h>\n#include \"other.h\"\n\
             typedef enum { A = -2, B = 7, C } mode;\n\
             typedef struct { double val; double err; } result;\n\
             struct pair { float a; float b; };\n\
             #define DECLARE(n) double n(real x)\n\
             DECLARE(by_macro);\n\
             int f(const real x, mode m, uint16_t k, _Bool b, result *r, struct pair *p);\n\
             long double g(double (*cb)(double), const double *xs, unsigned long n, ...);\n",
        ) else {
            return;
        };
        let names: Vec<&str> = p.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["by_macro", "f", "g"], "only lib.h's functions");
        let f = find(&p, "f");
        assert_eq!(f.ret, CType::Int(FieldType::I32));
        let tys: Vec<&CType> = f.params.iter().map(|q| &q.ty).collect();
        assert_eq!(tys[0], &CType::Float(FloatType::F64));
        assert_eq!(
            tys[1],
            &CType::Enum {
                field: FieldType::I32,
                range: Some((-2, 8))
            }
        );
        assert_eq!(tys[2], &CType::Int(FieldType::U16));
        assert_eq!(tys[3], &CType::Bool);
        let pair = CType::Struct(vec![
            ("val".into(), CType::Float(FloatType::F64)),
            ("err".into(), CType::Float(FloatType::F64)),
        ]);
        assert_eq!(
            tys[4],
            &CType::Pointer {
                pointee: Box::new(pair),
                is_const: false
            }
        );
        assert_eq!(f.params[4].spelled, "result *");
        assert!(
            matches!(tys[5], CType::Pointer { pointee, .. } if matches!(**pointee, CType::Struct(ref v) if v.len() == 2))
        );
        let g = find(&p, "g");
        assert_eq!(g.ret, CType::Float(FloatType::F80));
        assert!(g.variadic);
        assert_eq!(g.params[0].ty, CType::FunctionPointer);
        assert!(matches!(&g.params[1].ty, CType::Pointer { is_const: true, .. }));
        assert_eq!(g.params[2].ty, CType::Int(FieldType::U64));
        assert_eq!(find(&p, "by_macro").params[0].ty, CType::Float(FloatType::F64));
    }

    #[test]
    fn parameters_the_header_leaves_unnamed_are_named_by_position() {
        let Some(p) = parse("double cdf(double, double x, int *);\n") else {
            return;
        };
        let named: Vec<(&str, bool)> = p[0].params.iter().map(|q| (q.name.as_str(), q.unnamed)).collect();
        assert_eq!(named, [("arg0", true), ("x", false), ("arg2", true)]);
    }

    #[test]
    fn a_header_clang_cannot_parse_is_one_line_naming_file_and_line() {
        if which::which("clang-19").is_err() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let h = dir.path().join("bad.h");
        std::fs::write(&h, "double ok(double x);\ndouble broken(double x, );\n").unwrap();
        let e = prototypes("clang-19", std::slice::from_ref(&h), &[])
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.contains(&format!("{}:2:", h.display())), "{e}");
    }
}
