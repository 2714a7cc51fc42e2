//! One work task from start to landing: attempts (checkout → agent loop → acceptance →
//! submit) up the escalation ladder. Acceptance fails → the worker sees it once (in the
//! loop) → the planner re-plans the leaf with the failure → the `escalation` role's model,
//! if configured → the task fails. A submission that conflicts with work landed meanwhile
//! goes to the merge agent if a `merger` role is configured; otherwise, or if the merge
//! agent sends it back, the task re-runs on the new head with the conflict shown (at most
//! `ladder::MAX_CONFLICT_RERUNS` times).
//!
//! Read top-down: `ladder.rs` (the rungs, from a resumed attempt in `resume.rs`) →
//! `one.rs` (one attempt) → `agent.rs` (the model/tool loop, its limits and `stuck.rs`)
//! → `acceptance.rs`; `handoff.rs` gives a conflict to the merge agent, `ending.rs` is how
//! an attempt ended. `context.rs` is what a worker is told, `orders.rs` gathers it from
//! the Task IR, `replan.rs` asks the planner for new instructions.
//! design: runtime.escalation

mod acceptance;
mod agent;
mod baseline;
mod budget;
mod carry;
mod contest;
mod context;
mod ending;
mod handoff;
mod ladder;
mod one;
mod orders;
mod ratchet;
mod reading;
mod references;
mod replan;
mod resume;
mod rungs;
mod stuck;

pub(crate) use acceptance::run as run_checks;
pub use acceptance::{Check, Shell};
pub use context::{
    DecisionText, ParentBrief, RequirementText, Retry, SiblingBrief, SpecSection, WorkOrder,
    opening_chars,
};
pub use ladder::run_task;
pub use orders::{Unrunnable, fingerprint, with_adopted_checks, work_orders};
pub use reading::SpecIndex;
pub(crate) use replan::apply_journaled;
