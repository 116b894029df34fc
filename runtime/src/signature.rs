//! The harness's `NUMFUZZ_SIGNATURE`, read from its section, and the typed field readers'
//! offsets.

use numfuzz_abi::signature::{FieldType, Signature};
use std::ffi::c_uint;
use std::sync::OnceLock;

unsafe extern "C" {
    fn numfuzz_shim_signature(len: *mut usize) -> *const u8;
}

/// The distinct signature strings embedded in the binary.
pub fn specs() -> Vec<String> {
    let mut len = 0usize;
    // SAFETY: the shim returns the section bounds (or null).
    let ptr = unsafe { numfuzz_shim_signature(&mut len) };
    if ptr.is_null() || len == 0 {
        return Vec::new();
    }
    // SAFETY: `len` bytes of the section are readable.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    let mut out: Vec<String> = Vec::new();
    for part in bytes.split(|&b| b == 0) {
        let s = String::from_utf8_lossy(part).trim().to_string();
        if !s.is_empty() && !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// The signature, or why there is none usable.
pub fn get() -> &'static Result<Signature, String> {
    static SIG: OnceLock<Result<Signature, String>> = OnceLock::new();
    SIG.get_or_init(|| {
        let specs = specs();
        match specs.as_slice() {
            [] => Err(
                "the harness has no NUMFUZZ_SIGNATURE(\"...\") declaration; add one next to LLVMFuzzerTestOneInput"
                    .into(),
            ),
            [one] => Signature::parse(one).map_err(|e| format!("NUMFUZZ_SIGNATURE: {e}")),
            many => Err(format!(
                "the program declares {} different signatures ({}); keep one NUMFUZZ_SIGNATURE",
                many.len(),
                many.join(" | ")
            )),
        }
    })
}

fn fail(msg: &str) -> ! {
    eprintln!("numfuzz: {msg}");
    std::process::abort()
}

/// Offset of field `field`, which the reader expects to be of type `code`.
#[unsafe(no_mangle)]
pub extern "C" fn numfuzz_field_offset(field: c_uint, code: c_uint) -> usize {
    let sig = match get() {
        Ok(s) => s,
        Err(e) => fail(e),
    };
    let expected = FieldType::from_code(code);
    let Some(&actual) = sig.fields().get(field as usize) else {
        fail(&format!(
            "field {field} read, but the signature `{sig}` has {} fields",
            sig.len()
        ))
    };
    if Some(actual) != expected {
        let reader = expected.map_or("?", |t| t.name());
        fail(&format!(
            "nf_{reader}(…, {field}) reads field {field}, which the signature `{sig}` declares as {actual}"
        ));
    }
    sig.range(field as usize).start
}
