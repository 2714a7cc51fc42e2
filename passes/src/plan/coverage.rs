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

/// The binding requirements of `node`'s subtree (the part of the spec this answer plans)
/// that no child of `answer` takes on: a child takes on a requirement it names in
/// `covers_requirements`, and a plan child takes on every requirement under the node it
/// plans, the first it names in `covers_nodes` (its own answer must then cover them). A plan child that names
/// no node plans `node` itself and takes on everything. Checked on every answer, so a plan
/// that drops requirements is repaired, not accepted.
pub fn check_node_coverage(
    node: &specc_ir::IntentNode,
    answer: &specc_ir::plan::PlannerAnswer,
) -> Vec<Diagnostic> {
    use specc_ir::plan::ChildKind;
    let plans: Vec<&specc_ir::plan::PlannedChild> = answer
        .children
        .iter()
        .filter(|c| c.kind == ChildKind::Plan)
        .collect();
    if plans.iter().any(|c| c.covers_nodes.is_empty()) {
        return Vec::new();
    }
    // A plan child plans the first node it names (runtime's plan walk).
    let delegated: HashSet<&str> = plans
        .iter()
        .filter_map(|c| c.covers_nodes.first().map(String::as_str))
        .collect();
    // Only a work child carries out what it names; a plan child takes on its node only.
    let named: HashSet<&str> = answer
        .children
        .iter()
        .filter(|c| c.kind == ChildKind::Work)
        .flat_map(|c| c.covers_requirements.iter().map(String::as_str))
        .collect();
    let mut out = Vec::new();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if delegated.contains(n.id.as_str()) {
            continue;
        }
        for r in &n.requirements {
            let binding = matches!(
                r.level,
                Level::Must | Level::MustNot | Level::Shall | Level::ShallNot
            );
            if binding && !named.contains(r.id.as_str()) {
                out.push(
                    Diagnostic::new(
                        codes::REQUIREMENT_NOT_COVERED,
                        format!(
                            "requirement {} ({}) of `{}` is taken on by no child of this answer",
                            r.id, r.level, n.id
                        ),
                    )
                    .with_primary(r.span, "this requirement")
                    .with_help(format!(
                        "name it in a work child's `covers_requirements` (it says: {}), or give its section `{}` a plan child of its own: a plan child plans only the first node in its `covers_nodes`",
                        super::words::cut(&r.text, 100),
                        n.id
                    )),
                );
            }
        }
        stack.extend(n.children.iter().rev());
    }
    out
}
