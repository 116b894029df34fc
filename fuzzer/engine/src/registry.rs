//! The metadata types a campaign keeps in LibAFL's `SerdeAnyMap`s, registered by hand.
//!
//! A `SerdeAnyMap` (a state's or a testcase's metadata) can only hold types whose deserializer
//! is registered: a client's state is serialized when it restarts, and read back by its
//! successor. LibAFL's `serdeany_autoreg` registers every such type of LibAFL through a
//! start-up constructor each, which keeps all their deserializers (13 instances of
//! `MapFeedbackMetadata` alone) in every harness: 1.25 MB of erased-serde code in a 4.9 MB
//! harness. numfuzz turns it off and registers the types its components store.
//!
//! A type missing from [`register`] panics at its first insert ("inserted without
//! registration"), so a component that starts storing a new type must be added here; the
//! campaign tests exercise every stage and feedback and would show it.

use std::sync::Once;

/// Registers every metadata type numfuzz's campaign stores. Idempotent and thread-safe; call
/// it before a state is created or restored (the campaign entry points and the unit tests
/// that build states do).
pub fn register() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        // SAFETY: `call_once` runs this exactly once, with no other registration in progress
        // (numfuzz registers nowhere else, and LibAFL registers nothing without
        // `serdeany_autoreg`).
        unsafe { register_all() }
    });
}

unsafe fn register_all() {
    use crate::hangs::HangCheck;
    use crate::local_search::LocalSearchRecord;
    use crate::meta::{
        AflCounters, DistanceHistory, DistanceProgress, DistanceTopRated, EscapesSeen, ExceptionsSeen, NewEdges,
        NewExceptions, Traced, UnprecededSeen,
    };
    use crate::run_mode::{BarrenPreciseTurns, FirstTurnDone, RunModeRecord};
    use crate::saved_inputs::PendingSaves;
    use crate::time_use::TimeUse;
    use libafl::corpus::SchedulerTestcaseMetadata;
    use libafl::executors::ExitKind;
    use libafl::feedbacks::{MapFeedbackMetadata, MapIndexesMetadata, MapNoveltiesMetadata};
    use libafl::mutators::{LogMutationMetadata, MOpt, Tokens};
    use libafl::schedulers::minimizer::{IsFavoredMetadata, TopRatedsMetadata};
    use libafl::stages::{ExecutionCountRestartHelperMetadata, RetryCountRestartHelper};
    use libafl_bolts::serdeany::RegistryBuilder;

    macro_rules! register {
        ($($t:ty),* $(,)?) => {
            // SAFETY: see `register`.
            $(unsafe { RegistryBuilder::register::<$t>() };)*
        };
    }
    register!(
        // State: the edge feedbacks' history, the minimizer's favourites, MOpt's swarms, the
        // dictionary, the stages' restart bookkeeping.
        MapFeedbackMetadata<u8>,
        TopRatedsMetadata,
        MOpt,
        Tokens,
        RetryCountRestartHelper,
        ExecutionCountRestartHelperMetadata,
        // Testcases: the minimizer's indexes and favoured mark, novelties, the exit kind the
        // in-process executor adds to a crashing input, scheduling and mutation records.
        MapIndexesMetadata,
        MapNoveltiesMetadata,
        IsFavoredMetadata,
        ExitKind,
        SchedulerTestcaseMetadata,
        LogMutationMetadata,
        // numfuzz's own.
        AflCounters,
        ExceptionsSeen,
        EscapesSeen,
        UnprecededSeen,
        DistanceHistory,
        DistanceProgress,
        DistanceTopRated,
        NewEdges,
        NewExceptions,
        Traced,
        RunModeRecord,
        LocalSearchRecord,
        HangCheck,
        PendingSaves,
        FirstTurnDone,
        BarrenPreciseTurns,
        TimeUse,
    );
}
