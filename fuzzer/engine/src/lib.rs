//! numfuzz's LibAFL components, shared by the `numfuzz` binary (forkserver campaigns) and
//! the runtime linked into targets (in-process campaigns).

/// `Restartable` for stages that keep no progress of their own: LibAFL asks every stage whether
/// an interrupted run of it resumes; these simply run again (and have nothing to clear).
macro_rules! restarts_from_scratch {
    ($($stage:ty),+ $(,)?) => {$(
        impl<S> libafl::stages::Restartable<S> for $stage {
            fn should_restart(&mut self, _state: &mut S) -> Result<bool, libafl::Error> {
                Ok(true)
            }

            fn clear_progress(&mut self, _state: &mut S) -> Result<(), libafl::Error> {
                Ok(())
            }
        }
    )+};
}

pub mod campaign;
pub mod client;
pub mod client_types;
pub mod config;
pub mod context;
pub mod feedbacks;
pub mod hangs;
pub mod i2s;
pub mod inprocess;
pub mod interrupted_turns;
pub mod local_search;
pub mod logging;
pub mod maps;
pub mod meta;
pub mod monitor;
pub mod mutators;
pub mod registry;
pub mod run_flags;
pub mod run_mode;
pub mod saved_inputs;
pub mod scheduler;
pub mod stats;
pub mod stop;
pub mod summary;
pub mod supervisor;
pub mod time_use;
pub mod timeout;
pub mod turn_time;
pub mod user_stats;
