//! The inputs triage works on: a campaign's saved ones (`campaign`), how ordinary an input
//! is (`ordinariness`: which input a bug shows, and the order of the bugs), and the simplest
//! input that still raises a finding (`minimize`).

pub mod campaign;
pub mod minimize;
pub mod ordinariness;
