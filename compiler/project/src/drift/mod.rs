//! What drifted in a tree specc built: the files changed since specc's last commit, the
//! references and tests they lost, pinned code edited, stale pins; and the baseline of
//! findings people accepted (`specc-drift.json`).
//! design: driver.drift

pub mod baseline;
pub mod findings;

pub use baseline::{BadBaseline, Baseline};
pub use findings::{Finding, Kind, NoBase};
