//! specc's integration tests: one binary, fixture-driven where it can be.

mod adversarial;
mod check_fixtures;
mod cli;
mod fingerprints;
mod fixtures;
mod incremental;
mod own_design_docs;
mod support;
