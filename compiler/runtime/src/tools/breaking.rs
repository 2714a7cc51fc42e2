//! `break_scope`, a deliberate patch outside the write scope that changes the decision the
//! code relied on; `pin`, which re-pins a reference to its decision's current text; and
//! `report_contradiction`, two decisions that contradict each other, for the coordinator.
//! design: runtime.deliberate-breaking

use serde::Deserialize;

use super::outcome::ToolOutcome;
use super::toolbox::Toolbox;
use crate::checkouts::{normalise, walk_files};
use crate::landing::{BREAK_LINES, Break, Contradiction, update_decision};

#[derive(Deserialize)]
pub(super) struct BreakArgs {
    path: String,
    old: String,
    new: String,
    why: String,
    decision: String,
    decision_text: String,
}

/// The decision's entry, in whichever design document holds it: the document's path
/// (relative and full), its text with the entry changed, and the entry's old text.
fn decision_entry(
    t: &Toolbox,
    a: &BreakArgs,
) -> Option<(String, std::path::PathBuf, String, String)> {
    let mut docs = Vec::new();
    walk_files(&t.root.join("design-docs"), &mut docs);
    docs.iter().find_map(|d| {
        let path = t.root.join("design-docs").join(d);
        let doc = std::fs::read_to_string(&path).ok()?;
        let (updated, old) = update_decision(&doc, &a.decision, &a.decision_text, &a.why)?;
        Some((format!("design-docs/{d}"), path, updated, old))
    })
}

/// Checks a break's arguments before anything is written, in the order the worker is told
/// of them: the path outside the scope and readable, a why, the decision's reference in
/// the patch. `Err`: what the worker is told.
fn precheck(t: &Toolbox, a: &BreakArgs) -> Result<(String, std::path::PathBuf), ToolOutcome> {
    let Some(rel) = normalise(&a.path) else {
        return Err(ToolOutcome::error(format!(
            "`{}` is not a relative path inside the checkout",
            a.path
        )));
    };
    if t.scope.allows(&rel) {
        return Err(ToolOutcome::error(format!(
            "`{rel}` is inside your write scope: use `edit`"
        )));
    }
    let (rel, full) = t.readable_file(&rel)?;
    if a.why.trim().is_empty() {
        return Err(ToolOutcome::error(
            "say why the core code must change (`why`)",
        ));
    }
    let reference = format!("design: {}", a.decision);
    if !a.new.contains(&reference) {
        return Err(ToolOutcome::error(format!(
            "the patch must carry a comment that references `{reference}` and says why it changed"
        )));
    }
    Ok((rel, full))
}

pub(super) fn break_scope(t: &Toolbox, a: BreakArgs) -> ToolOutcome {
    let (rel, full) = match precheck(t, &a) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let lines = a.old.lines().count().max(1) + a.new.lines().count();
    let used: usize = t.breaks().iter().map(|b| b.lines).sum();
    if used + lines > BREAK_LINES {
        return ToolOutcome::error(format!(
            "a deliberate break may change {BREAK_LINES} lines outside the scope; this one would \
             make {}: keep it to what the core must change",
            used + lines
        ));
    }
    let text = match std::fs::read_to_string(&full) {
        Ok(t) => t,
        Err(e) => return ToolOutcome::error(format!("{rel}: {e}")),
    };
    if a.old.is_empty() || text.matches(a.old.as_str()).count() != 1 {
        return ToolOutcome::error(format!("`old` must occur exactly once in {rel}"));
    }
    let found = decision_entry(t, &a);
    let Some((doc_rel, doc_path, updated, old_text)) = found else {
        return ToolOutcome::error(format!(
            "no decision `{}` in design-docs/: a break changes a decision that exists",
            a.decision
        ));
    };
    if old_text.trim() == a.decision_text.trim() {
        return ToolOutcome::error(
            "`decision_text` is the decision's text already: say what it becomes",
        );
    }
    t.tracked.wrote(&rel);
    t.tracked.wrote(&doc_rel);
    let patched = text.replacen(a.old.as_str(), &a.new, 1);
    if let Err(e) = std::fs::write(&full, patched).and_then(|()| std::fs::write(&doc_path, updated))
    {
        return ToolOutcome::error(format!("writing the break: {e}"));
    }
    if let Ok(mut b) = t.breaks.lock() {
        b.push(Break {
            path: rel.clone(),
            doc: doc_rel,
            decision: a.decision.clone(),
            old_text,
            new_text: a.decision_text.trim().to_owned(),
            why: a.why.trim().to_owned(),
            lines,
        });
    }
    ToolOutcome::ok(format!(
        "patched {rel} outside your scope ({} of {BREAK_LINES} lines used) and changed `{}`; \
         once you land, the code that relied on its old text gets revisit tasks",
        used + lines,
        a.decision
    ))
}

#[derive(Deserialize)]
pub(super) struct PinArgs {
    path: String,
    line: usize,
}

pub(super) fn pin(t: &Toolbox, a: PinArgs) -> ToolOutcome {
    let Some(pins) = &t.pins else {
        return ToolOutcome::error("`pin` is not available in this build");
    };
    let (rel, _) = match t.writable_file(&a.path) {
        Ok(p) => p,
        Err(e) => return e,
    };
    match pins.pin(&t.root, &rel, a.line) {
        Ok(said) => ToolOutcome::ok(said),
        Err(e) => ToolOutcome::error(e.to_string()),
    }
}

#[derive(Deserialize)]
pub(super) struct ContradictionArgs {
    a: String,
    b: String,
    explanation: String,
}

pub(super) fn contradiction(t: &Toolbox, a: ContradictionArgs) -> ToolOutcome {
    let (x, y) = (a.a.trim(), a.b.trim());
    if x.is_empty() || y.is_empty() || x == y || a.explanation.trim().is_empty() {
        return ToolOutcome::error("name two different decisions and say how they contradict");
    }
    if let Ok(mut c) = t.contradictions.lock() {
        c.push(Contradiction {
            a: x.to_owned(),
            b: y.to_owned(),
            explanation: a.explanation.trim().to_owned(),
        });
    }
    ToolOutcome::ok(format!(
        "reported: `{x}` and `{y}` go to the coordinator once you land; follow the one your task's \
         instructions name meanwhile"
    ))
}
