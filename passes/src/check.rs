//! The salsa queries of `specc check`: code references against design decisions.
//!
//! Every source file and every design document is a salsa input. The layering is what makes
//! a re-check cost what the edit reaches:
//! * [`source_references`] parses one source file (tree-sitter, or the line-comment
//!   fallback); only an edit of that file re-runs it.
//! * [`doc_decisions`] parses one design document; [`decision_table`] gathers them all.
//! * [`resolve`] answers, for one decision id, what a reference to it must agree with (the
//!   current pin, the successor, or "unknown"), and nothing else. Editing a rationale or
//!   moving a decision re-runs it, but its value is equal, so salsa backdates it and
//! * [`source_findings`] — the per-file reference check — re-runs only for files whose text
//!   changed or that refer to a decision whose answer changed.
//!
//! [`diagnostics`] assembles the report; it is a plain function over the memoised queries,
//! cheap enough to run after every change.
//! design: passes.check-layering

use std::sync::Arc;

use specc_ir::{DesignDecision, Diagnostic, FileId};

use crate::db::{Db, SpecFile, parse_spec};
use crate::design_docs::{self, Resolution};
use crate::references::{self, Method, Reference};

/// A source file to search for references.
#[salsa::input(debug)]
pub struct SourceFile {
    #[returns(ref)]
    pub path: String,
    #[returns(copy)]
    pub file_id: FileId,
    #[returns(copy)]
    pub method: Method,
    #[returns(ref)]
    pub text: Arc<str>,
}

/// A design document (`design-docs/**/*.md`).
#[salsa::input(debug)]
pub struct DesignDoc {
    #[returns(ref)]
    pub path: String,
    #[returns(copy)]
    pub file_id: FileId,
    #[returns(ref)]
    pub text: Arc<str>,
}

/// Everything one `specc check` looks at. The driver sets the lists when files appear or
/// disappear; an edit of one file changes only that file's input.
#[salsa::input(debug)]
pub struct CheckRoot {
    #[returns(ref)]
    pub sources: Vec<SourceFile>,
    #[returns(ref)]
    pub docs: Vec<DesignDoc>,
    /// The spec whose `Decision:` quotes bind the design, if there is one.
    #[returns(copy)]
    pub spec: Option<SpecFile>,
}

/// A decision id as code writes it, interned to key [`resolve`].
#[salsa::interned(debug)]
pub struct DecisionName<'db> {
    #[returns(ref)]
    pub id: String,
}

/// The references in one source file.
#[salsa::tracked(returns(ref))]
pub fn source_references(db: &dyn Db, file: SourceFile) -> Vec<Reference> {
    references::extract(file.file_id(db), file.method(db), file.text(db))
}

/// The decisions of one design document and the diagnostics of that document alone.
#[salsa::tracked(returns(ref))]
pub fn doc_decisions(db: &dyn Db, doc: DesignDoc) -> (Vec<DesignDecision>, Vec<Diagnostic>) {
    design_docs::parse_design_doc(doc.file_id(db), doc.text(db))
}

/// Every decision of every design document, in document order.
#[salsa::tracked(returns(ref))]
pub fn decision_table(db: &dyn Db, root: CheckRoot) -> Vec<DesignDecision> {
    root.docs(db)
        .iter()
        .flat_map(|doc| doc_decisions(db, *doc).0.iter().cloned())
        .collect()
}

/// What a reference to `name` must agree with.
#[salsa::tracked(returns(ref))]
pub fn resolve<'db>(db: &'db dyn Db, root: CheckRoot, name: DecisionName<'db>) -> Resolution {
    let decisions = decision_table(db, root);
    design_docs::resolve(name.id(db), &design_docs::index(decisions), decisions)
}

/// One reference with a problem, and how its decision resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub reference: Reference,
    pub resolution: Resolution,
}

/// The references of one file that do not agree with the decisions they name.
#[salsa::tracked(returns(ref))]
pub fn source_findings(db: &dyn Db, root: CheckRoot, file: SourceFile) -> Vec<Finding> {
    let mut findings = Vec::new();
    for r in source_references(db, file) {
        let name = DecisionName::new(db, r.id.clone());
        let resolution = resolve(db, root, name);
        let fine = match resolution {
            Resolution::Current { pin } => r.pin.as_ref().is_none_or(|p| p == pin),
            _ => false,
        };
        if !fine {
            findings.push(Finding {
                reference: r.clone(),
                resolution: resolution.clone(),
            });
        }
    }
    findings
}

/// What to report besides the always-on checks.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckOptions {
    /// Also warn about accepted decisions no code references.
    pub unreferenced: bool,
}

/// Every diagnostic of a check, in a stable order: design documents first (in the order of
/// `root.docs`), then conflicts across them, then the spec, then source files in the order of
/// `root.sources`.
pub fn diagnostics(db: &dyn Db, root: CheckRoot, options: CheckOptions) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for doc in root.docs(db) {
        out.extend(doc_decisions(db, *doc).1.iter().cloned());
    }
    let decisions = decision_table(db, root);
    out.extend(design_docs::check_decision_set(decisions));
    if let Some(spec) = root.spec(db) {
        out.extend(design_docs::check_against_spec(
            decisions,
            &parse_spec(db, spec).tree,
        ));
    }
    let index = design_docs::index(decisions);
    for file in root.sources(db) {
        for f in source_findings(db, root, *file) {
            out.extend(design_docs::reference_diagnostic(
                &f.reference,
                &f.resolution,
                &index,
            ));
        }
    }
    if options.unreferenced {
        let all: Vec<Reference> = root
            .sources(db)
            .iter()
            .flat_map(|f| source_references(db, *f).iter().cloned())
            .collect();
        out.extend(design_docs::unreferenced(decisions, &all));
    }
    out
}
