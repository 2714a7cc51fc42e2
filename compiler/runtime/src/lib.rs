//! specc-runtime: driving models through the compiler's work. So far: the planner protocol
//! (one request per intent node, a schema-checked answer, at most two repairs) and planning a
//! whole tree with answers cached by request fingerprint.

pub mod outline;
pub mod plan_tree;
pub mod planner;
