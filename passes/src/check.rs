//! The salsa queries of `specc check`: code references against design decisions, and
//! requirement references (`req:`) against the spec's requirements.
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
//! [`check_report`] assembles the report, memoised like the rest.
//! design: passes.check-layering

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use specc_ir::{DesignDecision, Diagnostic, FileId};

use crate::db::{Db, SpecFile, parse_spec};
use crate::design_docs::{self, Resolution};
use crate::references::{self, Method, RefKind, Reference};
use crate::requirements::{self, ReqResolution};

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
    /// Also warn about accepted decisions no code references.
    #[returns(copy)]
    pub unreferenced: bool,
    /// The checked tree as the sources' paths begin with it (`out`, `.`): what is left of a
    /// path after it is the path in the tree.
    #[returns(ref)]
    pub tree: String,
}

/// `path` relative to the checked tree `tree` (compared by components).
fn in_tree<'a>(tree: &str, path: &'a str) -> &'a str {
    std::path::Path::new(path)
        .strip_prefix(tree)
        .ok()
        .and_then(|p| p.to_str())
        .unwrap_or(path)
}

/// A decision id as code writes it, interned to key [`resolve`]. Immortal, like
/// [`SourceChunk`]: a collectable interned value is a volatile dependency, which would make
/// every reader re-verify its whole subgraph after any edit.
#[salsa::interned(debug, revisions = usize::MAX)]
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

/// Where each decision with a `Decision:` line sits in [`decision_table`], by id (the first
/// of a duplicated id). Built once per change of the table, not once per name resolved; an
/// edit of a decision's text leaves it unchanged, so salsa backdates it.
#[salsa::tracked(returns(ref))]
pub fn decision_positions(db: &dyn Db, root: CheckRoot) -> HashMap<String, usize> {
    let mut at = HashMap::new();
    for (i, d) in decision_table(db, root).iter().enumerate() {
        if d.decision_span.is_some() {
            at.entry(d.id.clone()).or_insert(i);
        }
    }
    at
}

/// The spec's own decisions (`> Decision: {#id} …`) as recorded ones: code may reference
/// them like the decisions of `design-docs/`.
#[salsa::tracked(returns(ref))]
pub fn spec_design_decisions(db: &dyn Db, root: CheckRoot) -> Vec<DesignDecision> {
    match root.spec(db) {
        Some(spec) => design_docs::from_spec(&parse_spec(db, spec).tree),
        None => Vec::new(),
    }
}

/// What a reference to `name` must agree with: a recorded decision, or else one the spec
/// fixes itself (workers are given both as decisions to follow).
#[salsa::tracked(returns(ref))]
pub fn resolve<'db>(db: &'db dyn Db, root: CheckRoot, name: DecisionName<'db>) -> Resolution {
    let decisions = decision_table(db, root);
    let at = decision_positions(db, root);
    let resolution = design_docs::resolve_by(
        name.id(db),
        |id| at.get(id).map(|&i| &decisions[i]),
        decisions,
    );
    match resolution {
        Resolution::Unknown { .. } => {
            match spec_design_decisions(db, root)
                .iter()
                .find(|d| d.id == *name.id(db))
            {
                Some(d) => Resolution::Current { pin: d.pin.clone() },
                None => resolution,
            }
        }
        resolution => resolution,
    }
}

/// A requirement id as code writes it (`req: R-3`), interned to key
/// [`resolve_requirement`]. Immortal, like [`DecisionName`].
#[salsa::interned(debug, revisions = usize::MAX)]
pub struct RequirementName<'db> {
    #[returns(ref)]
    pub id: String,
}

/// The spec's requirement ids, sorted; `None` without a spec (requirement references are
/// then not checked).
#[salsa::tracked(returns(ref))]
pub fn spec_requirement_ids(db: &dyn Db, root: CheckRoot) -> Option<Vec<String>> {
    let spec = root.spec(db)?;
    let mut ids = requirements::requirement_ids(&parse_spec(db, spec).tree);
    ids.sort_unstable();
    ids.dedup();
    Some(ids)
}

/// How a reference to requirement `name` resolves; `None` without a spec. A spec edit
/// re-runs it for each name, and a file's findings re-run only where the answer changed.
#[salsa::tracked(returns(ref))]
pub fn resolve_requirement<'db>(
    db: &'db dyn Db,
    root: CheckRoot,
    name: RequirementName<'db>,
) -> Option<ReqResolution> {
    let ids = spec_requirement_ids(db, root).as_ref()?;
    Some(requirements::resolve(name.id(db), ids))
}

/// How a reference resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    Decision(Resolution),
    Requirement(ReqResolution),
}

/// One reference with a problem, and how what it names resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub reference: Reference,
    pub resolved: Resolved,
}

/// The references of one file that do not agree with the decisions or requirements they
/// name.
#[salsa::tracked(returns(ref))]
pub fn source_findings(db: &dyn Db, root: CheckRoot, file: SourceFile) -> Vec<Finding> {
    let mut findings = Vec::new();
    for r in source_references(db, file) {
        let resolved = match r.kind {
            RefKind::Decision => {
                let resolution = resolve(db, root, DecisionName::new(db, r.id.clone()));
                let fine = match resolution {
                    Resolution::Current { pin } => r.pin.as_ref().is_none_or(|p| p == pin),
                    _ => false,
                };
                (!fine).then(|| Resolved::Decision(resolution.clone()))
            }
            RefKind::Requirement => {
                match resolve_requirement(db, root, RequirementName::new(db, r.id.clone())) {
                    Some(ReqResolution::Known) | None => None,
                    Some(unknown) => Some(Resolved::Requirement(unknown.clone())),
                }
            }
        };
        if let Some(resolved) = resolved {
            findings.push(Finding {
                reference: r.clone(),
                resolved,
            });
        }
    }
    findings
}

/// Sources per [`chunk_findings`].
const CHUNK: usize = 64;

/// A run of [`CHUNK`] consecutive sources of the root, interned to key [`chunk_findings`].
#[salsa::interned(debug, revisions = usize::MAX)]
pub struct SourceChunk<'db> {
    #[returns(copy)]
    pub index: u32,
}

/// The findings of one chunk of sources, and how many references of each kind they hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChunkFindings {
    pub findings: Vec<Finding>,
    pub references: usize,
    pub requirement_references: usize,
}

/// The findings of sources `CHUNK * index ..` in the root's order. After an edit whose
/// file's findings salsa cannot backdate (its first edit lowers its durability), only this
/// chunk and [`check_report`]'s merge of the chunks re-run, not a loop over every file.
#[salsa::tracked(returns(ref))]
pub fn chunk_findings<'db>(
    db: &'db dyn Db,
    root: CheckRoot,
    chunk: SourceChunk<'db>,
) -> ChunkFindings {
    let sources = root.sources(db);
    let start = (chunk.index(db) as usize * CHUNK).min(sources.len());
    let mut out = ChunkFindings::default();
    for file in &sources[start..(start + CHUNK).min(sources.len())] {
        let refs = source_references(db, *file);
        // Most files refer to nothing: they need no per-file check (and no memo for one).
        if !refs.is_empty() {
            let requirements = refs
                .iter()
                .filter(|r| r.kind == RefKind::Requirement)
                .count();
            out.references += refs.len() - requirements;
            out.requirement_references += requirements;
            out.findings
                .extend(source_findings(db, root, *file).iter().cloned());
        }
    }
    out
}

/// The outcome of a check: every diagnostic, in a stable order (design documents first, in
/// the order of `root.docs`, then conflicts across them, then the spec, then source files in
/// the order of `root.sources`), and the figures of the summary line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    pub diagnostics: Vec<Diagnostic>,
    pub decisions: usize,
    /// References to decisions.
    pub references: usize,
    /// References to requirements.
    pub requirement_references: usize,
}

/// The whole check, memoised: after an edit salsa re-runs it only if some file's findings,
/// a document's diagnostics or the decision set changed, and otherwise verifies it by its
/// dependencies (cheaply, for the inputs the driver marks durable).
#[salsa::tracked(returns(ref))]
pub fn check_report(db: &dyn Db, root: CheckRoot) -> CheckReport {
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
    let mut index = design_docs::index(decisions);
    for d in spec_design_decisions(db, root) {
        index.entry(d.id.as_str()).or_insert(d);
    }
    let (mut references, mut requirement_references) = (0, 0);
    let chunks = root.sources(db).len().div_ceil(CHUNK);
    for i in 0..chunks {
        let chunk = chunk_findings(db, root, SourceChunk::new(db, i as u32));
        references += chunk.references;
        requirement_references += chunk.requirement_references;
        for f in &chunk.findings {
            out.extend(match &f.resolved {
                Resolved::Decision(r) => design_docs::reference_diagnostic(&f.reference, r, &index),
                Resolved::Requirement(ReqResolution::Unknown { closest }) => {
                    Some(requirements::unknown(&f.reference, closest.as_deref()))
                }
                Resolved::Requirement(ReqResolution::Known) => None,
            });
        }
    }
    if root.unreferenced(db) {
        let all: Vec<Reference> = root
            .sources(db)
            .iter()
            .flat_map(|f| source_references(db, *f).iter())
            .filter(|r| r.kind == RefKind::Decision)
            .cloned()
            .collect();
        out.extend(design_docs::unreferenced(decisions, &all));
    }
    CheckReport {
        diagnostics: out,
        decisions: decisions.len(),
        references,
        requirement_references,
    }
}

/// One `req:` reference in the tree: where it is, and whether it is in a test.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    pub path: String,
    /// 1-based.
    pub line: u32,
    pub test: bool,
}

/// The requirement references of one chunk of sources, as `(requirement id, site)` in the
/// root's order. Only the chunk of an edited file re-runs.
#[salsa::tracked(returns(ref))]
pub fn chunk_sites<'db>(
    db: &'db dyn Db,
    root: CheckRoot,
    chunk: SourceChunk<'db>,
) -> Vec<(String, Site)> {
    let sources = root.sources(db);
    let start = (chunk.index(db) as usize * CHUNK).min(sources.len());
    let mut out = Vec::new();
    for file in &sources[start..(start + CHUNK).min(sources.len())] {
        let refs = source_references(db, *file);
        if !refs.iter().any(|r| r.kind == RefKind::Requirement) {
            continue;
        }
        let (path, text) = (file.path(db), file.text(db));
        for r in refs.iter().filter(|r| r.kind == RefKind::Requirement) {
            let at = r.span.start as usize;
            let line = memchr::memchr_iter(b'\n', &text.as_bytes()[..at.min(text.len())]).count();
            out.push((
                r.id.clone(),
                Site {
                    path: path.clone(),
                    line: line as u32 + 1,
                    test: requirements::is_test_site(in_tree(root.tree(db), path), text, at),
                },
            ));
        }
    }
    out
}

/// Every requirement reference of the tree, by requirement id (sites in the root's order):
/// what `specc trace` follows from a requirement to its code and tests.
#[salsa::tracked(returns(ref))]
pub fn requirement_sites(db: &dyn Db, root: CheckRoot) -> BTreeMap<String, Vec<Site>> {
    let mut by_id: BTreeMap<String, Vec<Site>> = BTreeMap::new();
    for i in 0..root.sources(db).len().div_ceil(CHUNK) {
        for (id, site) in chunk_sites(db, root, SourceChunk::new(db, i as u32)) {
            by_id.entry(id.clone()).or_default().push(site.clone());
        }
    }
    by_id
}
