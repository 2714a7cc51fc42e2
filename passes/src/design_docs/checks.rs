//! Checks of code references and spec decisions against the recorded design decisions.
//! design: design-docs.references

use std::collections::{HashMap, HashSet};

use specc_ir::{DecisionStatus, DesignDecision, Diagnostic, IntentTree, codes};

use crate::front_end::text::normalize_ws;
use crate::references::Reference;

/// Unknown ids, stale pins and references to superseded decisions.
pub fn check_references(decisions: &[DesignDecision], refs: &[Reference]) -> Vec<Diagnostic> {
    let by_id = index(decisions);
    let mut out = Vec::new();
    for r in refs {
        let Some(d) = by_id.get(r.id.as_str()) else {
            out.push(unknown(r, decisions));
            continue;
        };
        if let DecisionStatus::SupersededBy(next) = &d.status {
            out.push(superseded(r, d, next, by_id.get(next.as_str()).copied()));
        } else if let Some(p) = &r.pin
            && *p != d.pin
        {
            out.push(stale(r, d, p));
        }
    }
    out
}

/// Decisions no reference names (an opt-in warning: `specc check --unreferenced`).
pub fn unreferenced(decisions: &[DesignDecision], refs: &[Reference]) -> Vec<Diagnostic> {
    let named: HashSet<&str> = refs.iter().map(|r| r.id.as_str()).collect();
    decisions
        .iter()
        .filter(|d| d.status == DecisionStatus::Accepted && !named.contains(d.id.as_str()))
        .map(|d| {
            Diagnostic::new(
                codes::UNREFERENCED_DECISION,
                format!("no code references `{}`", d.id),
            )
            .with_primary(d.heading, "decided here, referenced nowhere")
            .with_help(format!(
                "mark the code this decision shapes with `design: {}@{}`, or retire the decision",
                d.id, d.pin
            ))
        })
        .collect()
}

/// Design decisions that contradict a `> Decision:` of the same id in the spec.
pub fn check_against_spec(decisions: &[DesignDecision], spec: &IntentTree) -> Vec<Diagnostic> {
    let by_id = index(decisions);
    let mut out = Vec::new();
    for node in spec.nodes() {
        for fixed in &node.decisions {
            let Some(id) = &fixed.id else { continue };
            let Some(d) = by_id.get(id.as_str()) else {
                continue;
            };
            if normalize_ws(&d.decision) != normalize_ws(&fixed.text) {
                out.push(
                    Diagnostic::new(codes::CONTRADICTS_SPEC, format!("decision `{id}` contradicts the spec"))
                        .with_primary(d.decision_span.unwrap_or(d.heading), "the design decides this")
                        .with_secondary(fixed.span, "the spec's author fixed this")
                        .with_help("a spec-fixed decision binds: change the design decision to agree with the spec, or change the spec"),
                );
            }
        }
    }
    out
}

fn index(decisions: &[DesignDecision]) -> HashMap<&str, &DesignDecision> {
    let mut by_id = HashMap::new();
    for d in decisions.iter().filter(|d| d.decision_span.is_some()) {
        by_id.entry(d.id.as_str()).or_insert(d);
    }
    by_id
}

#[cold]
fn unknown(r: &Reference, decisions: &[DesignDecision]) -> Diagnostic {
    let d = Diagnostic::new(
        codes::UNKNOWN_DECISION,
        format!("no design decision `{}`", r.id),
    )
    .with_primary(r.span, "this reference");
    match closest(&r.id, decisions) {
        Some(near) => d.with_help(format!("did you mean `{near}`?")),
        None => d.with_help(
            "record the decision in design-docs/ under a heading with this {#id}, or fix the id",
        ),
    }
}

#[cold]
fn stale(r: &Reference, d: &DesignDecision, old: &str) -> Diagnostic {
    Diagnostic::new(
        codes::STALE_PIN,
        format!("`{}` changed since this code was pinned to it", d.id),
    )
    .with_primary(r.span, format!("pinned to {old}"))
    .with_secondary(
        d.decision_span.unwrap_or(d.heading),
        format!("now decided this way (pin {})", d.pin),
    )
    .with_help(format!(
        "read the decision and its rationale, adapt the code, then re-pin: `design: {}@{}`",
        d.id, d.pin
    ))
}

#[cold]
fn superseded(
    r: &Reference,
    d: &DesignDecision,
    next: &str,
    successor: Option<&DesignDecision>,
) -> Diagnostic {
    let diag = Diagnostic::new(
        codes::SUPERSEDED_REFERENCE,
        format!("`{}` is superseded by `{next}`", d.id),
    )
    .with_primary(r.span, "this reference")
    .with_secondary(d.heading, "superseded");
    let diag = match successor {
        Some(s) => diag.with_secondary(s.heading, "by this decision"),
        None => diag,
    };
    let reference = match successor {
        Some(s) => format!("`design: {next}@{}`", s.pin),
        None => format!("`design: {next}` (it is not recorded yet)"),
    };
    diag.with_help(format!(
        "revisit the code against the new decision and reference it: {reference}"
    ))
}

/// The decision id closest to `id` by edit distance, if it is close (at most a third of the
/// id's length, and at least one edit off).
fn closest<'a>(id: &str, decisions: &'a [DesignDecision]) -> Option<&'a str> {
    let limit = (id.chars().count() / 3).max(1);
    decisions
        .iter()
        .map(|d| (edit_distance(id, &d.id), d.id.as_str()))
        .filter(|&(dist, _)| dist <= limit)
        .min()
        .map(|(_, id)| id)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
