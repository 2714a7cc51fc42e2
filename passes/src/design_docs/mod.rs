//! Design documents → design decisions.
//!
//! A decision is a heading with an explicit `{#id}`; its section (up to the next heading of
//! the same or a higher level) holds field lines: `Decision:`, `Rationale:`, `Status:` and
//! `Supersedes:`. A field runs from its line to the next field line or the end of its
//! paragraph. Field text is the Markdown as written, white space normalised, so the pin of
//! a decision is stable under re-wrapping and independent of how a renderer would show it.
//! Like the spec front end, this never fails: it returns what it read and diagnostics.
//! design: design-docs.format

mod checks;
mod fields;
mod open;

pub use checks::{
    Resolution, check_against_spec, check_references, index, reference_diagnostic, resolve,
    resolve_by, unreferenced,
};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use specc_ir::{DecisionStatus, DesignDecision, Diagnostic, FileId, IntentTree, Span, codes};

use crate::front_end::text::normalize_ws;

use self::open::Open;
pub use self::open::pin;

/// The decisions of one design document, in order, with the diagnostics of that file alone.
pub fn parse_design_doc(file: FileId, text: &str) -> (Vec<DesignDecision>, Vec<Diagnostic>) {
    let mut decisions = Vec::new();
    let mut diagnostics = Vec::new();
    let mut open: Option<(u8, Open)> = None;
    let mut heading: Option<(u8, Option<String>, usize, String)> = None;
    let options = Options::ENABLE_HEADING_ATTRIBUTES | Options::ENABLE_TABLES;
    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        match event {
            Event::Start(Tag::Heading { level, id, .. }) => {
                heading = Some((
                    level as u8,
                    id.map(|s| s.to_string()),
                    range.start,
                    String::new(),
                ));
            }
            Event::Text(t) | Event::Code(t) if heading.is_some() => {
                if let Some((_, _, _, title)) = &mut heading {
                    title.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let Some((level, id, start, title)) = heading.take() else {
                    continue;
                };
                // A decision's section runs to the next heading of its level or higher, or to
                // the next decision, however deep: `### Page size {#storage.page-size}` under
                // `## Storage {#storage}` is a decision of its own.
                if let Some((open_level, d)) = open.take() {
                    if level > open_level && id.is_none() {
                        open = Some((open_level, d));
                    } else {
                        decisions.push(d.finish(file, start, &mut diagnostics));
                    }
                }
                if let Some(id) = id {
                    let line_end = text[start..].find('\n').map_or(text.len(), |p| start + p);
                    let heading = Span::new(file, start..text[..line_end].trim_end().len());
                    open = Some((level, Open::new(id, normalize_ws(&title), heading)));
                }
            }
            Event::Start(Tag::Paragraph) => {
                if let Some((_, d)) = &mut open {
                    fields::read(file, text, range, d, &mut diagnostics);
                }
            }
            _ => {}
        }
    }
    if let Some((_, d)) = open {
        decisions.push(d.finish(file, text.len(), &mut diagnostics));
    }
    (decisions, diagnostics)
}

/// Diagnostics across every decision of every design document: one id decided twice.
pub fn check_decision_set(decisions: &[DesignDecision]) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    let mut first: std::collections::HashMap<&str, &DesignDecision> = Default::default();
    for d in decisions {
        if d.decision_span.is_none() {
            continue;
        }
        match first.get(d.id.as_str()) {
            None => {
                first.insert(&d.id, d);
            }
            Some(earlier) if earlier.decision == d.decision => {
                diagnostics.push(duplicate(d, earlier));
            }
            Some(earlier) => diagnostics.push(conflict(d, earlier)),
        }
    }
    diagnostics
}

#[cold]
fn conflict(d: &DesignDecision, earlier: &DesignDecision) -> Diagnostic {
    let here = d.decision_span.unwrap_or(d.heading);
    let there = earlier.decision_span.unwrap_or(earlier.heading);
    Diagnostic::new(codes::CONFLICTING_DECISION, format!("decision `{}` is decided two different ways", d.id))
        .with_primary(here, "decided this way here")
        .with_secondary(there, "and differently here")
        .with_help("one question has one answer: reconcile the two texts into one decision, or give one of them a new id")
}

#[cold]
fn duplicate(d: &DesignDecision, earlier: &DesignDecision) -> Diagnostic {
    Diagnostic::new(
        codes::DUPLICATE_DECISION,
        format!("decision `{}` is recorded twice", d.id),
    )
    .with_primary(d.heading, "recorded again here")
    .with_secondary(earlier.heading, "first recorded here")
    .with_help("keep one copy; the other can link to it")
}

#[cfg(test)]
mod tests;

/// The spec's own decisions that carry an id (`> Decision: {#id} …`), as recorded decisions:
/// code may reference them, and pin them, like the ones in `design-docs/`.
pub fn from_spec(tree: &IntentTree) -> Vec<DesignDecision> {
    tree.nodes()
        .flat_map(|n| &n.decisions)
        .filter_map(|d| {
            let id = d.id.clone()?;
            Some(DesignDecision {
                title: id.clone(),
                id,
                decision: d.text.clone(),
                rationale: d.rationale.clone(),
                status: DecisionStatus::Accepted,
                supersedes: Vec::new(),
                pin: pin(&d.text),
                span: d.span,
                heading: d.span,
                decision_span: Some(d.span),
            })
        })
        .collect()
}
