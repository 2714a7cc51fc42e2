//! specc-plan: planning with models.
//!
//! A planner model takes one intent node, with its ancestors' decisions and the field
//! guide, and answers through a forced tool call (`ask.rs`, the protocol every structured
//! question of specc's uses) with the design decisions it makes and the children it splits
//! the node into (`planner.rs`). [`plan_tree`] plans a whole intent tree depth first, with
//! answers cached by what their requests depend on (`plan_cache.rs`), a re-planned task
//! amending its earlier answer (`amend.rs`), and the [`coordinator`] merging two planners'
//! decisions of one question. [`OutlinePlanner`] plans from the spec's outline with no
//! model; [`Limits`] is specc.toml's `[limits]`, and [`field_guide`] the agents' notes
//! every planner is given. Planning knows nothing of the VCS, the sandbox or the build's
//! execution.

mod amend;
pub mod ask;
pub mod coordinator;
mod error;
pub mod field_guide;
mod limits;
mod outline;
mod plan_cache;
mod plan_tree;
pub mod planner;
pub mod spec_text;

pub use ask::{Asked, ForcedCall};
pub use error::PlanError;
pub use limits::{Limits, LimitsError};
pub use outline::OutlinePlanner;
pub use plan_cache::Cache;
pub use plan_tree::{PlannedTree, plan_tree};
