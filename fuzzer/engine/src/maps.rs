//! The target's maps as the engine names them: the observer type of a byte map and the names
//! the distance maps' observers, histories and favourites are kept under.

use crate::meta::AflCounters;
use libafl::feedbacks::MapFeedbackMetadata;
use libafl::observers::StdMapObserver;
use libafl::{HasMetadata, HasNamedMetadata};

/// Observer over a numfuzz byte map (ErrBits, exceptions, comparison distances).
pub type ByteMapObserver = StdMapObserver<'static, u8, false>;

/// Names of the distance maps' observers (their history and favourites are kept under them).
pub const ERRBITS_MAP: &str = "errbits";
pub const CMP_MAP: &str = "cmp_distances";
/// Name of the edge map's observer, and so of its feedback's metadata and user stat.
pub const EDGES_MAP: &str = "edges";

/// Edges the campaign has covered: the edge feedback's count in the state.
pub fn edges_covered<S: HasNamedMetadata>(state: &S) -> usize {
    (state.named_metadata_map())
        .get::<MapFeedbackMetadata<u8>>(EDGES_MAP)
        .map_or(0, |m| m.num_covered_map_indexes)
}

/// What the campaign has found that counts as progress: edges covered and exception inputs
/// saved. Not corpus entries: a descent keeps an input at almost every step that lowers its
/// gap, and weighed by those, every descent on GSL's bessel_Jnu out-found mutation several
/// times over while reaching 2 targets in 30.
pub fn progress<S: HasMetadata + HasNamedMetadata>(state: &S) -> u64 {
    let saved = state.metadata::<AflCounters>().map_or(0, |c| c.crashes);
    edges_covered(state) as u64 + saved
}
