//! Which checked operations of a special-result pass gave a special result.
//!
//! The pass gives every checked operation of a special-result copy (numfuzz-abi
//! `copies::SPECIALS`, which `precise` runs after a fast run that raised a flag) a bit, set
//! when its result is zero, subnormal, the least normal, infinite or NaN and none of its operands
//! was infinite or NaN (for a conversion to an integer: out of range). Every exception from
//! finite operands leaves such a result at its site, so the set of special sites of a run holds
//! every site a precise re-run would record, except an Invalid made from infinities
//! (`inf - inf`), which follows an infinity made at a site the set holds. An infinity or NaN
//! carried through a site raises nothing there and is left out: kept, it put the site in the
//! re-run throttle's fruitless counts, and the run in which the same site overflowed itself was
//! not re-run (GSL's fermi_dirac.c:1022:55; `fuzzer/tests/precise_runs.rs`). The bits gather in
//! the copy's locals; each return ORs them into its function's words of the module's array and
//! sets the module's dirty byte. Each module's constructor hands both here
//! (`__numfuzz_register_fast_specials`).
//!
//! After each special-result pass [`take`] hashes the words that went non-zero and clears
//! them, so a pass starts from none. A module that is not dirty costs one byte load.

use std::sync::Mutex;

/// One module's words and dirty byte, as its constructor registered them.
struct ModuleWords {
    words: *mut u64,
    count: usize,
    dirty: *mut u8,
}

// SAFETY: the pointers are the module's own globals, which live as long as the program; they
// are read and cleared by the harness thread between runs.
unsafe impl Send for ModuleWords {}

static MODULES: Mutex<Vec<ModuleWords>> = Mutex::new(Vec::new());

/// Called by every instrumented module's constructor (numfuzz-abi
/// `symbols::REGISTER_FAST_SPECIALS`).
///
/// # Safety
/// `words` points to `count` writable `u64`s and `dirty` to a writable byte, both living as
/// long as the program.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __numfuzz_register_fast_specials(words: *mut u64, count: u64, dirty: *mut u8) {
    if words.is_null() || dirty.is_null() || count == 0 {
        return;
    }
    let mut modules = MODULES.lock().unwrap_or_else(|e| e.into_inner());
    modules.push(ModuleWords {
        words,
        count: count as usize,
        dirty,
    });
}

/// The special sites of one special-result pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpecialSites {
    /// 0 when there were none; two passes with the same special sites hash alike.
    pub hash: u64,
    /// The words that went non-zero: (place, bits), the place being the module's place in
    /// registration order and the word's in its module, which name a site's bit within this
    /// process.
    pub words: Vec<(u64, u64)>,
}

/// The special sites of the special-result pass that just ended, and the words cleared for the
/// next run.
pub fn take() -> SpecialSites {
    let modules = MODULES.lock().unwrap_or_else(|e| e.into_inner());
    let mut sites = SpecialSites::default();
    for (m, module) in modules.iter().enumerate() {
        // SAFETY: registered as living as long as the program, and only this thread writes
        // them between runs.
        unsafe {
            if module.dirty.read_volatile() == 0 {
                continue;
            }
            module.dirty.write_volatile(0);
            let words = std::slice::from_raw_parts_mut(module.words, module.count);
            for (w, word) in words.iter_mut().enumerate() {
                if *word != 0 {
                    let place = (m as u64) << 32 | w as u64;
                    sites.hash = mix(sites.hash, place, *word);
                    sites.words.push((place, *word));
                    *word = 0;
                }
            }
        }
    }
    sites
}

/// Order-dependent mixing of (place, bits) into `hash`; `take` visits words in one order.
fn mix(hash: u64, place: u64, bits: u64) -> u64 {
    let mut h = (hash ^ place).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= bits.rotate_left(17);
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^ (h >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Registers a module of `N` words the test owns; leaked, like a module's globals.
    fn module<const N: usize>() -> (&'static mut [u64; N], &'static mut u8) {
        let words = Box::leak(Box::new([0u64; N]));
        let dirty = Box::leak(Box::new(0u8));
        // SAFETY: leaked, so they live as long as the program.
        unsafe { __numfuzz_register_fast_specials(words.as_mut_ptr(), N as u64, dirty) };
        (words, dirty)
    }

    #[test]
    fn sites_tell_runs_apart_and_each_run_starts_from_none() {
        let (words, dirty) = module::<2>();
        let words: *mut [u64; 2] = words;
        let dirty: *mut u8 = dirty;
        let run = |bits: [u64; 2]| {
            // SAFETY: the test's own leaked module, written as a copy's return would.
            unsafe {
                (*words)[0] |= bits[0];
                (*words)[1] |= bits[1];
                *dirty |= u8::from(bits != [0, 0]);
            }
            take().hash
        };
        let first = run([0b01, 0]);
        let second = run([0b10, 0]);
        let both = run([0b11, 0]);
        let high = run([0, 0b01]);
        assert_ne!(first, second, "a*b or c*d");
        assert!(both != first && both != second);
        assert!(high != first, "the word counts, not only the bits");
        assert_eq!(run([0b01, 0]), first, "the same sites hash alike, nothing carried over");
        assert_eq!(run([0, 0]), 0);
        // SAFETY: as above.
        unsafe {
            (*words)[1] = 0b110;
            *dirty = 1;
        }
        assert_eq!(take().words.len(), 1, "one word went non-zero");
        // SAFETY: as above.
        assert_eq!(unsafe { *words }, [0, 0]);
    }
}
