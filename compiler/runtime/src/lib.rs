//! specc-runtime: carrying out a plan's work with models.
//!
//! Read top-down: [`build`] (`scheduling/`: seed the repository, run the work leaves over
//! their DAG here or on remote workers through a [`Dispatch`]) → [`run_task`] (`attempt/`:
//! one leaf up its escalation ladder; one attempt is checkout → agent loop → acceptance →
//! submit) → `tools/` (read, list, search, edit, write, run, note, …) over a checkout slot
//! (`checkouts/`) → `landing/` (the merge agent for a conflicted submission; reviews,
//! revisits, contradictions and splits after a landing). What a build lends each task is
//! [`Services`]; how a task ended is [`TaskEnd`]; what happened, for progress, an
//! [`Event`]. `eval/` scores commits against a hidden test suite while a build runs.
//!
//! Planning is specc-plan's, state specc-state's, command confinement specc-sandbox's; this
//! crate drives them.

mod attempt;
mod checkouts;
pub mod eval;
mod events;
mod landing;
mod scheduling;
mod services;
mod task_end;
mod tools;

pub use attempt::{
    Check, DecisionText, ParentBrief, RequirementText, Retry, Shell, SiblingBrief, SpecIndex,
    SpecSection, Unrunnable, WorkOrder, fingerprint, opening_chars, run_task, with_adopted_checks,
    work_orders,
};
pub use checkouts::{Scope, Slots, apply as apply_changes};
pub use events::Event;
pub use landing::{
    Intents, Lens, MERGE_TOOL, Merged, PinError, Pins, Reconciled, ReviewConfig, ReviewConfigError,
    Settled, Severity, StaleRef, reconcile,
};
pub use scheduling::dispatch::{Claimed, Counters, wire};
pub use scheduling::{BuildReport, Dispatch, Landings, Plan, TaskReport, Workers, build};
pub use services::{AttemptLimits, AttemptPolicy, Escalation, OnConflict, Services, Stores};
pub use task_end::{Landed, TaskEnd};
pub use tools::{Base, Toolbox, schema_chars as tool_schema_chars};
