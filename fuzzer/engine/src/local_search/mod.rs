//! Local search on distances: a stage that takes one slot the campaign has measured but not
//! reached — a (site, kind) whose ErrBits minimum is not 0, or a comparison outcome never
//! taken; every other descent those that need one exact value first ([`ExactSlots`]), the
//! others those the campaign moved last ([`Order`]) — and descends on that slot's exact gap
//! from the input holding the minimum ([`avm`]), restarting from other corpus entries when
//! the descent stalls (basin hopping). Every execution goes through the normal feedback, so
//! what it meets on the way (new edges, new sites) is kept.
//!
//! The stage needs typed inputs (a signature) and the target's probe words; it gets a share
//! of the executions that grows while it reaches targets and shrinks while it does not, and
//! the largest share while the corpus stands still (mutation has stopped finding anything, so
//! the executions are better spent on descents).

pub mod avm;

use crate::maps::progress;
use crate::meta::{DistanceHistory, DistanceTopRated};
use crate::stop::past_deadline;
use crate::turn_time::TurnClock;
use crate::user_stats::fire_count;
use avm::{Gap, Search, SearchEnding};
use libafl::corpus::{Corpus, CorpusId};
use libafl::inputs::{BytesInput, HasTargetBytes};
use libafl::state::{HasCorpus, HasExecutions, HasRand};
use libafl::{Error, HasMetadata, HasNamedMetadata};
use libafl_bolts::rands::{Rand, StdRand};
use numfuzz_abi::cmp::{CmpOperand, Relation};
use numfuzz_abi::errbits::NOT_MEASURED;
use numfuzz_abi::kind::site_and_kind;
use numfuzz_abi::probe::{self, Probe, PROBE_NONE};
use numfuzz_abi::region_view::{HeaderWord, RegionView};
use numfuzz_abi::signature::Signature;
use numfuzz_abi::site::SiteTable;
use numfuzz_abi::ExceptionKind;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// Executions one descent (with its restarts) may spend at most.
const DESCENT_BUDGET: u64 = 4096;
/// The fewest executions a descent is given: below this the stage waits for its share to grow
/// (a shorter descent cannot get past its first few exploratory moves).
const DESCENT_MIN: u64 = 256;
/// A descent waits for at least this fraction of the stage's share of all executions so far
/// (between [`DESCENT_MIN`] and [`DESCENT_BUDGET`]): full descents once the campaign has run
/// a second or two on a fast target, descents that grow with the campaign on a slow one.
const DESCENT_WAIT_FRACTION: f64 = 0.5;
/// A descent is cut short at this many times its share of the time
/// ([`LocalSearchRecord::time_allowance`]). Its budget in executions assumes the stage's mean
/// probe, so at one time two in three descents of `exact_divisor.rs`'s campaigns were cut, each
/// a little slower than the mean, and their targets taken again and cut again.
const TIME_SLACK: u32 = 2;
/// A descent is also cut once it has run as long as its budget of probes would at this many
/// times the campaign's typical mutant (`turn_time`): probes run precisely, a few times a fast
/// mutant, and a descent whose probes cost hundreds of times more is on inputs the campaign
/// cannot afford (one of fermi_dirac_int's took 7 of its first 15 s, on inputs of half a second).
const PROBE_COST_SLACK: f64 = 16.0;
/// Restarts from other corpus entries after a stall, per descent.
const BASIN_HOPS: usize = 3;
/// Corpus entries drawn per descent as places to restart from. Only those that measure the
/// target and are not on a flat plateau count as restarts, so a descent draws more than it
/// restarts from: in GSL airy_Ai's corpus about half the entries never reach airy.c:274's
/// division and most that do are on the plateau of a huge |x|.
const RESTART_DRAWS: usize = 16;
/// The stage's share of all executions: at the start, and its bounds.
const SHARE_START: f64 = 0.10;
const SHARE_MIN: f64 = 0.02;
const SHARE_MAX: f64 = 0.40;
/// Executions without a new corpus entry after which the campaign counts as stalled and the
/// stage takes up to [`SHARE_MAX`]: about five failed descents' worth (a fraction of a second
/// on fdlibm, a few seconds on GSL). Shrinking that share with each failed descent (by 0.85,
/// to 10 %) was tried: it freed legendre_Pl's campaign, whose slow probes took 38 % of its
/// time, but `fuzzer/tests/exact_divisor.rs`'s division was reached in 1 of 4 campaigns of
/// 20 s. It is shrunk by what a probe costs instead ([`PROBE_COST_PAR`]).
const STALLED_EXECS: u64 = 20_000;
/// Probes of up to this many of the campaign's typical mutants get all of [`SHARE_MAX`] once
/// the corpus stalls; dearer ones get it over the square root of how much dearer. A probe runs
/// precisely, a few mutants' worth: `exact_divisor.rs`'s cost 3.3-3.6, and its division needs
/// the whole share; legendre_Pl's, on inputs whose recurrence runs l steps, cost 24-27, and at
/// [`SHARE_MAX`] took 37 % of its time for no finding (now 16 %: 29,600-32,400 exec/s went to
/// 38,300-41,700 in paired runs of 20 s, the same 19 exceptions). The square root keeps a
/// probe a little dearer than the par, on a loaded machine, near the whole share.
const PROBE_COST_PAR: f64 = 4.0;
/// Descents of one target without reaching it before it is left alone (until another input
/// lowers its distance). A descent that lowered no gap (every start flat or not measuring the
/// target, or a budget too short to move: early in a campaign a descent gets a few hundred
/// executions) counts half: GSL airy_Ai's airy.c:274 was left alone after two descents that
/// only met the plateau of a huge |x|. So does one that came closer than every earlier descent
/// on the target ([`Closest`]): the next one goes on from there; and one cut short
/// ([`TIME_SLACK`]), so that a target whose probes are all slow is left alone too.
const ATTEMPTS_PER_TARGET: u32 = 2;
/// The attempts are counted in halves.
const HALF_ATTEMPTS_PER_TARGET: u32 = 2 * ATTEMPTS_PER_TARGET;
/// The target is drawn among this many of the closest ones (but see [`Order::ExactFirst`]).
const CLOSEST_TARGETS: usize = 8;
/// Exact slots screened per stage call, at most (one execution each): a GSL harness has
/// dozens of divisions, and a slow one's inputs take up to half a second.
const SCREENS_PER_CALL: usize = 32;

/// User-stat names of the stage's counts (status line).
pub const SEARCH_EXECS_STAT: &str = "search_execs";
pub const SEARCH_REACHED_STAT: &str = "search_reached";

/// The probe words of numfuzz's region: the slot the next runs measure exactly, and its gap.
/// The target writes the gap only during a run and the fuzzer reads it only between runs.
#[derive(Clone, Copy, Debug)]
pub struct ProbeWords {
    region: RegionView,
}

impl ProbeWords {
    pub fn new(region: RegionView) -> ProbeWords {
        ProbeWords { region }
    }

    /// What the next runs measure exactly (`None`: nothing, the normal fast checks).
    pub fn set(&self, target: Option<Probe>) {
        self.region
            .word(HeaderWord::Probe)
            .store(target.map_or(PROBE_NONE, Probe::encode), Ordering::Release);
    }

    /// The probed slot's gap in the last run (`INFINITY`: not measured).
    pub fn gap(&self) -> Gap {
        probe::decode_gap(self.region.probe_gap()).unwrap_or(f64::INFINITY)
    }
}

/// What the stage has done, kept in the state (it survives client restarts).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LocalSearchRecord {
    /// Executions spent by the stage.
    pub execs: u64,
    /// Descents started, and targets whose slot they brought to 0.
    pub descents: u64,
    pub reached: u64,
    /// Current share of all executions.
    share: f64,
    /// Nanoseconds spent by the stage's descents (the same share of the campaign's time bounds
    /// it: see [`LocalSearchRecord::descent_budget`]).
    #[serde(default)]
    nanos: u64,
    /// The corpus size last seen, and the executions when it last changed.
    corpus_seen: usize,
    grown_at: u64,
    /// Per target (encoded probe): descents without reaching it (in halves, see
    /// [`ATTEMPTS_PER_TARGET`]), and its best distance then.
    attempts: HashMap<u32, (u32, u8)>,
    /// Per target not reached: the closest input its descents came to.
    #[serde(default)]
    closest: HashMap<u32, Closest>,
    /// The campaign's [`progress`] and time when the last descent ended: what the rest of the
    /// campaign has found since, and in how long, is what the next descent's finds are weighed
    /// against ([`FindRate`]).
    #[serde(default)]
    last_mark: Option<(u64, u64)>,
    /// Per exact slot (encoded probe): its holder when it was screened, and its exact gap
    /// there ([`ExactSlots`]: the byte cannot rank them).
    #[serde(default)]
    screened: HashMap<u32, (CorpusId, Gap)>,
}

/// Finds (see [`progress`]) and the nanoseconds it took to make them.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FindRate {
    pub finds: u64,
    pub nanos: u64,
}

impl FindRate {
    /// Whether `self` finds at least as fast as `other` (and finds anything).
    fn at_least(self, other: FindRate) -> bool {
        self.finds > 0 && self.finds as f64 * other.nanos as f64 >= other.finds as f64 * self.nanos as f64
    }
}

/// The input closest to a target that a descent reached by moving (not a corpus entry), with
/// its gap. The distance maps keep a byte per slot, too coarse to keep it: in the test of
/// `exact_divisor.rs` a descent ran out of executions at x = -1.2345676, 2.5e-7 from the one
/// double whose divisor is 0, with the same byte as the plateau that holds the slot's minimum;
/// the next descent started from the plateau again, met only flat starts, and the target was
/// left alone (3 of 8 campaigns of 20 s missed the division).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Closest {
    pub gap: Gap,
    pub input: Vec<u8>,
}
libafl_bolts::impl_serdeany!(LocalSearchRecord);

impl Default for LocalSearchRecord {
    fn default() -> Self {
        LocalSearchRecord {
            execs: 0,
            descents: 0,
            reached: 0,
            share: SHARE_START,
            nanos: 0,
            corpus_seen: 0,
            grown_at: 0,
            attempts: HashMap::new(),
            closest: HashMap::new(),
            last_mark: None,
            screened: HashMap::new(),
        }
    }
}

impl LocalSearchRecord {
    /// The share of all executions (and of the time) the stage may have spent by
    /// `executions`. A stalled corpus raises it to [`SHARE_MAX`] over `probe_cost`'s square
    /// root against [`PROBE_COST_PAR`] ([`STALLED_EXECS`]); `probe_cost` is the stage's mean
    /// probe in the campaign's typical mutants (`None`: not known yet).
    fn share_now(&self, executions: u64, probe_cost: Option<f64>) -> f64 {
        if executions.saturating_sub(self.grown_at) < STALLED_EXECS {
            return self.share;
        }
        let dearer = probe_cost.map_or(1.0, |cost| (cost / PROBE_COST_PAR).max(1.0));
        (SHARE_MAX / dearer.sqrt()).max(self.share)
    }

    /// The executions the next descent may spend without taking the stage past its share at
    /// `executions` (its own count included, since those are executions too), at most
    /// [`DESCENT_BUDGET`]; `None` while the stage should wait. Descents are budgeted in
    /// executions, not in time, so on a slow target (GSL's Bessel functions run at ~100
    /// exec/s) one full descent would take the whole campaign; and a descent started as soon
    /// as the share allows a few hundred executions would stay that short on every target, so
    /// it waits for a part of the stage's whole share ([`DESCENT_WAIT_FRACTION`]).
    ///
    /// The stage's part of the campaign's time (`elapsed`) is held to the same share as well,
    /// counted in probes at the stage's mean time per probe so far: every probe runs precisely,
    /// and the inputs a descent probes may run far longer than the campaign's (GSL's
    /// legendre_Pl recurrence runs l steps): with the executions alone, its 22 % of the
    /// executions took about 90 % of a 20 s campaign (1,180 exec/s against 12,802 without the
    /// stage, the same 19 exceptions). The time is held to the share of the moment, not to
    /// [`SHARE_MAX`]: a stage whose descents fail gets as little of the time as of the
    /// executions. (When airy.c:274's division waited behind fifteen others, this made it
    /// later; ranked by exact gap, it is the third exact slot descended on.) `share` is
    /// [`LocalSearchRecord::share_now`]'s.
    fn descent_budget(&self, share: f64, executions: u64, elapsed: Duration) -> Option<u64> {
        // s more executions of the stage keep execs + s <= share * (executions + s).
        let room = (share * executions as f64 - self.execs as f64) / (1.0 - share);
        // The whole share so far, in probes, and what is left of it.
        let mut whole = share * executions as f64;
        let room = match self.nanos_per_probe() {
            // t more nanoseconds keep nanos + t <= share * (elapsed + t).
            Some(per_probe) => {
                let share_ns = share * elapsed.as_nanos() as f64;
                whole = whole.min(share_ns / per_probe);
                room.min((share_ns - self.nanos as f64) / (1.0 - share) / per_probe)
            }
            // Nothing to tell the probes' time by yet: one short descent first (it would take
            // a whole campaign of 20 s on fermi_dirac_int's slowest inputs).
            None => {
                whole = whole.min(DESCENT_MIN as f64);
                room.min(DESCENT_MIN as f64)
            }
        };
        let room = room.max(0.0) as u64;
        let wait = ((DESCENT_WAIT_FRACTION * whole) as u64).clamp(DESCENT_MIN, DESCENT_BUDGET);
        (room >= wait).then_some(room.min(DESCENT_BUDGET))
    }
}

impl LocalSearchRecord {
    /// How long the next descent may run without taking the stage past its share (at
    /// `executions`) of the campaign's time (`elapsed`): its budget in executions assumes the
    /// mean probe, and the
    /// first descent has no mean to go by (fermi_dirac_int's first 256 probes took whole
    /// campaigns of 20 s).
    fn time_allowance(&self, share: f64, elapsed: Duration) -> Duration {
        let ns = (share * elapsed.as_nanos() as f64 - self.nanos as f64) / (1.0 - share);
        Duration::from_nanos(ns.max(0.0) as u64)
    }

    /// What the campaign outside the stage has found since the last descent ended (since the
    /// start before the first), at `progress` and `elapsed`.
    fn rest_since_last(&self, progress: u64, elapsed: Duration) -> FindRate {
        let now = elapsed.as_nanos() as u64;
        // Before the first descent: everything so far, over the campaign's time (none of it
        // the stage's yet).
        let (before, at) = self.last_mark.unwrap_or((0, self.nanos));
        FindRate {
            finds: progress.saturating_sub(before),
            nanos: now.saturating_sub(at),
        }
    }

    /// A descent's outcome into the record: the stage's executions, time and share, the
    /// target's attempts and closest input. The share grows after a descent that reached its
    /// target or found edges or exceptions at least as fast as the rest of the campaign did
    /// since the last one (`rest`), and shrinks otherwise: counting every input kept as a
    /// success held the stage at its largest share on GSL's bessel_Jnu, 40 % of the campaign
    /// for 2 targets reached in 30 descents.
    fn note_descent(&mut self, target: SearchTarget, descent: &Descent, took: Duration, rest: FindRate) {
        self.execs += descent.spent;
        self.nanos = self.nanos.saturating_add(took.as_nanos() as u64);
        self.descents += 1;
        let key = target.probe.encode();
        // Kept while the descents from it come closer: one that did not is a local minimum
        // (airy_Ai's modes 1 and 2 come within 2^-70 of 0 there), and the next descent starts
        // from the holder and the corpus again.
        let closer = (descent.closest.as_ref())
            .filter(|c| !descent.reached && self.closest.get(&key).is_none_or(|known| c.gap < known.gap));
        let entry = self.attempts.entry(key).or_insert((0, target.best));
        if descent.reached {
            self.reached += 1;
            entry.0 = 0;
        } else {
            let halves = if descent.moved && closer.is_none() && !descent.cut {
                2
            } else {
                1
            };
            *entry = (entry.0 + halves, target.best);
        }
        match closer {
            Some(c) => drop(self.closest.insert(key, c.clone())),
            None => drop(self.closest.remove(&key)),
        }
        let own = FindRate {
            finds: descent.progress,
            nanos: took.as_nanos() as u64,
        };
        self.share = if descent.reached || own.at_least(rest) {
            (self.share * 1.5).min(SHARE_MAX)
        } else {
            (self.share * 0.85).max(SHARE_MIN)
        };
    }

    /// Where the next descent on `probe` goes on from, if an earlier one came closer than
    /// its starts.
    pub fn closest_to(&self, probe: Probe) -> Option<&Closest> {
        self.closest.get(&probe.encode())
    }

    /// The exact gap `target` is known to be at: where its holder was screened (if the holder
    /// is still the same) or an earlier descent moved to, whichever is closer.
    fn known_gap(&self, target: &SearchTarget) -> Option<Gap> {
        let key = target.probe.encode();
        let screened = (self.screened.get(&key))
            .filter(|(holder, _)| *holder == target.holder)
            .map(|&(_, gap)| gap);
        let moved = self.closest.get(&key).map(|c| c.gap);
        match (screened, moved) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Screens into the record: the targets' exact gaps at their holders, and what measuring
    /// them cost (the stage's executions and time).
    fn note_screens(&mut self, screens: &[(SearchTarget, Gap)], took: Duration) {
        for (target, gap) in screens {
            self.screened.insert(target.probe.encode(), (target.holder, *gap));
        }
        self.execs += screens.len() as u64;
        self.nanos = self.nanos.saturating_add(took.as_nanos() as u64);
    }

    /// The stage's mean time per probe, once it has probed.
    fn nanos_per_probe(&self) -> Option<f64> {
        (self.execs > 0 && self.nanos > 0).then(|| self.nanos as f64 / self.execs as f64)
    }

    /// The stage's mean probe in the campaign's typical mutants, once both are known.
    fn probe_cost(&self, clock: &TurnClock) -> Option<f64> {
        let mutant = clock.budget(1.0)?.as_nanos() as f64;
        self.nanos_per_probe()
            .filter(|_| mutant > 0.0)
            .map(|probe| probe / mutant)
    }
}

/// A slot to reach, its best distance so far, and the input holding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchTarget {
    pub probe: Probe,
    pub best: u8,
    pub holder: CorpusId,
}

/// Which slots need one exact value: a divisor of exactly 0 (DivByZero), the equal outcome
/// of an `==` or `!=`. Random mutation almost never lands on one value, and ErrBits cannot
/// rank them (every divisor above 2^-511 is 62 bits from 0, however close it comes), so the
/// stage tries each of them before the slots behind a range.
///
/// Comparisons of a byte are no targets at all ([`ExactSlots::searchable`]): a byte is a flag
/// or a character, whose gap has no slope for a descent to follow (it stays 1 until the byte
/// flips), and whose 256 values mutation and input-to-state cover. A GSL harness has 78 of
/// them, the tests of `__numfuzz_error_pending` that numfuzz-cc puts after every call returning
/// a status (NUMFUZZ_CC_ERROR_HOOK): as equalities at gap 1 they came before every divisor,
/// each took two full descents of flat starts, and airy.c:274's division was not reached in
/// 30 s.
#[derive(Clone, Debug, Default)]
pub struct ExactSlots {
    /// Per comparison: it tests equality.
    equality: Vec<bool>,
    /// Per comparison: its operands are bytes.
    byte: Vec<bool>,
}

impl ExactSlots {
    pub fn of(table: &SiteTable) -> ExactSlots {
        let count = table.cmps.iter().map(|c| c.id as usize + 1).max().unwrap_or(0);
        let (mut equality, mut byte) = (vec![false; count], vec![false; count]);
        for c in &table.cmps {
            equality[c.id as usize] = matches!(c.predicate.relation(), Relation::Eq | Relation::Ne);
            byte[c.id as usize] = c.operand == CmpOperand::I8;
        }
        ExactSlots { equality, byte }
    }

    pub fn contains(&self, probe: Probe) -> bool {
        match probe {
            Probe::ErrBits(slot) => site_and_kind(slot as usize).1 == ExceptionKind::DivByZero,
            Probe::Cmp(slot) => self.equality.get(slot as usize / 2).copied().unwrap_or(false),
        }
    }

    /// Whether a descent may take the slot: every exception slot, every comparison but those
    /// of bytes.
    pub fn searchable(&self, probe: Probe) -> bool {
        match probe {
            Probe::ErrBits(_) => true,
            Probe::Cmp(slot) => !self.byte.get(slot as usize / 2).copied().unwrap_or(false),
        }
    }
}

/// A map's slot as a probe.
type ProbeOf = fn(u32) -> Probe;

/// The two distance maps, by the names their history and favourites are kept under.
const MAPS: [(&str, ProbeOf); 2] = [
    (crate::maps::ERRBITS_MAP, Probe::ErrBits),
    (crate::maps::CMP_MAP, Probe::Cmp),
];

/// How the stage ranks its targets. It alternates between the two (by descent), because
/// each finds what the other leaves for last: a program has dozens of slots at gap 1 that no
/// descent will close (infeasible exceptions, integer-word tests), and the one that will is
/// often among them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// The exact slots ([`ExactSlots`]) first, then the least tried, then the closest by
    /// exact gap ([`LocalSearchRecord::known_gap`]) and by distance: the windows no mutation
    /// hits and no distance ranks (GSL's airy.c:274). The stage screens the exact slots
    /// before it ranks them, and takes the first. An exact slot whose last descent came closer
    /// than any before ranks with the untried: airy.c:274's first descent, a few hundred
    /// executions early in a campaign, came within 2^-36 of 0 and then waited behind fifteen
    /// other divisions.
    ExactFirst,
    /// The least tried, then those whose holder is the newest corpus entry: where the
    /// campaign has just moved. fdlibm pow's e_pow.c:281 gets its first input at the
    /// boundary (z = -1075, from input-to-state) seconds into a campaign, when two hundred
    /// other slots are at gap 1.
    Newest,
}

impl Order {
    /// The order of the `nth` descent.
    pub fn of_descent(nth: u64) -> Order {
        match nth % 2 {
            0 => Order::ExactFirst,
            _ => Order::Newest,
        }
    }
}

/// Slots measured but not reached, with the input holding their best distance, in `order`
/// (ties in an order of this instance's own, so that the instances of a multi-core campaign
/// do not all descend on the same target); targets tried too often without progress are left
/// out.
pub fn targets<S: HasMetadata + HasNamedMetadata>(
    state: &S,
    record: &LocalSearchRecord,
    exact: &ExactSlots,
    order: Order,
    salt: u64,
) -> Vec<SearchTarget> {
    let Ok(top) = state.metadata::<DistanceTopRated>() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (map, probe) in MAPS {
        let Ok(history) = state.named_metadata::<DistanceHistory>(map) else {
            continue;
        };
        for (slot, &best) in history.best.iter().enumerate() {
            if best == 0 || best == NOT_MEASURED {
                continue;
            }
            let probe = probe(slot as u32);
            if !exact.searchable(probe) {
                continue;
            }
            if let Some(&(tries, at)) = record.attempts.get(&probe.encode()) {
                if tries >= HALF_ATTEMPTS_PER_TARGET && best >= at {
                    continue;
                }
            }
            if let Some(&holder) = top.by_slot.get(&(map.to_string(), slot as u32)) {
                found.push(SearchTarget { probe, best, holder });
            }
        }
    }
    let tries = |t: &SearchTarget| record.attempts.get(&t.probe.encode()).map_or(0, |a| a.0);
    let tie = |t: &SearchTarget| (t.probe.encode() as u64 ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    match order {
        Order::ExactFirst => found.sort_by_key(|t| {
            let is_exact = exact.contains(t.probe);
            // Non-negative gaps order as their bits do; unscreened ones last.
            let gap = (record.known_gap(t))
                .filter(|_| is_exact)
                .map_or(u64::MAX, f64::to_bits);
            // Its last descent came closer than any before: it goes on before the others.
            let going_on = is_exact && record.closest_to(t.probe).is_some();
            (!is_exact, if going_on { 0 } else { tries(t) }, gap, t.best, tie(t))
        }),
        Order::Newest => found.sort_by_key(|t| (tries(t), core::cmp::Reverse(t.holder), t.best, tie(t))),
    }
    found
}

pub struct LocalSearchStage {
    probe: Option<ProbeWords>,
    exact: ExactSlots,
    signature: Option<Arc<Signature>>,
    enabled: bool,
    salt: Option<u64>,
    /// A descent stops at it (one can take minutes of a slow target's executions).
    deadline: Option<SystemTime>,
    /// The campaign's typical mutant cost ([`PROBE_COST_SLACK`]).
    clock: Option<TurnClock>,
}

impl LocalSearchStage {
    /// `probe` is `None` for targets without numfuzz's region; `enabled` is false with
    /// `--no-local-search`. Inputs without a signature are not searched (the moves are typed).
    pub fn new(probe: Option<ProbeWords>, exact: ExactSlots, signature: Option<Arc<Signature>>, enabled: bool) -> Self {
        LocalSearchStage {
            probe,
            exact,
            signature,
            enabled,
            salt: None,
            deadline: None,
            clock: None,
        }
    }

    /// Stops descending at `deadline`.
    pub fn until(self, deadline: Option<SystemTime>) -> Self {
        LocalSearchStage { deadline, ..self }
    }

    /// Cuts descents whose probes are slow against the campaign's typical mutant.
    pub fn timed(self, clock: TurnClock) -> Self {
        LocalSearchStage {
            clock: Some(clock),
            ..self
        }
    }

    /// The probed gap of `input` (one execution through the normal feedback).
    fn run_one<F>(probe: ProbeWords, input: &[u8], eval: &mut F, found: &mut u64) -> Result<Gap, Error>
    where
        F: FnMut(&BytesInput) -> Result<Option<CorpusId>, Error>,
    {
        if eval(&BytesInput::new(input.to_vec()))?.is_some() {
            *found += 1;
        }
        Ok(probe.gap())
    }
}

/// What a descent did: reached the target, lowered its gap at all, executions spent, inputs the
/// feedback kept and the [`progress`] among them, the closest input it moved to, and whether it
/// ran out of time.
#[derive(Clone, Debug, Default)]
struct Descent {
    reached: bool,
    moved: bool,
    spent: u64,
    found: u64,
    progress: u64,
    closest: Option<Closest>,
    cut: bool,
}

/// One descent as `plan` says: from its first start (the closest input of an earlier descent on
/// the target, or the target's holder), then from up to [`BASIN_HOPS`] other starts when it
/// stalls. A start that does not measure the slot
/// costs one execution, one on a flat plateau one round of moves; neither counts as a
/// restart. Where the signature has switch fields (a small integer domain, [`avm::switched`]),
/// a search from a corpus entry gets half of what is left, and where it ends without reaching
/// the target the descent goes on from its best input with each other value of each switch
/// first. What it did comes back beside the error that cut it short, if one did.
fn descend<F>(
    probe: ProbeWords,
    signature: &Signature,
    plan: Plan,
    rand: &mut StdRand,
    eval: &mut F,
) -> (Descent, Result<(), Error>)
where
    F: FnMut(&BytesInput) -> Result<Option<CorpusId>, Error>,
{
    probe.set(Some(plan.target.probe));
    let mut descent = Descent::default();
    let result = descend_on(probe, signature, plan, rand, eval, &mut descent);
    probe.set(None);
    (descent, result)
}

/// What a descent is to do: its target, where it may start, and the executions it may spend.
#[derive(Clone, Copy)]
struct Plan<'s> {
    target: SearchTarget,
    starts: &'s [Vec<u8>],
    budget: u64,
}

/// [`descend`]'s work, into `d` as it goes: a descent cut short (an error from `eval`) keeps
/// what it did up to there.
fn descend_on<F>(
    probe: ProbeWords,
    signature: &Signature,
    Plan { target, starts, budget }: Plan,
    rand: &mut StdRand,
    eval: &mut F,
    d: &mut Descent,
) -> Result<(), Error>
where
    F: FnMut(&BytesInput) -> Result<Option<CorpusId>, Error>,
{
    let has_switches = !avm::switched(signature, &starts[0]).is_empty();
    // Each start, and the switch field it holds (a switched start is not switched again).
    let mut queue: VecDeque<(Vec<u8>, Option<usize>)> = starts.iter().map(|s| (s.clone(), None)).collect();
    let mut searches = 0;
    while let Some((start, held)) = queue.pop_front() {
        if d.spent >= budget || searches > BASIN_HOPS {
            break;
        }
        let gap = LocalSearchStage::run_one(probe, &start, eval, &mut d.found)?;
        d.spent += 1;
        if gap == 0.0 {
            d.reached = true;
            return Ok(());
        }
        if gap.is_infinite() {
            continue;
        }
        let left = budget - d.spent;
        let share = match has_switches && held.is_none() {
            true => (left / 2).max(1),
            false => left,
        };
        let mut search = Search::new(signature, StdRand::with_seed(rand.next()), start.clone(), gap, share);
        if let Some(field) = held {
            search = search.holding(field);
        }
        let mut run = |input: &[u8]| LocalSearchStage::run_one(probe, input, eval, &mut d.found);
        let ending = search.run(&mut run);
        d.spent += search.execs;
        if search.best_gap < gap {
            d.moved = true;
            if d.closest.as_ref().is_none_or(|c| search.best_gap < c.gap) {
                d.closest = Some(Closest {
                    gap: search.best_gap,
                    input: search.best.clone(),
                });
            }
        }
        let ending = ending?;
        log::debug!(
            "descent on {:?} from {} (gap {gap:e}) to {} (gap {:e}): {ending:?}",
            target.probe,
            shown(signature, &start),
            shown(signature, &search.best),
            search.best_gap
        );
        match ending {
            SearchEnding::Reached => {
                d.reached = true;
                return Ok(());
            }
            SearchEnding::Flat => {}
            SearchEnding::Budget | SearchEnding::Stalled => {
                searches += 1;
                if held.is_none() {
                    for (other, field) in avm::switched(signature, &search.best).into_iter().rev() {
                        queue.push_front((other, Some(field)));
                    }
                }
            }
        }
    }
    Ok(())
}

/// An input's fields, for the debug log.
fn shown(signature: &Signature, input: &[u8]) -> String {
    let values: Vec<String> = signature.decode(input).iter().map(|v| v.to_string()).collect();
    values.join(", ")
}

mod stage {
    use super::*;
    use libafl::events::EventFirer;
    use libafl::fuzzer::Evaluator;
    use libafl::stages::Stage;

    impl<E, EM, S, Z> Stage<E, EM, S, Z> for LocalSearchStage
    where
        EM: EventFirer<BytesInput, S>,
        S: HasCorpus<BytesInput>
            + HasExecutions
            + HasMetadata
            + HasNamedMetadata
            + HasRand
            + libafl::state::HasStartTime,
        Z: Evaluator<E, EM, BytesInput, S>,
    {
        fn perform(&mut self, fuzzer: &mut Z, executor: &mut E, state: &mut S, mgr: &mut EM) -> Result<(), Error> {
            let (Some(probe), Some(signature), true) = (self.probe, self.signature.clone(), self.enabled) else {
                return Ok(());
            };
            if !state.has_metadata::<LocalSearchRecord>() {
                state.add_metadata(LocalSearchRecord::default());
            }
            let (corpus, executions) = (state.corpus().count(), *state.executions());
            // The state's start survives client restarts, as the record does.
            let elapsed = libafl_bolts::current_time().saturating_sub(*state.start_time());
            let record = state.metadata_mut::<LocalSearchRecord>()?;
            if record.corpus_seen != corpus {
                record.corpus_seen = corpus;
                record.grown_at = executions;
            }
            let probe_cost = (self.clock.as_ref()).and_then(|c| record.probe_cost(c));
            let share = record.share_now(executions, probe_cost);
            let Some(budget) = record.descent_budget(share, executions, elapsed) else {
                return Ok(());
            };
            log::debug!("local search: share {share:.3}, probes cost {probe_cost:?} mutants, budget {budget}");
            // A copy (with its per-target attempts) only when the stage runs, not at every call.
            let mut record = record.clone();
            let salt = *self.salt.get_or_insert_with(|| state.rand_mut().next());
            let order = Order::of_descent(record.descents);
            let mut candidates = targets(state, &record, &self.exact, order, salt);
            if candidates.is_empty() {
                return Ok(());
            }
            let by_cost = (self.clock.as_ref()).and_then(|c| c.budget(budget as f64 * PROBE_COST_SLACK));
            let mut limits = Limits {
                deadline: self.deadline,
                allowance: (record.time_allowance(share, elapsed) * TIME_SLACK).min(by_cost.unwrap_or(Duration::MAX)),
                started: Instant::now(),
            };
            if order == Order::ExactFirst {
                let mut screens = Screens {
                    probe,
                    exact: &self.exact,
                    salt,
                    limits,
                };
                match screens.run(fuzzer, executor, state, mgr, &mut record, &mut candidates) {
                    // Out of time or at the deadline: the next call goes on.
                    Err(Error::ShuttingDown) => return Ok(()),
                    Err(e) => return Err(e),
                    Ok(()) => limits = screens.limits,
                }
            }
            let target = self.pick(order, &candidates, &record, state);
            let before = progress(state);
            let rest = record.rest_since_last(before, elapsed);
            let closest = record.closest_to(target.probe).map(|c| c.input.clone());
            let starts = starts_for(state, target.holder, closest)?;
            let mut rand = StdRand::with_seed(state.rand_mut().next());
            limits.started = Instant::now();
            let (mut probes, mut out_of_time) = (0u64, false);
            let mut eval = |input: &BytesInput| {
                limits.check(&mut out_of_time)?;
                probes += 1;
                Ok(fuzzer.evaluate_input(state, executor, mgr, input)?.1)
            };
            let plan = Plan {
                target,
                starts: &starts,
                budget,
            };
            let (mut descent, result) = descend(probe, &signature, plan, &mut rand, &mut eval);
            match result {
                // Its probes ran longer than the stage's time allows: it counts, cut short.
                Err(Error::ShuttingDown) if out_of_time => {
                    descent.cut = true;
                    // The search counts a probe before running it; the cut one never ran.
                    descent.spent = probes;
                }
                // The deadline came: the stats stage ends the campaign after this one.
                Err(Error::ShuttingDown) => return Ok(()),
                Err(e) => return Err(e),
                Ok(()) => {}
            }
            let took = limits.started.elapsed();
            let noted = Noted {
                target,
                descent,
                took,
                rest,
                before,
            };
            record_descent(state, mgr, noted, elapsed + took)
        }
    }

    impl LocalSearchStage {
        /// The target of the next descent among `candidates` (not empty), ranked by `order`.
        fn pick<S: HasRand>(
            &self,
            order: Order,
            candidates: &[SearchTarget],
            record: &LocalSearchRecord,
            state: &mut S,
        ) -> SearchTarget {
            let target = match order {
                // Ranked by exact gap: the closest first.
                Order::ExactFirst if self.exact.contains(candidates[0].probe) => candidates[0],
                _ => {
                    let among = core::num::NonZero::new(candidates.len().min(CLOSEST_TARGETS)).expect("non-empty");
                    candidates[state.rand_mut().below(among)]
                }
            };
            log::debug!(
                "{} targets ({} exact) by {order:?}, first {:?}; picked {:?}",
                candidates.len(),
                candidates.iter().filter(|t| self.exact.contains(t.probe)).count(),
                candidates
                    .iter()
                    .take(12)
                    .map(|t| (t.probe, t.best, record.known_gap(t)))
                    .collect::<Vec<_>>(),
                target.probe
            );
            target
        }
    }

    /// Screening the exact slots before an [`Order::ExactFirst`] descent ranks them.
    struct Screens<'a> {
        probe: ProbeWords,
        exact: &'a ExactSlots,
        salt: u64,
        /// The stage call's; what the screens take comes off its allowance.
        limits: Limits,
    }

    impl Screens<'_> {
        /// Screens the exact `candidates` not screened at their holders yet (at most
        /// [`SCREENS_PER_CALL`]) into the state's record, then ranks `candidates` again by the
        /// updated copy, `record`.
        fn run<E, EM, S, Z>(
            &mut self,
            fuzzer: &mut Z,
            executor: &mut E,
            state: &mut S,
            mgr: &mut EM,
            record: &mut LocalSearchRecord,
            candidates: &mut Vec<SearchTarget>,
        ) -> Result<(), Error>
        where
            S: HasCorpus<BytesInput> + HasMetadata + HasNamedMetadata,
            Z: Evaluator<E, EM, BytesInput, S>,
        {
            let unscreened: Vec<SearchTarget> = (candidates.iter())
                .filter(|t| self.exact.contains(t.probe) && record.known_gap(t).is_none())
                .take(SCREENS_PER_CALL)
                .copied()
                .collect();
            if unscreened.is_empty() {
                return Ok(());
            }
            let (screens, ended) = screen(fuzzer, executor, state, mgr, self.probe, &unscreened, self.limits);
            let took = self.limits.started.elapsed();
            let live = state.metadata_mut::<LocalSearchRecord>()?;
            live.note_screens(&screens, took);
            *record = live.clone();
            ended?;
            *candidates = targets(state, record, self.exact, Order::ExactFirst, self.salt);
            self.limits.allowance = self.limits.allowance.saturating_sub(took);
            Ok(())
        }
    }

    /// Where a stage call stops: the campaign's deadline, and the time its probes may take.
    #[derive(Clone, Copy)]
    struct Limits {
        deadline: Option<SystemTime>,
        allowance: Duration,
        started: Instant,
    }

    impl Limits {
        /// `ShuttingDown` past either; `out_of_time` is set when it is the allowance.
        fn check(&self, out_of_time: &mut bool) -> Result<(), Error> {
            if past_deadline(self.deadline) {
                return Err(Error::shutting_down());
            }
            if self.started.elapsed() > self.allowance {
                *out_of_time = true;
                return Err(Error::shutting_down());
            }
            Ok(())
        }
    }

    /// Each of `targets`' exact gap at its holder: one execution each, through the normal
    /// feedback. What it measured comes back beside the error that cut it short, if one did.
    fn screen<E, EM, S, Z>(
        fuzzer: &mut Z,
        executor: &mut E,
        state: &mut S,
        mgr: &mut EM,
        probe: ProbeWords,
        targets: &[SearchTarget],
        limits: Limits,
    ) -> (Vec<(SearchTarget, Gap)>, Result<(), Error>)
    where
        S: HasCorpus<BytesInput>,
        Z: Evaluator<E, EM, BytesInput, S>,
    {
        let mut screens = Vec::with_capacity(targets.len());
        for &target in targets {
            let result = limits.check(&mut false).and_then(|()| {
                let input = BytesInput::new(input_of(state, target.holder)?);
                probe.set(Some(target.probe));
                let run = fuzzer.evaluate_input(state, executor, mgr, &input);
                let gap = probe.gap();
                probe.set(None);
                run.map(|_| gap)
            });
            match result {
                Ok(gap) => screens.push((target, gap)),
                Err(e) => return (screens, Err(e)),
            }
        }
        (screens, Ok(()))
    }

    /// Where a descent starts: the closest input an earlier descent on the target came to,
    /// the target's holder, then up to [`RESTART_DRAWS`] random other entries of the corpus
    /// for the restarts.
    fn starts_for<S>(state: &mut S, holder: CorpusId, closest: Option<Vec<u8>>) -> Result<Vec<Vec<u8>>, Error>
    where
        S: HasCorpus<BytesInput> + HasRand,
    {
        let mut starts: Vec<Vec<u8>> = closest.into_iter().collect();
        starts.push(input_of(state, holder)?);
        let count = state.corpus().count();
        for _ in 0..RESTART_DRAWS {
            if count < 2 {
                break;
            }
            let nth = state
                .rand_mut()
                .below(core::num::NonZero::new(count).expect("count >= 2"));
            let id = state.corpus().nth_from_all(nth);
            if id != holder {
                starts.push(input_of(state, id)?);
            }
        }
        Ok(starts)
    }

    /// A descent to note: its target, what it did, how long it took, what the rest of the
    /// campaign found since the one before, and the campaign's [`progress`] when it started.
    struct Noted {
        target: SearchTarget,
        descent: Descent,
        took: Duration,
        rest: FindRate,
        before: u64,
    }

    /// A descent's outcome into the record (its target's attempts, the stage's share of the
    /// executions, where the rest of the campaign stands at `ended`, the campaign's time when
    /// it ended) and the monitor.
    fn record_descent<EM, S>(state: &mut S, mgr: &mut EM, noted: Noted, ended: Duration) -> Result<(), Error>
    where
        EM: EventFirer<BytesInput, S>,
        S: HasExecutions + HasMetadata + HasNamedMetadata,
    {
        let Noted {
            target,
            mut descent,
            took,
            rest,
            before,
        } = noted;
        let now = progress(state);
        descent.progress = now.saturating_sub(before);
        let record = state.metadata_mut::<LocalSearchRecord>()?;
        record.note_descent(target, &descent, took, rest);
        record.last_mark = Some((now, ended.as_nanos() as u64));
        let (execs, reached_total) = (record.execs, record.reached);
        log::debug!(
            "local search on {:?} (best {}): {} after {} execs, {} kept, {} found in {took:?} (the rest: {} in {:?}), share {:.3}{}",
            target.probe,
            target.best,
            if descent.reached { "reached" } else { "not reached" },
            descent.spent,
            descent.found,
            descent.progress,
            rest.finds,
            Duration::from_nanos(rest.nanos),
            record.share,
            record
                .closest_to(target.probe)
                .map_or(String::new(), |c| format!("; closest gap {:e}", c.gap))
        );
        fire_count(mgr, state, SEARCH_EXECS_STAT, execs)?;
        fire_count(mgr, state, SEARCH_REACHED_STAT, reached_total)
    }

    fn input_of<S: HasCorpus<BytesInput>>(state: &S, id: CorpusId) -> Result<Vec<u8>, Error> {
        let input = state.corpus().cloned_input_for_id(id)?;
        Ok(input.target_bytes().to_vec())
    }

    restarts_from_scratch!(LocalSearchStage);
}

#[cfg(test)]
mod tests {
    use super::*;
    use numfuzz_abi::cmp::{CmpInfo, CmpOperand, Predicate};
    use numfuzz_abi::kind::slot;

    fn cmp(id: u32, predicate: Predicate) -> CmpInfo {
        CmpInfo {
            id,
            predicate,
            operand: CmpOperand::F64,
            file: "t.c".into(),
            line: 1,
            column: 1,
            function: "f".into(),
        }
    }

    #[test]
    fn divisions_by_zero_and_equalities_are_the_exact_slots() {
        let table = SiteTable {
            abi_version: numfuzz_abi::ABI_VERSION,
            signature: None,
            edges: 0,
            sites: Vec::new(),
            cmps: vec![cmp(0, Predicate::Olt), cmp(1, Predicate::Oeq), cmp(2, Predicate::INe)],
        };
        let exact = ExactSlots::of(&table);
        assert!(exact.contains(Probe::ErrBits(slot(7, ExceptionKind::DivByZero) as u32)));
        for kind in [
            ExceptionKind::Overflow,
            ExceptionKind::Underflow,
            ExceptionKind::Invalid,
        ] {
            assert!(!exact.contains(Probe::ErrBits(slot(7, kind) as u32)), "{kind:?}");
        }
        // Both outcomes of comparison 1 and 2, neither of comparison 0, nothing past the table.
        let exact_cmps: Vec<u32> = (0..8).filter(|&s| exact.contains(Probe::Cmp(s))).collect();
        assert_eq!(exact_cmps, [2, 3, 4, 5]);
    }

    #[test]
    fn comparisons_of_bytes_are_no_targets() {
        let mut flag = cmp(1, Predicate::INe);
        flag.operand = CmpOperand::I8;
        let table = SiteTable {
            abi_version: numfuzz_abi::ABI_VERSION,
            signature: None,
            edges: 0,
            sites: Vec::new(),
            cmps: vec![cmp(0, Predicate::Oeq), flag],
        };
        let exact = ExactSlots::of(&table);
        assert!(exact.searchable(Probe::Cmp(0)) && exact.searchable(Probe::Cmp(1)));
        assert!(!exact.searchable(Probe::Cmp(2)) && !exact.searchable(Probe::Cmp(3)));
        assert!(exact.searchable(Probe::ErrBits(slot(7, ExceptionKind::DivByZero) as u32)));
        // In a campaign: comparison 0 of `four_slots` tests a status flag; its slot 0 is left
        // out, the others keep their order.
        let (state, _) = four_slots();
        let flags = ExactSlots {
            equality: vec![true, false],
            byte: vec![true, false],
        };
        let record = LocalSearchRecord::default();
        for order in [Order::ExactFirst, Order::Newest] {
            let ranked = ranked(&state, &record, &flags, order);
            assert_eq!(ranked.len(), 2, "{order:?}");
            assert!(!ranked.contains(&Probe::Cmp(0)), "{order:?}");
        }
    }

    /// A state whose comparison map has slots 0..4 at gap 1 (slot 1 reached), held by corpus
    /// entries 10, -, 30, 20, and whose comparison 0 (slots 0 and 1) tests equality.
    fn four_slots() -> (libafl::state::NopState<BytesInput>, ExactSlots) {
        crate::registry::register();
        let mut state = libafl::state::NopState::<BytesInput>::new();
        let map = crate::maps::CMP_MAP;
        let history = DistanceHistory {
            best: vec![1, 0, 1, 1],
            ..DistanceHistory::default()
        };
        state.add_named_metadata(map, history);
        let mut top = DistanceTopRated::default();
        for (slot, holder) in [(0u32, 10usize), (2, 30), (3, 20)] {
            top.by_slot.insert((map.to_string(), slot), CorpusId(holder));
        }
        state.add_metadata(top);
        let exact = ExactSlots {
            equality: vec![true, false],
            byte: vec![false, false],
        };
        (state, exact)
    }

    fn ranked(
        state: &libafl::state::NopState<BytesInput>,
        record: &LocalSearchRecord,
        exact: &ExactSlots,
        order: Order,
    ) -> Vec<Probe> {
        targets(state, record, exact, order, 1)
            .iter()
            .map(|t| t.probe)
            .collect()
    }

    #[test]
    fn descents_alternate_between_exact_slots_first_and_the_newest_holders_first() {
        let (state, exact) = four_slots();
        let record = LocalSearchRecord::default();
        assert_eq!(Order::of_descent(0), Order::ExactFirst);
        assert_eq!(Order::of_descent(1), Order::Newest);
        assert_eq!(ranked(&state, &record, &exact, Order::ExactFirst)[0], Probe::Cmp(0));
        assert_eq!(
            ranked(&state, &record, &exact, Order::Newest),
            [Probe::Cmp(2), Probe::Cmp(3), Probe::Cmp(0)]
        );
        // A target tried once goes behind the untried ones; twice without progress, it is out
        // (four times where its descents lowered no gap).
        let mut record = LocalSearchRecord::default();
        record.attempts.insert(Probe::Cmp(2).encode(), (1, 1));
        record
            .attempts
            .insert(Probe::Cmp(0).encode(), (HALF_ATTEMPTS_PER_TARGET, 1));
        assert_eq!(
            ranked(&state, &record, &exact, Order::Newest),
            [Probe::Cmp(3), Probe::Cmp(2)]
        );
    }

    #[test]
    fn exact_slots_go_by_their_screened_gap_and_one_that_came_closer_goes_on() {
        crate::registry::register();
        let mut state = libafl::state::NopState::<BytesInput>::new();
        let map = crate::maps::ERRBITS_MAP;
        // Three divisions at the same distance byte, held by entries 1, 2, 3.
        let divisions = [1u32, 2, 3].map(|site| slot(site, ExceptionKind::DivByZero) as usize);
        let mut history = DistanceHistory {
            best: vec![NOT_MEASURED; 16],
            ..DistanceHistory::default()
        };
        let mut top = DistanceTopRated::default();
        for (n, &s) in divisions.iter().enumerate() {
            history.best[s] = 62;
            top.by_slot.insert((map.to_string(), s as u32), CorpusId(n + 1));
        }
        state.add_named_metadata(map, history);
        state.add_metadata(top);
        let exact = ExactSlots::default();
        let probes = divisions.map(|s| Probe::ErrBits(s as u32));
        let target = |n: usize| SearchTarget {
            probe: probes[n],
            best: 62,
            holder: CorpusId(n + 1),
        };
        // Divisors of 1.0, 2^-36 and 2.0 at the holders: the one nearest 0 first.
        let mut record = LocalSearchRecord::default();
        let gap_of = |x: f64| x.to_bits() as f64;
        let screens = [
            (target(0), gap_of(1.0)),
            (target(1), gap_of(2f64.powi(-36))),
            (target(2), gap_of(2.0)),
        ];
        record.note_screens(&screens, Duration::ZERO);
        assert_eq!(record.execs, 3);
        assert_eq!(
            ranked(&state, &record, &exact, Order::ExactFirst),
            [probes[1], probes[0], probes[2]]
        );
        // A screen holds only while its holder does.
        let moved = SearchTarget {
            holder: CorpusId(9),
            ..target(1)
        };
        assert_eq!(record.known_gap(&moved), None);
        // Tried once without coming closer: behind the untried.
        let flat = Descent {
            spent: 100,
            ..Descent::default()
        };
        record.note_descent(target(1), &flat, Duration::ZERO, FindRate::default());
        assert_eq!(
            ranked(&state, &record, &exact, Order::ExactFirst),
            [probes[0], probes[2], probes[1]]
        );
        // Its next descent came closer than any before: it goes on first.
        let closer = Descent {
            moved: true,
            spent: 100,
            closest: Some(Closest {
                gap: gap_of(2f64.powi(-40)),
                input: vec![0],
            }),
            ..Descent::default()
        };
        record.note_descent(target(1), &closer, Duration::ZERO, FindRate::default());
        assert_eq!(
            ranked(&state, &record, &exact, Order::ExactFirst),
            [probes[1], probes[0], probes[2]]
        );
        // The Newest order keeps its own ranking: the least tried, the newest holder.
        assert_eq!(
            ranked(&state, &record, &exact, Order::Newest),
            [probes[2], probes[0], probes[1]]
        );
    }

    #[test]
    fn the_next_descent_goes_on_from_the_closest_input_an_earlier_one_moved_to() {
        let target = SearchTarget {
            probe: Probe::ErrBits(slot(7, ExceptionKind::DivByZero) as u32),
            best: 62,
            holder: CorpusId(3),
        };
        let moved_to = |gap: Gap, x: u8| Descent {
            moved: true,
            spent: 100,
            closest: Some(Closest { gap, input: vec![x] }),
            ..Descent::default()
        };
        let halves = |r: &LocalSearchRecord| r.attempts[&target.probe.encode()].0;
        let mut record = LocalSearchRecord::default();
        // Closer than any descent before: half an attempt, and its input is kept.
        record.note_descent(target, &moved_to(1e18, 1), Duration::ZERO, FindRate::default());
        assert_eq!(
            (halves(&record), record.closest_to(target.probe).map(|c| c.input[0])),
            (1, Some(1))
        );
        record.note_descent(target, &moved_to(5e17, 2), Duration::ZERO, FindRate::default());
        assert_eq!(
            (halves(&record), record.closest_to(target.probe).map(|c| c.input[0])),
            (2, Some(2))
        );
        // Moved, but not as close: a whole attempt, and the next descent starts afresh.
        record.note_descent(target, &moved_to(7e17, 3), Duration::ZERO, FindRate::default());
        assert_eq!((halves(&record), record.closest_to(target.probe)), (4, None));
        // Reached: the attempts start over and nothing is left to go on from.
        let reached = Descent {
            reached: true,
            moved: true,
            ..Descent::default()
        };
        record.note_descent(target, &reached, Duration::ZERO, FindRate::default());
        assert_eq!(
            (halves(&record), record.closest_to(target.probe), record.reached),
            (0, None, 1)
        );
    }

    #[test]
    fn the_share_grows_only_for_descents_that_reach_or_find_faster_than_the_rest() {
        let target = SearchTarget {
            probe: Probe::ErrBits(slot(7, ExceptionKind::Overflow) as u32),
            best: 40,
            holder: CorpusId(3),
        };
        let kept = |progress| Descent {
            moved: true,
            spent: 1_000,
            found: 2 * progress,
            progress,
            ..Descent::default()
        };
        let second = Duration::from_secs(1);
        let per_second = |finds| FindRate {
            finds,
            nanos: 1_000_000_000,
        };
        let mut record = LocalSearchRecord::default();
        // Five edges in a second while the rest found twenty: the stage gives way.
        record.note_descent(target, &kept(5), second, per_second(20));
        assert!(record.share < SHARE_START, "{}", record.share);
        let shrunk = record.share;
        // Five while the rest found two: the stage grows.
        record.note_descent(target, &kept(5), second, per_second(2));
        assert!(record.share > shrunk, "{}", record.share);
        let grown = record.share;
        // Nothing found, though the rest found nothing either: no success.
        record.note_descent(target, &kept(0), second, per_second(0));
        assert!(record.share < grown, "{}", record.share);
        // Reaching the target is a success however little it found.
        let low = record.share;
        let reached = Descent {
            reached: true,
            ..kept(0)
        };
        record.note_descent(target, &reached, second, per_second(1_000));
        assert!(record.share > low, "{}", record.share);
    }

    #[test]
    fn the_rest_of_the_campaign_is_counted_from_the_last_descent() {
        let mut record = LocalSearchRecord {
            nanos: 2_000_000_000,
            ..LocalSearchRecord::default()
        };
        // Before any descent: all progress over the time outside the stage.
        let rest = record.rest_since_last(50, Duration::from_secs(10));
        assert_eq!(
            rest,
            FindRate {
                finds: 50,
                nanos: 8_000_000_000
            }
        );
        // After one that ended at 10 s at 60: what came since.
        record.last_mark = Some((60, 10_000_000_000));
        let rest = record.rest_since_last(64, Duration::from_secs(12));
        assert_eq!(
            rest,
            FindRate {
                finds: 4,
                nanos: 2_000_000_000
            }
        );
    }

    #[test]
    fn a_stalled_corpus_gives_the_stage_its_largest_share_unless_its_probes_are_dear() {
        let record = LocalSearchRecord {
            grown_at: 1_000,
            ..LocalSearchRecord::default()
        };
        assert_eq!(record.share_now(1_000 + STALLED_EXECS - 1, None), SHARE_START);
        assert_eq!(record.share_now(1_000 + STALLED_EXECS, None), SHARE_MAX);
        // Probes of a few mutants' worth get all of it; dearer ones less, never below the
        // stage's own share.
        let stalled = 1_000 + STALLED_EXECS;
        assert_eq!(record.share_now(stalled, Some(PROBE_COST_PAR)), SHARE_MAX);
        assert_eq!(record.share_now(stalled, Some(PROBE_COST_PAR * 4.0)), SHARE_MAX / 2.0);
        assert_eq!(record.share_now(stalled, Some(PROBE_COST_PAR * 1e6)), SHARE_START);
    }

    /// A campaign time no share of which binds (the stage has not probed yet, or probes fast).
    const LONG: Duration = Duration::from_secs(3600);

    #[test]
    fn slow_probes_hold_the_stage_to_its_share_of_the_time() {
        let record = LocalSearchRecord {
            grown_at: u64::MAX / 2,
            share: SHARE_MAX,
            // 1,000 probes of 10 ms.
            execs: 1_000,
            nanos: 10_000_000_000,
            ..LocalSearchRecord::default()
        };
        // 1,000 of 100,000 executions is well under the share, but 10 s of 20 s is not.
        assert_eq!(
            record.descent_budget(record.share, 100_000, Duration::from_secs(20)),
            None
        );
        // At 30 s, (12 - 10) / 0.6 s more: 333 probes, short of half the stage's 1,200.
        assert_eq!(
            record.descent_budget(record.share, 100_000, Duration::from_secs(30)),
            None
        );
        // At 40 s, (16 - 10) / 0.6 s more: 1,000 probes of 10 ms.
        let budget = record
            .descent_budget(record.share, 100_000, Duration::from_secs(40))
            .unwrap();
        assert!((990..=1_000).contains(&budget), "{budget}");
        // Before any probe, one short descent.
        let first = LocalSearchRecord {
            execs: 0,
            nanos: 0,
            ..record.clone()
        };
        assert_eq!(first.descent_budget(first.share, 1_000_000, LONG), Some(DESCENT_MIN));
        // The next descent's time: (16 - 10) / 0.6 s at 40 s, none at 20 s.
        assert_eq!(
            record.time_allowance(record.share, Duration::from_secs(40)).as_secs(),
            10
        );
        assert_eq!(
            record.time_allowance(record.share, Duration::from_secs(20)),
            Duration::ZERO
        );
        // At a smaller share the time binds sooner: 10 s is more than 10 % of 40 s.
        let small = LocalSearchRecord {
            share: SHARE_START,
            ..record.clone()
        };
        assert_eq!(
            small.descent_budget(small.share, 100_000, Duration::from_secs(40)),
            None
        );
        assert_eq!(
            small.time_allowance(small.share, Duration::from_secs(40)),
            Duration::ZERO
        );
        assert!(small
            .descent_budget(small.share, 100_000, Duration::from_secs(200))
            .is_some());
        // Fast probes: the executions bind, as before.
        let fast = LocalSearchRecord {
            nanos: 1_000_000,
            ..record.clone()
        };
        assert_eq!(
            fast.descent_budget(fast.share, 1_000_000, Duration::from_secs(20)),
            Some(DESCENT_BUDGET)
        );
    }

    #[test]
    fn a_descent_never_takes_the_stage_past_its_share() {
        // Ten probes of 1 µs so far.
        let record = LocalSearchRecord {
            grown_at: u64::MAX / 2,
            execs: 10,
            nanos: 10_000,
            ..LocalSearchRecord::default()
        };
        // A slow target's first minute (~100 exec/s): no full descent, and none at all early.
        assert_eq!(record.descent_budget(record.share, 1_000, LONG), None);
        let budget = record
            .descent_budget(record.share, 4_000, LONG)
            .expect("room for a short descent");
        assert!((DESCENT_MIN..DESCENT_BUDGET).contains(&budget));
        assert!((budget as f64) <= SHARE_START * (4_000 + budget) as f64);
        // A fast one gets full descents while it is under its share, and none above it.
        assert_eq!(
            record.descent_budget(record.share, 1_000_000, LONG),
            Some(DESCENT_BUDGET)
        );
        let spent = LocalSearchRecord {
            execs: 100_000,
            ..record.clone()
        };
        assert_eq!(spent.descent_budget(spent.share, 1_000_000, LONG), None);
        // Once the stage has caught up with its share, it waits for a full descent's worth
        // again instead of starting one the moment a few hundred executions are allowed.
        let caught_up = LocalSearchRecord {
            execs: 99_000,
            ..record.clone()
        };
        assert_eq!(caught_up.descent_budget(caught_up.share, 1_000_000, LONG), None);
        assert_eq!(
            caught_up.descent_budget(caught_up.share, 1_040_000, LONG),
            Some(DESCENT_BUDGET)
        );
    }
}
