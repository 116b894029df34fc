//! What a client keeps (the corpus feedback) and what it reports as a finding (the objective).

use super::observers::{ObserverHandles, Observers};
use crate::config::CampaignConfig;
use crate::context::Instance;
use crate::feedbacks::{DistanceFeedback, ExceptionFeedback, MarksNewEdges, Record, Recorder};
use crate::hangs::HangConfirmation;
use libafl::feedbacks::{CrashFeedback, MaxMapFeedback, TimeFeedback, TimeoutFeedback};
use libafl::{feedback_and_fast, feedback_not, feedback_or, feedback_or_fast};
use libafl_bolts::tuples::MatchNameRef;
use numfuzz_abi::signature::Signature;
use std::sync::Arc;

pub use crate::client_types::{CorpusFeedback, EdgesFeedback, Objective};

/// Looks an observer up; every handle in [`ObserverHandles`] names one of [`Observers`].
macro_rules! observer {
    ($observers:expr, $handle:expr) => {
        $observers
            .get(&$handle)
            .expect("ObserverHandles are made from these observers")
    };
}

/// Keeps an input for a new (site, kind) (saved to `crashes/` as well, and again as an escape
/// when it reached a result unreported), a new edge, a smaller ErrBits (unless `--no-errbits`)
/// or a smaller branch distance (unless `--no-cmp`). Every kept input goes to `queue/`. A
/// time-out is never kept, as AFL++ never queues one: its mutants would time out too (an
/// in-process run cut at the limit returns as one, see runtime `run_cut`).
pub fn corpus_feedback(
    observers: &Observers,
    handles: &ObserverHandles,
    cfg: &CampaignConfig,
    signature: Option<Signature>,
    instance: &Arc<Instance>,
) -> CorpusFeedback {
    let run_flags = observer!(observers, handles.run_flags);
    let escapes = cfg.escapes.then_some(signature);
    Recorder::new(
        feedback_and_fast!(
            feedback_not!(TimeoutFeedback::new()),
            feedback_or!(
                ExceptionFeedback::new(
                    observer!(observers, handles.exceptions),
                    Some(run_flags),
                    escapes,
                    instance.clone()
                ),
                MarksNewEdges::new(MaxMapFeedback::new(observer!(observers, handles.edges))),
                DistanceFeedback::new(observer!(observers, handles.errbits), Some(run_flags), cfg.errbits),
                DistanceFeedback::new(observer!(observers, handles.cmp_distances), Some(run_flags), cfg.cmp),
                TimeFeedback::new(observer!(observers, handles.time))
            )
        ),
        instance.clone(),
        Record::Queue,
    )
}

/// A real crash on a new edge path or a time-out on an edge no time-out hit before, saved to `crashes/` or `hangs/` (a crash
/// the memory limit caused is named `oom`). A time-out counts only at the full time limit; one
/// at the calibrated limit is confirmed first (see [`crate::hangs`]).
/// (Floating-point exceptions are corpus feedback, not objectives: see `feedbacks`.)
pub fn objective(observers: &Observers, handles: &ObserverHandles, instance: &Arc<Instance>) -> Objective {
    Recorder::new(
        feedback_and_fast!(
            feedback_or_fast!(CrashFeedback::new(), TimeoutFeedback::new()),
            // First, so that every time-out past an exception is counted as cut, whatever
            // edges a crash or a saved hang hit before.
            HangConfirmation::new(
                observer!(observers, handles.run_flags),
                observer!(observers, handles.edges)
            ),
            MaxMapFeedback::with_name("crash_edges", observer!(observers, handles.edges))
        ),
        instance.clone(),
        Record::Findings,
    )
    .with_run_flags(observer!(observers, handles.run_flags))
}
