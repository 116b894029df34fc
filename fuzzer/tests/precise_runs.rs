//! Every fast run that raises a flag runs again precisely, even on an edge path and flag set
//! seen before: two operations of one path that raise the same flag for different inputs look
//! alike to the edges and the flags, and the second one's site is found only by its own precise
//! run. Counted with `fuzzer_stats`' `precise_runs`.

use numfuzz_abi::op::Op;
use numfuzz_abi::ExceptionKind::Overflow;
use std::collections::BTreeSet;
use testkit::campaign;

/// One path for every input; either product overflows, depending on its own field (line 5).
const TWO_PRODUCTS: &str = r#"#include <numfuzz.h>
NUMFUZZ_SIGNATURE("f64,f64");
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  double x = nf_f64(data, size, 0), y = nf_f64(data, size, 1);
  double r = x * 1e300 + y * 1e300;
  NUMFUZZ_RESULT(r);
  return 0;
}
"#;

#[test]
fn a_second_site_raising_the_same_flag_on_a_known_path_is_found() {
    let _turn = campaign::one_at_a_time();
    let built = testkit::compile("two_products", &[("two_products.c", TWO_PRODUCTS)], &["-O2"], &[]);
    let seeds = built.path("seeds");
    std::fs::create_dir_all(&seeds).unwrap();
    // The first product overflows, the second does not.
    let seed: Vec<u8> = [1e10f64, 1.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    std::fs::write(seeds.join("first"), seed).unwrap();
    // Without ErrBits no distance leads to the second overflow: it is found by a fast run
    // whose path and flags are the seed's.
    let instance = campaign::fuzz(
        &built.exe,
        &built.path("out"),
        5,
        &["-i", seeds.to_str().unwrap(), "--no-errbits", "--no-local-search"],
    );
    let columns: BTreeSet<u32> = instance
        .exceptions()
        .iter()
        .filter(|e| e.kind == Overflow && e.site.line == 5 && e.site.op == Op::FMul)
        .map(|e| e.site.column)
        .collect();
    assert_eq!(
        columns.len(),
        2,
        "both products' overflows: {:#?}",
        instance.exceptions()
    );
    let (execs, precise) = (
        campaign::stat(&instance, "execs_done"),
        campaign::stat(&instance, "precise_runs"),
    );
    assert!(precise > 0 && precise <= execs, "{precise} precise runs of {execs}");
}
