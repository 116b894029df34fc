//! The stages of a client's fuzzing loop: confirming the time-outs set aside as possible hangs
//! (see `hangs`), input-to-state on a testcase's first turn, the
//! choice of fast or precise runs for the turn, the turn's clock (a slow testcase's turn ends
//! early: `turn_time`), one mutational stage, local search on its share
//! of executions, then the stats stage (which also ends the campaign when it is due).
//! A new stage is one module and one entry in [`fuzz_with`].

use super::{Fuzzer, LoopParts, Mgr, Observers, State};
use crate::config::{CampaignConfig, MutatorSchedule};
use crate::hangs::HangConfirmStage;
use crate::i2s::{CmpTrace, I2SStage};
use crate::interrupted_turns::SkipTurnOnly;
use crate::local_search::{ExactSlots, LocalSearchStage, ProbeWords};
use crate::mutators::deadline::UntilDeadline;
use crate::mutators::{fp_mutations, DomainSteering};
use crate::run_mode::{PreciseQuota, RunModeStage, RunModeWord, TurnQuota};
use crate::stats::StatsStage;
use crate::time_use::{Timed, TimedStage};
use crate::timeout::AdjustTimeout;
use crate::turn_time::{TimedTurns, TurnClock, TurnClockStage};
use libafl::events::SendExiting;
use libafl::executors::{Executor, HasObservers};
use libafl::fuzzer::Fuzzer as _;
use libafl::inputs::BytesInput;
use libafl::mutators::{
    havoc_mutations, tokens_mutations, HavocScheduledMutator, Mutator, MutatorsTuple, StdMOptMutator,
};
use libafl::stages::StdMutationalStage;
use libafl::Error;
use libafl_bolts::tuples::{tuple_list, HasConstLen, Merge, NamedTuple};
use numfuzz_abi::signature::Signature;
use std::sync::Arc;
use std::time::SystemTime;

/// MOpt's largest stack of mutations per run is 2^7, as in havoc.
const MOPT_MAX_STACK_POW: usize = 7;
/// MOpt's particle swarms (AFL++'s default).
const MOPT_SWARMS: usize = 5;

/// Runs the fuzzing loop until the campaign ends. Typed inputs get the IEEE-754 field
/// operators next to LibAFL's byte havoc and tokens (which still find what no typed operator
/// would: lengths, unusual encodings); untyped ones get havoc and tokens only.
pub fn fuzz<E>(
    cfg: &CampaignConfig,
    signature: Option<Arc<Signature>>,
    words: RegionWords,
    exact: ExactSlots,
    stats: StatsStage,
    parts: LoopParts<'_, E>,
) -> Result<(), Error>
where
    E: Executor<Mgr, BytesInput, State, Fuzzer> + HasObservers<Observers = Observers> + AdjustTimeout,
{
    let deadline = stats.deadline();
    let clock = TurnClock::default();
    let i2s = (I2SStage::new(words.cmp_trace, signature.clone()).until(deadline))
        .timed(clock.clone())
        .precise_candidates(cfg.precise);
    let search = LocalSearchStage::new(words.probe, exact, signature.clone(), cfg.local_search)
        .until(deadline)
        .timed(clock.clone());
    let byte_level = havoc_mutations().merge(tokens_mutations());
    let quota = TurnQuota::default();
    let run_mode = RunModeStage::new(words.run_mode, cfg.precise, quota.clone());
    let stages = Stages {
        deadline,
        i2s,
        run_mode,
        quota: (quota, words.run_mode),
        clock,
        search,
        stats,
    };
    // Steering wraps byte havoc and tokens too, so declared domains hold with `--no-fp-mutators`.
    let steer = signature.clone();
    match signature.filter(|_| cfg.fp_mutators) {
        Some(sig) => scheduled(cfg.schedule, fp_mutations(&sig).merge(byte_level), steer, stages, parts),
        None => scheduled(cfg.schedule, byte_level, steer, stages, parts),
    }
}

/// The words of the target's region header that stages set before their runs.
pub struct RegionWords {
    /// What comparisons record (absent with `--no-cmp` or without a comparison log).
    pub cmp_trace: Option<CmpTrace>,
    pub probe: Option<ProbeWords>,
    pub run_mode: Option<RunModeWord>,
}

/// The stages around the mutational one.
struct Stages {
    deadline: Option<SystemTime>,
    i2s: I2SStage,
    run_mode: RunModeStage,
    /// The run-mode stage's quota of precise mutants, for the mutational stage.
    quota: (TurnQuota, Option<RunModeWord>),
    /// The turns' clock, shared by the input-to-state, mutational and local-search stages.
    clock: TurnClock,
    search: LocalSearchStage,
    stats: StatsStage,
}

/// The mutational stage over `ops`, scheduled by MOpt or uniformly (havoc), its results kept
/// mostly inside the fields' declared domains.
fn scheduled<E, MT>(
    schedule: MutatorSchedule,
    ops: MT,
    signature: Option<Arc<Signature>>,
    stages: Stages,
    parts: LoopParts<'_, E>,
) -> Result<(), Error>
where
    E: Executor<Mgr, BytesInput, State, Fuzzer> + HasObservers<Observers = Observers> + AdjustTimeout,
    MT: MutatorsTuple<BytesInput, State> + NamedTuple + HasConstLen,
{
    match schedule {
        MutatorSchedule::Mopt => {
            let mutator = StdMOptMutator::new(parts.state, ops, MOPT_MAX_STACK_POW, MOPT_SWARMS)?;
            fuzz_with(DomainSteering::new(mutator, signature.as_ref()), stages, parts)
        }
        MutatorSchedule::Havoc => {
            let mutator = HavocScheduledMutator::new(ops);
            fuzz_with(DomainSteering::new(mutator, signature.as_ref()), stages, parts)
        }
    }
}

fn fuzz_with<E, M>(mutator: M, stages: Stages, parts: LoopParts<'_, E>) -> Result<(), Error>
where
    E: Executor<Mgr, BytesInput, State, Fuzzer> + HasObservers<Observers = Observers> + AdjustTimeout,
    M: Mutator<BytesInput, State>,
{
    let Stages {
        deadline,
        i2s,
        run_mode,
        quota: (quota, word),
        clock,
        search,
        stats,
    } = stages;
    // A client respawned after the budget ends before it runs anything: one that met a
    // time-out resumes in the stage that timed out, and on a target that hangs on most inputs
    // it would time out again before the stats stage could see the deadline, every second,
    // for ever.
    if stats.over() {
        parts.mgr.on_shutdown()?;
        return Err(Error::shutting_down());
    }
    let mutator = TimedTurns::new(mutator, clock.clone());
    let turn_end = run_mode.turn_end();
    let mut stages = tuple_list!(
        HangConfirmStage::new(deadline),
        Timed::new(TimedStage::InputToState, i2s),
        run_mode,
        TurnClockStage::new(clock),
        Timed::new(
            TimedStage::Havoc,
            SkipTurnOnly::new(StdMutationalStage::new(UntilDeadline::new(
                PreciseQuota::new(mutator, quota, word),
                deadline
            )))
        ),
        turn_end,
        Timed::new(TimedStage::LocalSearch, search),
        stats
    );
    parts
        .fuzzer
        .fuzz_loop(&mut stages, parts.executor, parts.state, parts.mgr)
}
