//! specc-passes: the pure passes of the compiler.
//!
//! Everything here is a function from data to data: no file system, no network, no clock,
//! no tokio. Effects enter only as salsa input values set by the driver.
//!
//! * [`front_end`] turns a Markdown spec into the Intent IR plus diagnostics; it never fails.
//! * [`design_docs`] reads the decisions recorded in `design-docs/*.md`.
//! * [`plan`] checks planner answers: ownership, spec decisions, scopes, coverage, shape.
//! * [`references`] finds `design: <id>` and `req: <id>` references in source comments.
//! * [`requirements`] resolves `req:` references against the spec's requirement ids.
//! * [`check`] holds the salsa queries of `specc check`: references against decisions and
//!   requirements.
//! * [`db`] holds the salsa `Db` trait, the inputs and the tracked queries over them.
//! * [`surface`] reads a source file's public items (what `specc adopt` keeps).
//! * [`eval`] scores a test run from its output (cargo test, pytest, TAP, JUnit XML).
//!
//! design: passes.pure

pub mod adopted;
pub mod check;
pub mod db;
pub mod design_docs;
pub mod eval;
pub mod front_end;
pub mod plan;
pub mod ratchet;
pub mod references;
pub mod requirements;
pub mod secrets;
pub mod spelling;
pub mod surface;
#[cfg(test)]
mod test_support;

pub use front_end::{Parsed, parse_spec};
