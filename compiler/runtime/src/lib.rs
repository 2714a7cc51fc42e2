//! specc-runtime: driving models through the compiler's work. So far: the planner protocol
//! (one request per intent node, a schema-checked answer, at most two repairs), planning a
//! whole tree with answers cached by request fingerprint, the coordinator that merges two
//! planners' decisions of one question, the field guide and the `[limits]` of specc.toml.

pub mod coordinator;
pub mod field_guide;
pub mod limits;
pub mod outline;
pub mod plan_tree;
pub mod planner;
