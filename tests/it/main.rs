//! specc's integration tests: one binary, fixture-driven where it can be.

mod adversarial;
mod build;
mod build_break;
mod build_disputes;
mod build_guards;
mod build_incremental;
mod build_logs;
mod build_megafile;
mod build_merge;
mod build_resume;
mod build_review;
mod check_cli;
mod check_fixtures;
mod check_incremental;
mod check_windowed;
mod cli;
mod config;
mod cost;
mod eval;
mod eval_report;
mod fingerprints;
mod fixtures;
mod hygiene;
mod hygiene_imports;
mod incremental;
mod own_design_docs;
#[path = "../../compiler/state/tests/pg/mod.rs"]
mod pg;
mod plan_cases;
mod plan_tasks;
mod sandbox;
mod serve;
mod serve_coordinate;
mod show;
mod state_schema;
mod support;
