//! The LibAFL types a client is made of, named once and below every module that names them:
//! the client assembles them (`client/`), and stages such as input-to-state's (`i2s`) are
//! written against them, so neither imports the other for its types.

use crate::feedbacks::{DistanceFeedback, ExceptionFeedback, MarksNewEdges, Recorder};
use crate::hangs::HangConfirmation;
use crate::maps::ByteMapObserver;
use crate::run_flags::RunFlagsObserver;
use crate::saved_inputs::SavingCorpus;
use crate::scheduler::DistanceFavoring;
use libafl::corpus::InMemoryCorpus;
use libafl::events::LlmpRestartingEventManager;
use libafl::feedbacks::{
    CombinedFeedback, CrashFeedback, LogicEagerOr, LogicFastAnd, LogicFastOr, MaxMapFeedback, NotFeedback,
    TimeFeedback, TimeoutFeedback,
};
use libafl::fuzzer::StdFuzzer;
use libafl::inputs::{BytesInput, BytesInputConverter};
use libafl::observers::{ExplicitTracking, HitcountsMapObserver, TimeObserver};
use libafl::schedulers::{IndexesLenTimeMinimizerScheduler, QueueScheduler};
use libafl::state::StdState;
use libafl::NopInputFilter;
use libafl_bolts::rands::StdRand;
use libafl_bolts::shmem::{ShMemProvider, StdShMemProvider};
use libafl_bolts::tuples::tuple_list_type;

pub type Hitcounts = HitcountsMapObserver<ByteMapObserver>;
pub type EdgesObserver = ExplicitTracking<Hitcounts, true, false>;
pub type Observers = tuple_list_type!(
    EdgesObserver,
    ByteMapObserver,
    ByteMapObserver,
    ByteMapObserver,
    TimeObserver,
    RunFlagsObserver
);

pub type EdgesFeedback = MaxMapFeedback<EdgesObserver, Hitcounts>;
pub type CorpusFeedback = Recorder<
    CombinedFeedback<
        NotFeedback<TimeoutFeedback>,
        CombinedFeedback<
            ExceptionFeedback,
            CombinedFeedback<
                MarksNewEdges<EdgesFeedback>,
                CombinedFeedback<
                    DistanceFeedback,
                    CombinedFeedback<DistanceFeedback, TimeFeedback, LogicEagerOr>,
                    LogicEagerOr,
                >,
                LogicEagerOr,
            >,
            LogicEagerOr,
        >,
        LogicFastAnd,
    >,
>;
pub type Objective = Recorder<
    CombinedFeedback<
        CombinedFeedback<CrashFeedback, TimeoutFeedback, LogicFastOr>,
        CombinedFeedback<HangConfirmation<EdgesObserver>, EdgesFeedback, LogicFastAnd>,
        LogicFastAnd,
    >,
>;

/// Both corpora write what their testcases' feedbacks decided to save (`saved_inputs`).
pub type ClientCorpus = SavingCorpus<InMemoryCorpus<BytesInput>>;
pub type State = StdState<ClientCorpus, BytesInput, StdRand, ClientCorpus>;
pub type Sched = DistanceFavoring<IndexesLenTimeMinimizerScheduler<QueueScheduler, BytesInput, EdgesObserver>>;
pub type Fuzzer = StdFuzzer<Sched, CorpusFeedback, BytesInputConverter, NopInputFilter, Objective>;
pub type Mgr =
    LlmpRestartingEventManager<(), BytesInput, State, <StdShMemProvider as ShMemProvider>::ShMem, StdShMemProvider>;
