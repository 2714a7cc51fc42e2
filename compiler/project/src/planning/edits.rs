//! Decisions edited by hand: the planned design documents beside the spec
//! (`design-docs/planned-<area>.md`) are the plan's decisions as a person reads and edits
//! them. What specc last wrote there is recorded in `.specc/planned-docs.json`; a decision
//! whose text in the file differs from what specc wrote is a person's edit. An edit is kept
//! (in the record) and applied to every later plan for as long as the planner's own text for
//! that decision is still the one the person edited; when the planner decides it anew (the
//! spec above it changed), the edit is at stake: it is dropped with W0411, which quotes it.
//! design: driver.plan-edits

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use specc_ir::plan::{PlannedDecision, PlannerAnswer};
use specc_ir::{Diagnostic, FileId, codes};
use specc_passes::plan::{decision_key, design_docs};

use crate::atomic;

/// The record's file in `.specc/`.
const RECORD: &str = "planned-docs.json";

/// What specc wrote and which edits are in force, by decision id.
#[derive(Default, Serialize, Deserialize)]
struct Record {
    written: BTreeMap<String, Written>,
    edits: BTreeMap<String, Edit>,
}

/// One decision as specc last wrote it: the planner's text and what the file showed (the
/// person's edit, where one was applied).
#[derive(Clone, Serialize, Deserialize)]
struct Written {
    file: String,
    planner: Text,
    shown: Text,
}

/// A decision's two fields, as a person edits them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Text {
    decision: String,
    rationale: String,
}

impl Text {
    fn of(d: &PlannedDecision) -> Text {
        Text {
            decision: d.decision.clone(),
            rationale: d.rationale.clone(),
        }
    }

    fn same(&self, other: &Text) -> bool {
        decision_key(&self.decision) == decision_key(&other.decision)
            && decision_key(&self.rationale) == decision_key(&other.rationale)
    }
}

/// A person's edit: their text, and the planner's text they edited.
#[derive(Clone, Serialize, Deserialize)]
struct Edit {
    file: String,
    text: Text,
    planned: Text,
}

/// A decision taken from a person's edit in this plan.
pub struct Applied {
    pub id: String,
    /// The planned document it is in (`design-docs/planned-<area>.md`).
    pub file: String,
}

/// The hand edits of one spec's planned documents.
pub struct Edits {
    record: Record,
    /// `design-docs/` beside the spec.
    docs: PathBuf,
    /// `.specc/` beside the spec.
    state: PathBuf,
    /// Whether specc wrote the planned documents before (so keeps them current).
    known: bool,
    /// The planner's texts of the last plan edits were applied to, by id.
    planner: BTreeMap<String, Text>,
}

impl Edits {
    /// The record in `state`, with the edits made in `dir`'s `design-docs/planned-*.md` since
    /// specc wrote them taken in. A record that cannot be read counts as none (W0007).
    pub fn gather(dir: &Path, state: &Path) -> (Edits, Vec<Diagnostic>) {
        let mut notes = Vec::new();
        let path = state.join(RECORD);
        let (record, known) = match std::fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice(&bytes) {
                Ok(r) => (r, true),
                Err(e) => {
                    notes.push(unreadable(&path, &e.to_string()));
                    (Record::default(), false)
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Record::default(), false),
            Err(e) => {
                notes.push(unreadable(&path, &e.to_string()));
                (Record::default(), false)
            }
        };
        let mut edits = Edits {
            record,
            docs: dir.join("design-docs"),
            state: state.to_owned(),
            known,
            planner: BTreeMap::new(),
        };
        edits.take_in_files();
        (edits, notes)
    }

    /// No edits, for a plan that is not the planner's (`--provider outline`): it neither
    /// takes in nor applies the person's edits, and is never written over them.
    pub fn none(dir: &Path, state: &Path) -> Edits {
        Edits {
            record: Record::default(),
            docs: dir.join("design-docs"),
            state: state.to_owned(),
            known: false,
            planner: BTreeMap::new(),
        }
    }

    /// Compares each planned document with what specc wrote there: a decision whose fields
    /// differ is a person's edit; one put back to the planner's text ends its edit.
    fn take_in_files(&mut self) {
        let Ok(entries) = std::fs::read_dir(&self.docs) else {
            return;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("planned-") && n.ends_with(".md"))
            })
            .collect();
        files.sort();
        for path in files {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let file = format!(
                "design-docs/{}",
                path.file_name().unwrap_or_default().display()
            );
            let (decisions, _) = specc_passes::design_docs::parse_design_doc(FileId(0), &text);
            for d in decisions {
                let Some(written) = self.record.written.get(&d.id) else {
                    continue; // a decision specc never wrote is the person's own
                };
                let now = Text {
                    decision: d.decision.clone(),
                    rationale: d.rationale.clone().unwrap_or_default(),
                };
                if now.same(&written.shown) {
                    continue;
                }
                if now.same(&written.planner) {
                    self.record.edits.remove(&d.id);
                } else {
                    let edit = Edit {
                        file: file.clone(),
                        text: now,
                        planned: written.planner.clone(),
                    };
                    self.record.edits.insert(d.id.clone(), edit);
                }
            }
        }
    }

    /// Applies the edits in force to `answers`, the planner's answers by task. An edit whose
    /// decision the planner still gives the text it had when the person edited it replaces
    /// every copy of that decision; any other is at stake: dropped, with W0411.
    pub fn apply(
        &mut self,
        answers: &mut BTreeMap<String, PlannerAnswer>,
    ) -> (Vec<Applied>, Vec<Diagnostic>) {
        self.planner.clear();
        for d in answers.values().flat_map(|a| &a.decisions) {
            self.planner
                .entry(d.id.clone())
                .or_insert_with(|| Text::of(d));
        }
        let (mut applied, mut at_stake) = (Vec::new(), Vec::new());
        let edits = std::mem::take(&mut self.record.edits);
        for (id, edit) in edits {
            match self.planner.get(&id) {
                Some(planner) if planner.same(&edit.planned) => {
                    for d in answers
                        .values_mut()
                        .flat_map(|a| a.decisions.iter_mut())
                        .filter(|d| d.id == id)
                    {
                        d.decision.clone_from(&edit.text.decision);
                        d.rationale.clone_from(&edit.text.rationale);
                    }
                    applied.push(Applied {
                        id: id.clone(),
                        file: edit.file.clone(),
                    });
                    self.record.edits.insert(id, edit);
                }
                planner => at_stake.push(at_stake_warning(&id, &edit, planner.is_some())),
            }
        }
        (applied, at_stake)
    }

    /// Whether specc wrote the planned documents beside the spec before: a build keeps them
    /// current only then (`specc plan` and previews write them).
    pub fn known(&self) -> bool {
        self.known
    }

    /// Writes `decisions` (as planned, edits applied) to the planned documents beside the
    /// spec and records what was written, with the planner's own text of each.
    pub fn write(&mut self, decisions: &[PlannedDecision]) -> Result<(), Box<Diagnostic>> {
        let mut written = BTreeMap::new();
        for (file, text) in design_docs(decisions) {
            let path = self.docs.join(format!("planned-{file}"));
            std::fs::create_dir_all(&self.docs)
                .and_then(|()| atomic::write(&self.docs, &path, text.as_bytes()))
                .map_err(|e| cannot_write(&path, &e, "design-docs/ beside the spec"))?;
            for d in decisions.iter().filter(|d| design_file(&d.id) == file) {
                let shown = Text::of(d);
                let planner = self.planner.get(&d.id).cloned().unwrap_or(shown.clone());
                written.entry(d.id.clone()).or_insert(Written {
                    file: format!("design-docs/planned-{file}"),
                    planner,
                    shown,
                });
            }
        }
        self.record.written = written;
        let path = self.state.join(RECORD);
        let bytes = serde_json::to_vec_pretty(&self.record).map_err(std::io::Error::other);
        bytes
            .and_then(|b| {
                std::fs::create_dir_all(&self.state)?;
                atomic::write(&self.state, &path, &b)
            })
            .map_err(|e| cannot_write(&path, &e, ".specc/ beside the spec"))?;
        self.known = true;
        Ok(())
    }
}

/// The planned document an id's decision is written to (`<area>.md`), as `design_docs` names it.
fn design_file(id: &str) -> String {
    let one = PlannedDecision {
        id: id.to_owned(),
        decision: String::new(),
        rationale: String::new(),
    };
    design_docs(&[one]).into_keys().next().unwrap_or_default()
}

#[cold]
fn at_stake_warning(id: &str, edit: &Edit, still_decided: bool) -> Diagnostic {
    let what = if still_decided {
        "its planner decided it anew (the spec above it changed, or another planner or model answered), so the planner's new text is used"
    } else {
        "the plan no longer decides it"
    };
    Diagnostic::new(
        codes::PLAN_EDIT_AT_STAKE,
        format!(
            "decision `{id}` was edited by hand in {} against an earlier plan: {what}",
            edit.file
        ),
    )
    .with_help(format!(
        "your text was: Decision: {} Rationale: {}; edit the new text in {} if it still applies",
        edit.text.decision, edit.text.rationale, edit.file
    ))
}

#[cold]
fn unreadable(path: &Path, why: &str) -> Diagnostic {
    Diagnostic::new(
        codes::PLAN_CACHE_DAMAGED,
        format!(
            "the record of the planned design documents {} could not be read ({why}): hand edits made before are not applied",
            path.display()
        ),
    )
    .with_help("edit design-docs/planned-*.md again after this plan if an edit is missing")
}

#[cold]
fn cannot_write(path: &Path, e: &std::io::Error, place: &str) -> Box<Diagnostic> {
    Box::new(
        Diagnostic::new(
            codes::IO_ERROR,
            format!("cannot write {}: {e}", path.display()),
        )
        .with_help(format!("check that {place} is writable")),
    )
}
