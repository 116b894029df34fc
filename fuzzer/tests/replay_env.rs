//! A replay started from inside a campaign's environment (a shell or a script with the
//! variables a campaign sets for its targets) behaves as one started from a clean shell: the
//! same findings, the same references, and the same coverage.

use serde_json::Value;
use std::process::Command;
use testkit::{both, compile, compile_with_taint, HandCampaign, Tools};

const HARNESS: &str = r#"#include <numfuzz.h>
#include <math.h>
NUMFUZZ_SIGNATURE("f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0);
  double r = 2 * exp(x) / (x * x);
  NUMFUZZ_RESULT(r);
  return 0;
}
"#;

/// What a campaign's targets see, with values that would send a target anywhere but a replay.
const CAMPAIGN_ENV: &[(&str, &str)] = &[
    ("NUMFUZZ_ENGINE", "/nonexistent/config.json"),
    ("NUMFUZZ_CLIENT", "3"),
    ("NUMFUZZ_SHM_ID", "123456"),
    ("NUMFUZZ_SITES", "/nonexistent/sites"),
    ("NUMFUZZ_REPORT", "text"),
    ("NUMFUZZ_LOOP", "7"),
    ("NUMFUZZ_PRECISE", "0"),
    ("NUMFUZZ_MEM_LIMIT_MB", "1"),
    ("NUMFUZZ_REPAIR", "all"),
    ("__AFL_SHM_ID", "123456"),
    ("__AFL_SHM_FUZZ_ID", "123457"),
    ("AFL_MAP_SIZE", "65536"),
    ("__AFL_PERSISTENT", "1"),
];

fn numfuzz(args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = Command::new(Tools::get().numfuzz());
    cmd.args(args).env("CI", "1");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run numfuzz")
}

#[test]
fn a_campaign_environment_does_not_reach_triage_or_coverage_replays() {
    let built = compile_with_taint("overflow", &[("overflow.c", HARNESS)], &["-O2"]);
    let root = built.path("out");
    let c = HandCampaign::new(&root, &built.exe, &["default"]);
    c.crash("default", "id:000000,spurious", &709.8f64.to_le_bytes());
    c.crash("default", "id:000001,true", &800.0f64.to_le_bytes());
    let triage = |env: &[(&str, &str)]| {
        let o = numfuzz(&["triage", root.to_str().unwrap(), "--format", "json"], env);
        assert!(o.status.success(), "{}", both(&o));
        let mut doc: Value = serde_json::from_slice(&o.stdout).unwrap();
        // Times and paths of this run are not what is compared.
        for key in ["generated", "duration_ms", "command_line"] {
            doc.as_object_mut().unwrap().remove(key);
        }
        doc
    };
    let clean = triage(&[]);
    assert_eq!(clean["findings"].as_array().map(Vec::len), Some(1), "{clean:#}");
    assert_eq!(triage(CAMPAIGN_ENV), clean);

    let cov_build = compile(
        "overflow",
        &[("overflow.c", HARNESS)],
        &["-O2"],
        &[("NUMFUZZ_CC_COVERAGE", "1")],
    );
    let cov = |env: &[(&str, &str)]| {
        let o = numfuzz(
            &[
                "cov",
                root.to_str().unwrap(),
                "--target",
                cov_build.exe.to_str().unwrap(),
                "--file",
                "overflow.c",
                "--format",
                "json",
            ],
            env,
        );
        assert!(o.status.success(), "{}", both(&o));
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let clean = cov(&[]);
    assert_eq!(cov(CAMPAIGN_ENV), clean);
}
