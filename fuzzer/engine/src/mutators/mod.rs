//! IEEE-754 field-aware mutators (see mod docs once written).
