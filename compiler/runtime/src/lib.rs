//! specc-runtime: driving models through the compiler's work.
//!
//! Planning: the planner protocol (`planner`), planning a whole tree with answers cached by
//! what their requests depend on (`plan_tree`, `plan_cache`), re-planning an edited task by
//! amending its earlier answer (`amend`), the coordinator that merges two planners' decisions
//! of one question, the field guide and the `[limits]` of specc.toml, and the outline
//! planner that needs no model.
//!
//! Execution, read top-down: `build` (seed, schedule the leaves over their DAG, report) →
//! `attempt` (one leaf up its escalation ladder; one attempt: checkout → agent loop →
//! acceptance → submit) → `agent` (the model/tool loop and its enforced limits, `stuck`) →
//! `tools` (read, list, search, edit, write, run, note, flag_big_file, done, give_up) over a
//! `workspace` checkout, within a write `scope`. Commands go through a `runner`; `journal`
//! writes every step to the state database; `context` is what a worker is told and
//! `orders` gathers it; `replan` asks the planner to rewrite a failed leaf.

pub mod acceptance;
pub mod agent;
pub mod amend;
pub mod attempt;
pub mod build;
pub mod context;
pub mod contradiction;
pub mod coordinator;
pub mod dispatch;
pub mod eval;
pub mod field_guide;
pub mod journal;
pub mod journal_read;
pub mod journal_resume;
pub mod journal_status;
pub mod limits;
pub mod merge;
pub mod metrics;
pub mod orders;
pub mod outline;
pub mod plan_cache;
pub mod plan_tree;
pub mod planner;
pub mod replan;
pub mod review;
pub mod review_config;
pub mod revisit;
pub mod runner;
pub mod runners;
pub mod sandbox;
pub mod scope;
pub mod slots;
pub mod split;
pub mod stuck;
pub mod task_leases;
pub mod tools;
pub mod workspace;

pub use build::Event;
