//! The identity of a finding: one floating-point exception kind at one operation in the
//! source, stable across rebuilds of the target (site numbers are not).

use numfuzz_abi::kind::ExceptionKind;
use numfuzz_abi::report::ExceptionReport;
use numfuzz_abi::site::SiteInfo;
use std::fmt;
use std::path::Path;

/// A finding's identity: kind, source path (directory + file), line, column, operation. Its
/// order (kind, then path, line, column) is the order reports list findings in.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FindingKey {
    pub kind: ExceptionKind,
    pub path: String,
    pub line: u32,
    pub column: u32,
    pub op: String,
}

impl FindingKey {
    pub fn of(kind: ExceptionKind, site: &SiteInfo) -> FindingKey {
        FindingKey {
            kind,
            path: normalize(&site.path()),
            line: site.line,
            column: site.column,
            op: site.op.name().to_string(),
        }
    }

    /// The same operation up to the directory: kind, file name, line, column, operation.
    /// Two builds of one source in different directories (a target and its taint build)
    /// agree on it.
    pub fn loosely_equals(&self, other: &FindingKey) -> bool {
        let name = |p: &str| Path::new(p).file_name().map(|n| n.to_os_string());
        self.kind == other.kind
            && self.line == other.line
            && self.column == other.column
            && self.op == other.op
            && name(&self.path) == name(&other.path)
    }

    /// `e` is this finding's exception.
    pub fn matches(&self, e: &ExceptionReport) -> bool {
        FindingKey::of(e.kind, &e.site) == *self
    }

    /// A file-name-safe name, `Overflow-exp.c-406-22-fmul` (the file's last component; two
    /// files of one name in different directories need a suffix, see [`FindingKey::ids`]).
    pub fn base_id(&self) -> String {
        let file = Path::new(&self.path)
            .file_name()
            .map_or_else(|| self.path.clone(), |f| f.to_string_lossy().into_owned());
        let file: String = file
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("{}-{file}-{}-{}-{}", self.kind, self.line, self.column, self.op)
    }

    /// Distinct ids for `keys` (in the given order): [`FindingKey::base_id`], with `-2`, `-3`,
    /// ... where two keys share one.
    pub fn ids<'a>(keys: impl IntoIterator<Item = &'a FindingKey>) -> Vec<String> {
        let mut taken = std::collections::HashSet::new();
        keys.into_iter()
            .map(|k| {
                let base = k.base_id();
                let mut id = base.clone();
                let mut n = 2;
                while !taken.insert(id.clone()) {
                    id = format!("{base}-{n}");
                    n += 1;
                }
                id
            })
            .collect()
    }
}

/// `Overflow /src/specfunc/exp.c:406:22 fmul`: the identity as one string (report JSON `key`,
/// what the benchmark scripts merge findings of several campaigns on).
impl fmt::Display for FindingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}:{}:{} {}",
            self.kind, self.path, self.line, self.column, self.op
        )
    }
}

/// `path` with `.` and `..` components resolved lexically (`obj/specfunc/../../src/exp.c` is
/// `src/exp.c`), as the compiler named the file from different build directories.
fn normalize(path: &Path) -> String {
    use std::path::Component;
    let mut out: Vec<Component<'_>> = Vec::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            Component::ParentDir if matches!(out.last(), Some(Component::RootDir)) => {}
            _ => out.push(c),
        }
    }
    out.iter().collect::<std::path::PathBuf>().display().to_string()
}

/// Characters that cannot appear in an AFL-style file name component.
fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '/' || c == ',' || c.is_whitespace() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// `exp.c:406:17`: how a site appears in an entry name (`site:` field). Only the file's last
/// component, so the name stays one path component; exceptions.jsonl has the full path.
pub fn site_label(site: &SiteInfo) -> String {
    let file = Path::new(&site.file)
        .file_name()
        .map_or(site.file.clone(), |f| f.to_string_lossy().into_owned());
    format!("{}:{}:{}", sanitize(&file), site.line, site.column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_abi::{FloatType, Op};

    fn site(file: &str, dir: &str) -> SiteInfo {
        SiteInfo {
            id: 0,
            op: Op::FMul,
            ty: FloatType::F64,
            to: None,
            file: file.into(),
            directory: dir.into(),
            line: 406,
            column: 17,
            function: "f".into(),
        }
    }

    #[test]
    fn identity_is_the_source_location_not_the_site_number() {
        let a = site("specfunc/exp.c", "/b");
        let mut b = a.clone();
        b.id = 99;
        let k = FindingKey::of(ExceptionKind::Overflow, &a);
        assert_eq!(k, FindingKey::of(ExceptionKind::Overflow, &b));
        assert_eq!(k.path, "/b/specfunc/exp.c");
        assert_eq!(k.to_string(), "Overflow /b/specfunc/exp.c:406:17 fmul");
        assert_eq!(site_label(&a), "exp.c:406:17");
        assert_eq!(site_label(&site("my dir/a,b.c", "/")), "a_b.c:406:17");
    }

    #[test]
    fn paths_are_resolved_lexically_and_builds_agree_loosely() {
        let k = |file: &str, dir: &str| FindingKey::of(ExceptionKind::Overflow, &site(file, dir));
        // Out-of-tree builds of one source tree in two build directories.
        assert_eq!(
            k("../../../src/specfunc/exp.c", "/b/fuzz/obj/specfunc").path,
            "/b/src/specfunc/exp.c"
        );
        assert_eq!(
            k("../../../src/specfunc/exp.c", "/b/fuzz/obj/specfunc"),
            k("../../../src/specfunc/./exp.c", "/b/taint/obj/specfunc")
        );
        assert_eq!(k("/../a.c", "").path, "/a.c");
        assert_eq!(k("../a.c", "").path, "../a.c");
        assert!(k("/tmp/one/s.c", "").loosely_equals(&k("/tmp/two/s.c", "")));
        assert!(!k("/tmp/one/s.c", "").loosely_equals(&k("/tmp/one/t.c", "")));
    }

    #[test]
    fn ids_are_distinct_and_file_name_safe() {
        let k1 = FindingKey::of(ExceptionKind::Overflow, &site("/x/exp.c", ""));
        let k2 = FindingKey::of(ExceptionKind::Overflow, &site("/y/exp.c", ""));
        let k3 = FindingKey::of(ExceptionKind::Underflow, &site("/y/e x+p.c", ""));
        assert_eq!(
            FindingKey::ids([&k1, &k2, &k3]),
            [
                "Overflow-exp.c-406-17-fmul",
                "Overflow-exp.c-406-17-fmul-2",
                "Underflow-e_x_p.c-406-17-fmul"
            ]
        );
    }
}
