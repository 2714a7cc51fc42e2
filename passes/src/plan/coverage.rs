//! Every MUST, MUST NOT, SHALL and SHALL NOT requirement is covered by at least one work leaf.

use std::collections::HashSet;

use specc_ir::{Diagnostic, IntentTree, Level, codes};

/// Diagnostics for the binding requirements of `spec` that no id in `covered` (the
/// requirement ids the work leaves of the whole tree cover) names.
pub fn uncovered(spec: &IntentTree, covered: &HashSet<String>) -> Vec<Diagnostic> {
    spec.requirements()
        .filter(|r| matches!(r.level, Level::Must | Level::MustNot | Level::Shall | Level::ShallNot))
        .filter(|r| !covered.contains(r.id.as_str()))
        .map(|r| {
            Diagnostic::new(
                codes::REQUIREMENT_NOT_COVERED,
                format!("requirement {} ({}) is covered by no work leaf", r.id, r.level),
            )
            .with_primary(r.span, "this requirement")
            .with_help("re-plan the node that holds it, or give a work leaf `covers_requirements` with its id")
        })
        .collect()
}
