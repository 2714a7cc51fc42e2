//! specc-runtime: driving models through the compiler's work. So far: the planner protocol
//! (one request per intent node, a schema-checked answer, at most two repairs).

pub mod planner;
