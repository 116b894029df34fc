//! targets/fdlibm: all 48 harnesses build in their three variants and call the fdlibm copy of
//! their function (never glibc's), and short campaigns measured with `numfuzz cov` cover
//! more than the seeds they start from.

use numfuzz::cov::check_coverage_build;
use numfuzz::target::Target;
use numfuzz_abi::signature::Signature;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use testkit::Tools;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn fdlibm_dir() -> PathBuf {
    repo().join("targets/fdlibm")
}

/// One row of functions.tsv.
struct Function {
    name: String,
    symbol: String,
    params: Vec<String>,
}

impl Function {
    /// The name the harness links against: public fdlibm names are renamed.
    fn linked(&self) -> String {
        if self.symbol.starts_with("__") {
            self.symbol.clone()
        } else {
            format!("fdlibm_{}", self.symbol)
        }
    }

    fn signature(&self) -> String {
        let fields: Vec<&str> = self
            .params
            .iter()
            .filter_map(|p| match p.as_str() {
                "double" => Some("f64"),
                "int" => Some("i32"),
                _ => None,
            })
            .collect();
        fields.join(",")
    }
}

fn functions() -> Vec<Function> {
    let table = std::fs::read_to_string(fdlibm_dir().join("functions.tsv")).unwrap();
    table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            Function {
                name: cols[0].into(),
                symbol: cols[2].into(),
                params: cols[4].split(',').map(String::from).collect(),
            }
        })
        .collect()
}

/// Builds every harness once per test run (build.sh caches across runs); returns bin/.
fn built() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let tools = Tools::get();
        let out = Command::new(fdlibm_dir().join("build.sh"))
            .args(["--variants", "fuzz,cov,afl"])
            .env("NUMFUZZ_CC", tools.cc())
            .stdin(Stdio::null())
            .output()
            .expect("run targets/fdlibm/build.sh");
        assert!(out.status.success(), "targets/fdlibm/build.sh failed:\n{}", text(&out));
        std::env::var_os("FDLIBM_BUILD_DIR")
            .map_or(fdlibm_dir().join("build"), PathBuf::from)
            .join("bin")
    })
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn nm(args: &[&str], file: &Path) -> Vec<String> {
    let o = Command::new("nm").args(args).arg(file).output().expect("nm (binutils)");
    assert!(o.status.success(), "nm {}: {}", file.display(), text(&o));
    String::from_utf8_lossy(&o.stdout).lines().map(String::from).collect()
}

fn defines(bin: &Path, symbol: &str) -> bool {
    nm(&[], bin)
        .iter()
        .any(|l| l.split_whitespace().collect::<Vec<_>>()[1..] == ["T", symbol])
}

#[test]
fn every_harness_builds_in_all_variants_and_links_the_fdlibm_copy() {
    let bin = built();
    let all = functions();
    assert_eq!(all.len(), 48, "Table III has 48 functions");
    for f in &all {
        for variant in ["fuzz", "cov", "afl"] {
            let exe = bin.join(variant).join(&f.name);
            assert!(exe.is_file(), "{} was not built", exe.display());
            assert!(
                defines(&exe, &f.linked()),
                "{} does not define {}",
                exe.display(),
                f.linked()
            );
        }
        let fuzz = Target::inspect_numfuzz(&bin.join("fuzz").join(&f.name)).unwrap();
        assert!(fuzz.has_harness);
        assert_eq!(
            fuzz.signature.map(|s| s.to_string()),
            Some(Signature::parse(&f.signature()).unwrap().to_string()),
            "{}",
            f.name
        );
        check_coverage_build(&bin.join("cov").join(&f.name)).unwrap();
    }
}

#[test]
fn the_rint_harness_runs_fdlibms_rint_and_a_glibc_binding_fails_the_check() {
    let bin = built();
    let cov = bin.join("cov/rint");
    // The glibc name is not what the harness calls: fdlibm's copy is renamed and linked in.
    assert!(defines(&cov, "fdlibm_rint"));
    assert!(!nm(&["-u"], &cov)
        .iter()
        .any(|l| l.trim() == "U rint" || l.contains(" rint@")));

    // Coverage of rint in newlib's s_rint.c is non-zero: the fdlibm copy ran (the NumFuzz
    // artifact measured 0 % here because its call reached the system libm).
    let dir = tempfile::tempdir().unwrap();
    let queue = dir.path().join("default/queue");
    std::fs::create_dir_all(&queue).unwrap();
    for (i, x) in [2.5f64, -0.75, 1e300, 0.0].iter().enumerate() {
        std::fs::write(queue.join(format!("id:{i:06},time:{i}")), x.to_le_bytes()).unwrap();
    }
    let o = Command::new(Tools::get().numfuzz())
        .args([
            "cov",
            dir.path().to_str().unwrap(),
            "--target",
            cov.to_str().unwrap(),
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["scope"]["name"], "rint", "{r}");
    assert!(
        r["scope"]["file"]
            .as_str()
            .unwrap()
            .ends_with("newlib/libm/common/s_rint.c"),
        "{r}"
    );
    assert!(r["covered"].as_u64().unwrap() > 0, "{r}");

    // The check build.sh runs on every harness rejects one that calls glibc's rint.
    let build = bin.parent().unwrap();
    let harness = dir.path().join("glibc_rint.c");
    std::fs::write(
        &harness,
        "#include <math.h>\n#include <stdio.h>\nint main(int c, char **v) { (void)v; printf(\"%g\\n\", rint(c + 0.5)); return 0; }\n",
    )
    .unwrap();
    let obj = dir.path().join("glibc_rint.o");
    let exe = dir.path().join("glibc_rint");
    let cc = |args: &[&std::ffi::OsStr]| {
        let o = Command::new("clang-19").args(args).output().expect("clang-19");
        assert!(o.status.success(), "{}", text(&o));
    };
    cc(&[
        "-O0".as_ref(),
        "-fno-builtin".as_ref(),
        "-c".as_ref(),
        harness.as_os_str(),
        "-o".as_ref(),
        obj.as_os_str(),
    ]);
    let lib = build.join("cov/libfdlibm.a");
    cc(&[
        obj.as_os_str(),
        lib.as_os_str(),
        "-lm".as_ref(),
        "-o".as_ref(),
        exe.as_os_str(),
    ]);
    let check = Command::new(fdlibm_dir().join("check-binding.sh"))
        .arg(build.join("cov/rename.map"))
        .arg(&obj)
        .arg(&exe)
        .arg("fdlibm_rint")
        .output()
        .unwrap();
    assert!(
        !check.status.success(),
        "check-binding.sh accepted a harness bound to glibc's rint"
    );
    assert!(text(&check).contains("never calls fdlibm_rint"), "{}", text(&check));
    let check = Command::new(fdlibm_dir().join("check-binding.sh"))
        .arg(build.join("cov/rename.map"))
        .arg(&obj)
        .arg(&exe)
        .arg("rint")
        .output()
        .unwrap();
    assert!(!check.status.success());
    assert!(
        text(&check).contains("calls rint, which binds to glibc's libm"),
        "{}",
        text(&check)
    );
}

fn covered(out: &Path, cov_build: &Path, function: &str) -> (u64, u64) {
    let o = Command::new(Tools::get().numfuzz())
        .arg("cov")
        .arg(out)
        .args([
            "--target",
            cov_build.to_str().unwrap(),
            "--function",
            function,
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    (r["covered"].as_u64().unwrap(), r["total"].as_u64().unwrap())
}

#[test]
fn three_second_campaigns_cover_more_than_their_seeds() {
    let bin = built();
    let all = functions();
    for name in ["pow", "fmod", "atan2"] {
        let f = all.iter().find(|f| f.name == name).unwrap();
        let dir = tempfile::tempdir().unwrap();
        // The seeds alone: what a campaign without -i starts from, as its own "campaign".
        let seeds_out = dir.path().join("seeds");
        let queue = seeds_out.join("default/queue");
        std::fs::create_dir_all(&queue).unwrap();
        let sig = Signature::parse(&f.signature()).unwrap();
        for (i, seed) in numfuzz_engine::mutators::seeds(&sig).iter().enumerate() {
            std::fs::write(queue.join(format!("id:{i:06},time:0,orig:seed")), seed).unwrap();
        }
        let cov_build = bin.join("cov").join(name);
        let (seeds_only, total) = covered(&seeds_out, &cov_build, &f.symbol);

        let out = dir.path().join("out");
        let o = Command::new(Tools::get().numfuzz())
            .args(["run", "-o", out.to_str().unwrap(), "-V", "3", "--no-tui", "--"])
            .arg(bin.join("fuzz").join(name))
            .env("CI", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
        let (campaign, total2) = covered(&out, &cov_build, &f.symbol);
        assert_eq!(total, total2);
        eprintln!("{name}: seeds {seeds_only}/{total}, 3 s campaign {campaign}/{total}");
        assert!(
            campaign > seeds_only,
            "{name}: a 3 s campaign covers {campaign}/{total}, its seeds alone {seeds_only}"
        );
    }
}
