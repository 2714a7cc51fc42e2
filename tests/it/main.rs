//! specc's integration tests: one binary, fixture-driven where it can be.

mod adversarial;
mod build;
mod build_break;
mod build_guards;
mod build_incremental;
mod build_megafile;
mod build_merge;
mod build_resume;
mod build_review;
mod check_cli;
mod check_fixtures;
mod check_incremental;
mod check_windowed;
mod cli;
mod cost;
mod fingerprints;
mod fixtures;
mod incremental;
mod own_design_docs;
mod plan_cases;
mod plan_tasks;
mod sandbox;
mod support;
