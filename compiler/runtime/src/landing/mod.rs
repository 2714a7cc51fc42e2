//! What follows a task's submission: the merge agent that reconciles a conflicted one with
//! the head (`reconcile.rs`), and after a landing the reviewers' follow-ups (`review.rs`,
//! configured by `review_config.rs`), the revisits a deliberate break calls for
//! (`revisit.rs`), the coordinator's merge of two decisions a worker found contradicting
//! (`contradiction.rs`), the split of a file over the line budget (`split.rs`), and what an
//! attempt gathers of them (`after.rs`).
//! design: runtime.reviewers

mod after;
mod contradiction;
mod reconcile;
mod review;
mod review_config;
mod revisit;
mod split;

pub use after::{reviewed, revisits};
pub use contradiction::{Contradiction, settle as settle_contradictions};
pub use reconcile::{Intents, Merged, TOOL as MERGE_TOOL, added_lines, reconcile};
pub use review::{FollowUp, TOOL as REVIEW_TOOL};
pub use review_config::{Lens, ReviewConfig, ReviewConfigError, Severity};
pub use revisit::{BREAK_LINES, Break, PinError, Pins, StaleRef, update_decision};
pub use split::{BLOCKED_SUFFIX, SplitNeed, need as split_need, split_order};
