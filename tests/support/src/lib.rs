//! What the test suites of several crates share (a dev-dependency only): a PostgreSQL
//! database for a test (`pg`). Helpers for specc's own integration tests live in
//! specc-tests' library; this crate depends on no specc crate, so any crate's tests can use
//! it without a cycle.

pub mod pg;
