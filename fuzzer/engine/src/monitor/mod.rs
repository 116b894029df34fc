//! What a campaign shows while it runs: a screen on a terminal (`screen`), status lines
//! elsewhere (`status`), both drawn from one `Snapshot` of the clients' statistics.

pub mod draw;
pub mod screen;
pub mod snapshot;
pub mod status;

pub use screen::ScreenMonitor;
pub use snapshot::{Snapshot, Tracker};
pub use status::StatusMonitor;
