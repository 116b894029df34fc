//! The copies of a split function, and the values of the byte
//! ([`c_header::symbols::PRECISE`](crate::c_header::symbols::PRECISE)) that picks which one
//! runs: each split function reads it at its entry.

/// The function itself: the program's code, its coverage guards and the sentinels. A fuzzed
/// input's coverage is this copy's.
pub const FAST: u8 = 0;
/// `<name>.numfuzz.precise`: every check, every ErrBits measure, the comparison hooks. Programs
/// with their own `main` run only these (the byte's initial value).
pub const PRECISE: u8 = 1;
/// `<name>.numfuzz.specials`: the program's code with a bit per checked operation, set when
/// its result is special (the runtime's `fast_specials`). Run only after a fast run that
/// raised a flag, to tell which sites went special; its edges are discarded.
pub const SPECIALS: u8 = 2;
