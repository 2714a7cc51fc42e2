//! Checks of code references and spec decisions against the recorded design decisions.
//! design: design-docs.references

use std::collections::{HashMap, HashSet};

use specc_ir::{DecisionStatus, DesignDecision, Diagnostic, IntentTree, codes};

use crate::front_end::text::normalize_ws;
use crate::references::{RefKind, Reference};

/// What is wrong with one reference, decided from the decision it names alone: the part of a
/// reference check that must re-run when a decision changes (see `crate::check`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// No decision has this id; the closest id, when one is close.
    Unknown { closest: Option<String> },
    /// A heading has this id but no `Decision:` line (E0201 reports the heading).
    Undecided,
    /// The decision is current; its pin.
    Current { pin: String },
    /// The decision was superseded by `next` (whose pin is known when it is recorded).
    Superseded {
        next: String,
        next_pin: Option<String>,
    },
}

/// How `id` resolves against the decisions of `index`.
pub fn resolve(
    id: &str,
    index: &HashMap<&str, &DesignDecision>,
    decisions: &[DesignDecision],
) -> Resolution {
    resolve_by(id, |k| index.get(k).copied(), decisions)
}

/// How `id` resolves, with `lookup` finding a decision (with a `Decision:` line) by id.
pub fn resolve_by<'a>(
    id: &str,
    lookup: impl Fn(&str) -> Option<&'a DesignDecision>,
    decisions: &[DesignDecision],
) -> Resolution {
    match lookup(id) {
        None if decisions.iter().any(|d| d.id == id) => Resolution::Undecided,
        None => Resolution::Unknown {
            closest: closest(id, decisions).map(str::to_owned),
        },
        Some(d) => match &d.status {
            DecisionStatus::SupersededBy(next) => Resolution::Superseded {
                next: next.clone(),
                next_pin: lookup(next.as_str()).map(|s| s.pin.clone()),
            },
            _ => Resolution::Current { pin: d.pin.clone() },
        },
    }
}

/// The diagnostic for reference `r` resolved as `resolution`, if it has a problem. The
/// decision's places come from `index`.
pub fn reference_diagnostic(
    r: &Reference,
    resolution: &Resolution,
    index: &HashMap<&str, &DesignDecision>,
) -> Option<Diagnostic> {
    match resolution {
        Resolution::Unknown { closest } => Some(unknown(r, closest.as_deref())),
        Resolution::Undecided => Some(undecided(r)),
        Resolution::Current { pin } => {
            let old = r.pin.as_ref().filter(|p| *p != pin)?;
            Some(stale(r, index.get(r.id.as_str())?, old))
        }
        Resolution::Superseded { next, .. } => {
            let d = index.get(r.id.as_str())?;
            Some(superseded(r, d, next, index.get(next.as_str()).copied()))
        }
    }
}

/// Unknown ids, stale pins and references to superseded decisions.
pub fn check_references(decisions: &[DesignDecision], refs: &[Reference]) -> Vec<Diagnostic> {
    let by_id = index(decisions);
    refs.iter()
        .filter(|r| r.kind == RefKind::Decision)
        .filter_map(|r| reference_diagnostic(r, &resolve(&r.id, &by_id, decisions), &by_id))
        .collect()
}

/// Decisions no reference names (an opt-in warning: `specc check --unreferenced`).
pub fn unreferenced(decisions: &[DesignDecision], refs: &[Reference]) -> Vec<Diagnostic> {
    let named: HashSet<&str> = refs
        .iter()
        .filter(|r| r.kind == RefKind::Decision)
        .map(|r| r.id.as_str())
        .collect();
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

/// Decisions by id: the first one with a `Decision:` line wins (a second is a conflict or a
/// duplicate, reported by `check_decision_set`).
pub fn index(decisions: &[DesignDecision]) -> HashMap<&str, &DesignDecision> {
    let mut by_id = HashMap::new();
    for d in decisions.iter().filter(|d| d.decision_span.is_some()) {
        by_id.entry(d.id.as_str()).or_insert(d);
    }
    by_id
}

#[cold]
fn unknown(r: &Reference, closest: Option<&str>) -> Diagnostic {
    let d = Diagnostic::new(
        codes::UNKNOWN_DECISION,
        format!("no design decision `{}`", r.id),
    )
    .with_primary(r.span, "this reference");
    match closest {
        Some(near) => d.with_help(format!("did you mean `{near}`?")),
        None => d.with_help(
            "record the decision in design-docs/ under a heading with this {#id}, or fix the id",
        ),
    }
}

#[cold]
fn undecided(r: &Reference) -> Diagnostic {
    Diagnostic::new(
        codes::UNKNOWN_DECISION,
        format!("`{}` is recorded but not decided", r.id),
    )
    .with_primary(r.span, "this reference")
    .with_help(
        "its heading has no `Decision:` line (E0201): write the decision, then revisit this code",
    )
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
    crate::spelling::closest(id, decisions.iter().map(|d| d.id.as_str()))
}
