//! The contract between a numfuzz target and the numfuzz fuzzer, defined once.
//!
//! Everything both sides must agree on lives here: exception kinds and their slot numbering,
//! the operation codes the LLVM pass records, the static site record, the shared-memory
//! layout, environment variable names, the input signature and its encoding, the JSON
//! report format, and the ErrBits distance. The LLVM pass (C++) gets the same definitions
//! through [`c_header::generate`], which `numfuzz-cc`'s build script turns into
//! `numfuzz_abi.h`.

pub mod c_header;
pub mod cmp;
pub mod copies;
pub mod domain;
pub mod env;
pub mod errbits;
pub mod kind;
pub mod op;
pub mod probe;
pub mod region_view;
pub mod report;
pub mod serve;
pub mod shadow;
pub mod shm;
pub mod signature;
pub mod site;
pub mod taint;
pub mod value;

pub use value::decimal;

pub use kind::ExceptionKind;
pub use op::{FloatType, Op};
pub use signature::{FieldType, Signature};
pub use value::Value;

/// Version of this contract. Bumped on any incompatible change of a layout or meaning; the
/// runtime refuses a shared-memory region of another version and the fuzzer refuses a target
/// whose runtime marker names another version. (4: a crash is reported as a JSON `crash`
/// event in `NUMFUZZ_REPORT=json` mode instead of text lines. 5: the header's probe words,
/// through which the local-search stage reads one slot's exact gap. 6: fast runs, asked for with
/// `shm::MODE_FAST`. 7: an in-process target is started once per core by `numfuzz run`, which
/// runs the broker, and joins it as the client named in `env::CLIENT`. 8: a taint build repairs
/// the (site, kind) named in `env::REPAIR`. 9: shadow builds, whose results carry their value
/// in a wider format; see `shadow`. 10: split functions have a third copy, picked by `copies::SPECIALS`.)
pub const ABI_VERSION: u32 = 10;

/// Name of the ELF section holding the harness's `NUMFUZZ_SIGNATURE` string.
pub const SIGNATURE_SECTION: &str = "__numfuzz_sig";
/// Name of the ELF section holding the static site records emitted by the pass.
pub const SITES_SECTION: &str = "__numfuzz_sites";
/// Name of the ELF section holding the harness's `NUMFUZZ_FUNCTION` name (what the reference
/// oracle is asked about).
pub const FUNCTION_SECTION: &str = "__numfuzz_fn";
/// Name of the ELF section that marks a harness whose function is declared defined inside its
/// declared domains (`NUMFUZZ_DEFINED_IN_DOMAIN()`): a NaN result there is a wrong answer.
pub const DEFINED_SECTION: &str = "__numfuzz_defined";
/// Name of the ELF section a taint build (`NUMFUZZ_CC_TAINT=1`) carries: a replay-only build
/// whose values carry the findings they came from (see `taint`).
pub const TAINT_SECTION: &str = "__numfuzz_taint";
/// Name of the ELF section a shadow build (`NUMFUZZ_CC_SHADOW=1`) carries: a replay-only build
/// whose values carry a shadow in x87 extended precision (see `shadow`).
pub const SHADOW_SECTION: &str = "__numfuzz_shadow";
/// Name of the ELF section holding the absolute path of the source file that defines the
/// harness (`LLVMFuzzerTestOneInput`), for reproducers built outside numfuzz.
pub const HARNESS_SECTION: &str = "__numfuzz_harness";
/// Name of the ELF section the pass puts every function of the program it compiles in: the
/// code a run may be cut out of at its time limit without leaving a runtime, libc or libm frame
/// half done (the runtime's `run_cut`).
pub const CODE_SECTION: &str = "__numfuzz_code";
/// Name of the ELF section holding the runtime's marker string (`numfuzz-runtime abi=N`).
pub const RUNTIME_SECTION: &str = "__numfuzz_rt";
/// Prefix of the runtime marker string; the ABI version follows it in decimal.
pub const RUNTIME_MARKER_PREFIX: &str = "numfuzz-runtime abi=";
