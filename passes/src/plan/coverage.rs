//! Every MUST, MUST NOT, SHALL and SHALL NOT requirement is covered by at least one work leaf.

use std::collections::HashSet;

use specc_ir::{Diagnostic, IntentTree, Level, codes};

use super::words::cut;

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
    // A requirement the answer waives (`no_code`, with a reason) is taken on too.
    let named: HashSet<&str> = answer
        .children
        .iter()
        .filter(|c| c.kind == ChildKind::Work)
        .flat_map(|c| c.covers_requirements.iter().map(String::as_str))
        .chain(
            answer
                .no_code
                .iter()
                .filter(|w| !w.reason.trim().is_empty())
                .map(|w| w.id.as_str()),
        )
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
                        cut(&r.text, 100),
                        n.id
                    )),
                );
            }
        }
        stack.extend(n.children.iter().rev());
    }
    out
}

/// Diagnostics for ids `answer` names that `node`'s part of the spec does not have: a
/// `covers_nodes` id that is not `node` or below it, a `covers_requirements` id that is no
/// requirement of that subtree nor one the task was assigned (`assigned`). Each names the
/// ids it could have meant, so the repair is a lookup, not a guess.
pub fn check_known_ids(
    node: &specc_ir::IntentNode,
    assigned: &[String],
    answer: &specc_ir::plan::PlannerAnswer,
) -> Vec<Diagnostic> {
    let mut nodes: Vec<&str> = Vec::new();
    let mut requirements: Vec<&str> = assigned.iter().map(String::as_str).collect();
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        nodes.push(n.id.as_str());
        requirements.extend(n.requirements.iter().map(|r| r.id.as_str()));
        stack.extend(n.children.iter().rev());
    }
    let mut out = Vec::new();
    for c in &answer.children {
        for id in c
            .covers_nodes
            .iter()
            .filter(|id| !nodes.contains(&id.as_str()))
        {
            out.push(unknown_id(&c.key, "covers_nodes", "node", id, &nodes));
        }
        for id in c
            .covers_requirements
            .iter()
            .filter(|id| !requirements.contains(&id.as_str()))
        {
            out.push(unknown_id(
                &c.key,
                "covers_requirements",
                "requirement",
                id,
                &requirements,
            ));
        }
    }
    for w in &answer.no_code {
        if !requirements.contains(&w.id.as_str()) {
            out.push(unknown_id(
                "no_code",
                "no_code",
                "requirement",
                &w.id,
                &requirements,
            ));
        } else if w.reason.trim().is_empty() {
            out.push(
                Diagnostic::new(
                    codes::UNKNOWN_COVERED_ID,
                    format!("`no_code` waives `{}` without a reason", w.id),
                )
                .with_help("say in one line why no code carries it out (a definition, a rule about releases)"),
            );
        }
    }
    out
}

#[cold]
fn unknown_id(key: &str, field: &str, what: &str, id: &str, valid: &[&str]) -> Diagnostic {
    const SHOWN: usize = 24;
    // The root's id is empty: it is the node itself, never named.
    let valid: Vec<&&str> = valid.iter().filter(|v| !v.is_empty()).collect();
    let mut list: Vec<String> = valid.iter().take(SHOWN).map(|v| format!("`{v}`")).collect();
    if valid.len() > SHOWN {
        list.push(format!("and {} more", valid.len() - SHOWN));
    }
    let help = if valid.is_empty() {
        format!("this node's part of the spec has no {what} ids: leave `{field}` empty")
    } else {
        format!(
            "the {what} ids of this node's part of the spec are {}",
            list.join(", ")
        )
    };
    Diagnostic::new(
        codes::UNKNOWN_COVERED_ID,
        format!(
            "child `{}` names {what} `{}` in `{field}`, and this node's part of the spec has no such {what}",
            key,
            cut(id, 80)
        ),
    )
    .with_help(help)
}
