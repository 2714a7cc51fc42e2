//! Checks run after each planner answer (issue 6's passes), each a pure function over the
//! answer and what the tree already holds. They return diagnostics; `scope` may also add
//! dependencies to serialise siblings whose write scopes overlap.
//! design: passes.plan-checks

mod acceptance;
mod contests;
mod coverage;
mod lower;
mod ownership;
mod scope;
mod shape;
mod siblings;
mod validate;
mod words;

pub use acceptance::{Commands, check_acceptance, problem as acceptance_problem};
pub use contests::check_contests;
pub use coverage::{check_known_ids, check_node_coverage, uncovered};
pub use lower::{LowerOptions, design_docs, lower};
pub use ownership::{
    Conflict, Owned, check_ownership, check_spec_decisions, claim_decisions, decision_key,
};
pub use scope::{scopes_may_overlap, serialise_overlapping_writes};
pub use shape::{check_cycles, check_keys, check_limits};
pub use siblings::{SIBLING_DECISIONS, sibling_decisions};
pub use validate::{check_names_and_scopes, is_valid_decision_id, is_valid_key, scope_problem};
pub use words::task_name;

#[cfg(test)]
mod acceptance_tests;
#[cfg(test)]
mod tests;
