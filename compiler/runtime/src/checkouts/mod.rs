//! The attempts' checkouts: pooled slots moved between commits by the VCS's tree diff
//! (`slots.rs`), lazily (`tracked.rs`: what the tools wrote and what the directory still
//! owes its base), the writing of their files (`files.rs`), what a checkout's tree holds
//! for specc (`tree.rs`), the diff of an attempt against its base (`diff.rs`) and the write
//! scope it may land (`scope.rs`).
//! design: runtime.workspace

mod diff;
mod files;
mod generated;
mod scope;
mod slots;
mod tracked;
mod tree;

pub(crate) use diff::{Diff, diff, diff_tracked, logs_for, restore_outside};
pub use files::apply;
pub(crate) use files::{fill, mode_of, open_regular};
pub(crate) use generated::briefing as generated_files_briefing;
pub use scope::Scope;
pub(crate) use scope::{Denied, module_dir, normalise, reserved};
pub(crate) use slots::Lease;
pub use slots::Slots;
pub(crate) use tracked::Tracked;
pub(crate) use tree::walk;
pub(crate) use tree::{KEPT, walk_files};
