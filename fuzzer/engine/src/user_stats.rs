//! Figures a client sends its monitor (LibAFL user stats): what the screen and the status
//! lines show beside LibAFL's own counts.

use libafl::events::{Event, EventFirer, EventWithStats};
use libafl::monitors::stats::{AggregatorOps, UserStats, UserStatsValue};
use libafl::state::HasExecutions;
use libafl::Error;
use std::borrow::Cow;
use std::marker::PhantomData;

/// `name` = `value` to the monitor, summed over clients.
pub fn fire_count<EM, I, S>(manager: &mut EM, state: &mut S, name: &'static str, value: u64) -> Result<(), Error>
where
    EM: EventFirer<I, S>,
    S: HasExecutions,
{
    fire_stat(
        manager,
        state,
        name,
        UserStats::new(UserStatsValue::Number(value), AggregatorOps::Sum),
    )
}

/// `name` = `text` to the monitor, for this client only (the screen shows the sender's newest).
pub fn fire_text<EM, I, S>(manager: &mut EM, state: &mut S, name: &'static str, text: String) -> Result<(), Error>
where
    EM: EventFirer<I, S>,
    S: HasExecutions,
{
    let value = UserStats::new(UserStatsValue::String(Cow::Owned(text)), AggregatorOps::None);
    fire_stat(manager, state, name, value)
}

fn fire_stat<EM, I, S>(manager: &mut EM, state: &mut S, name: &'static str, value: UserStats) -> Result<(), Error>
where
    EM: EventFirer<I, S>,
    S: HasExecutions,
{
    let executions = *state.executions();
    let event = Event::UpdateUserStats {
        name: Cow::Borrowed(name),
        value,
        phantom: PhantomData,
    };
    manager.fire(state, EventWithStats::with_current_time(event, executions))
}

/// User-stat names of the exception counts, by kind index.
pub const EXCEPTION_STATS: [&str; 4] = ["exc_invalid", "exc_divbyzero", "exc_overflow", "exc_underflow"];
/// User-stat name of the count of (site, kind) origins whose input escaped (a result went
/// non-finite from finite fields, unreported).
pub const ESCAPES_STAT: &str = "fp_escapes";
/// User-stat name of a client's newest escaping origin: `Overflow exp.c:406:22 fmul`.
pub const LAST_ESCAPE_STAT: &str = "fp_last_escape";
