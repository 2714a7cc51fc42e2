//! Scoring a commit against a test suite the workers never saw: the `[eval]` table of
//! specc.toml (`config`), one evaluation in the sandbox (`Evaluator`), what else a point of
//! the series measures (`metrics`), and the series in the state database (`series`).
//!
//! An evaluation checks the commit out into its own directory (`.specc/eval/<name>/`, never
//! a worker's), copies the hidden tests in, runs the command through the build's runner (the
//! sandbox), and reads its output with `specc_passes::eval`. The tests directory is outside
//! every worker checkout and outside what the sandbox lets a command read.
//! design: eval.run

pub mod config;
mod during;
mod error;
mod evaluator;
pub mod metrics;
pub mod series;

pub use config::{EvalConfig, EvalConfigError, Every};
pub use during::{Progress, Seen, during_build};
pub use error::EvalError;
pub use evaluator::{Evaluation, Evaluator, copy_tree};
pub use metrics::Metrics;
pub use series::EVAL;

#[cfg(test)]
mod tests;
