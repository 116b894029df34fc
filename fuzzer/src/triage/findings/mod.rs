//! The report's findings, built from the replays and the analyses below them: the replays
//! grouped into findings, crashes and hangs (`group`), one input judged for one finding
//! (`judge`), and the bugs merged into one entry per defect: per dropped error report
//! (`dropped_report`), then per source line where precision was lost or the root is
//! (`precision_lost`).

pub mod dropped_report;
pub mod group;
pub mod judge;
pub mod precision_lost;
