//! What follows a task's submission: the merge agent that reconciles a conflicted one with
//! the head (`reconcile.rs`), and after a landing the reviewers' follow-ups (`review.rs`,
//! configured by `review_config.rs`), the revisits a deliberate break calls for
//! (`revisit.rs`), the coordinator's merge of two decisions a worker found contradicting
//! (`contradiction.rs`), the split of a file over the line budget (`split.rs`), and what an
//! attempt gathers of them (`after.rs`).
//! design: runtime.reviewers

mod after;
mod contradiction;
mod intents;
mod pins;
mod reconcile;
mod reported;
mod review;
mod review_config;
mod revisit;
mod settled;
mod split;

pub(crate) use after::{reviewed, revisits};
pub(crate) use contradiction::{record_settled, settle as settle_contradictions};
pub use intents::Intents;
pub use pins::{PinError, Pins, StaleRef};
pub use reconcile::{Merged, Reconciled, TOOL as MERGE_TOOL, reconcile};
pub(crate) use reported::{BREAK_LINES, Break, Contradiction};
pub(crate) use review::FollowUp;
pub use review_config::{Lens, ReviewConfig, ReviewConfigError, Severity};
pub(crate) use revisit::update_decision;
pub use settled::Settled;
pub(crate) use settled::{Contest, Contester};
pub(crate) use split::{BLOCKED_SUFFIX, SplitNeed, need as split_need, split_order};
