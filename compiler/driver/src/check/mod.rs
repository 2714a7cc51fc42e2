//! A `specc check` session: the files of one tree as salsa inputs, kept alive across
//! re-checks by `--watch` (and by benchmarks and tests, which drive it in-process).
//! design: passes.check-layering

pub(crate) mod walk;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use salsa::{Durability, Setter};

/// Design documents' durability: below the unedited sources', above the edited ones'.
const DOC_DURABILITY: Durability = Durability::MEDIUM;
use specc_ir::{Diagnostic, FileId};
use specc_passes::check::{
    CheckRoot, DesignDoc, Site, SourceFile, check_report, requirement_sites, source_references,
};
use specc_passes::db::SpecFile;

use crate::db::Database;
use crate::source::{Files, ReadError, read_source};
use walk::{Entry, Kind, Walked};

/// What to report besides the always-on checks.
#[derive(Clone, Copy, Debug, Default)]
pub struct CheckOptions {
    /// Also warn about accepted decisions no code references.
    pub unreferenced: bool,
}

/// One checked tree and its database.
pub struct CheckSession {
    db: Database,
    files: Files,
    root: CheckRoot,
    dir: PathBuf,
    threads: usize,
    slots: HashMap<PathBuf, Slot>,
    /// The spec, with its path made canonical so that a watcher's event can be matched.
    spec: Option<(PathBuf, SpecFile)>,
    /// Sources created or edited since the last check: the cold check parses them on every
    /// core first; a re-check after an edit or two does not pay for threads.
    unparsed: usize,
    skipped: Vec<(String, Diagnostic)>,
}

#[derive(Clone, Copy, Debug)]
enum Slot {
    Doc(DesignDoc),
    Source(SourceFile),
}

/// The outcome of one check.
#[derive(Debug, Default)]
pub struct Report {
    /// Skipped paths first, then design documents, conflicts, the spec, and sources.
    pub diagnostics: Vec<Diagnostic>,
    pub sources: usize,
    pub docs: usize,
    pub decisions: usize,
    pub references: usize,
    /// `req:` references to the spec's requirements.
    pub requirement_references: usize,
}

/// What one [`CheckSession::update`] changed, for `--watch` to print.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    pub edited: Vec<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Paths that became, or stopped being, skipped (W0211–W0213).
    pub skipped: Vec<String>,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.edited.is_empty()
            && self.added.is_empty()
            && self.removed.is_empty()
            && self.skipped.is_empty()
    }

    fn extend(&mut self, more: Changes) {
        self.edited.extend(more.edited);
        self.added.extend(more.added);
        self.removed.extend(more.removed);
        self.skipped.extend(more.skipped);
    }
}

impl CheckSession {
    /// Walks `dir` and loads every design document and source file into `db`. The spec, when
    /// given, is read too: an unreadable spec is a usage error.
    pub fn open(
        db: Database,
        dir: &Path,
        spec: Option<&Path>,
        options: CheckOptions,
    ) -> Result<CheckSession, ReadError> {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut files = Files::default();
        let spec = match spec {
            Some(path) => {
                let text = read_source(path)?;
                let name = path.display().to_string();
                let id = files.add(name.clone(), text.as_str().into());
                let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
                Some((canonical, SpecFile::new(&db, name, id, text)))
            }
            None => None,
        };
        let spec_input = spec.as_ref().map(|(_, s)| *s);
        let root = CheckRoot::builder(
            Vec::new(),
            Vec::new(),
            spec_input,
            options.unreferenced,
            dir.display().to_string(),
        )
        .durability(Durability::HIGH)
        .new(&db);
        let mut session = CheckSession {
            db,
            files,
            root,
            dir: dir.to_owned(),
            threads,
            slots: HashMap::new(),
            spec,
            unparsed: 0,
            skipped: Vec::new(),
        };
        let walked = walk::walk(dir, threads);
        session.reconcile(walked, true);
        Ok(session)
    }

    pub fn db(&self) -> &Database {
        &self.db
    }

    /// The input of the source file at `path` (as the walk found it: the root joined with
    /// the relative path), for tests that follow one file through the queries.
    pub fn source(&self, path: &Path) -> Option<SourceFile> {
        match self.slots.get(path)? {
            Slot::Source(s) => Some(*s),
            Slot::Doc(_) => None,
        }
    }

    pub fn files(&self) -> &Files {
        &self.files
    }

    /// Every `req:` reference of the tree, by requirement id: what `specc trace` follows.
    /// Incremental like [`CheckSession::check`]: after an edit only that file's chunk re-runs.
    pub fn requirement_sites(&mut self) -> &std::collections::BTreeMap<String, Vec<Site>> {
        if self.unparsed >= 64 {
            self.parse_sources_in_parallel();
        }
        self.unparsed = 0;
        requirement_sites(&self.db, self.root)
    }

    /// Checks the tree as loaded. Source files are parsed on every core first; the checks
    /// then read the memoised parses.
    pub fn check(&mut self) -> Report {
        if self.unparsed >= 64 {
            self.parse_sources_in_parallel();
        }
        self.unparsed = 0;
        let db = &self.db;
        let checked = check_report(db, self.root);
        let mut diagnostics: Vec<Diagnostic> =
            self.skipped.iter().map(|(_, d)| d.clone()).collect();
        diagnostics.extend(checked.diagnostics.iter().cloned());
        Report {
            diagnostics,
            sources: self.root.sources(db).len(),
            docs: self.root.docs(db).len(),
            decisions: checked.decisions,
            references: checked.references,
            requirement_references: checked.requirement_references,
        }
    }

    fn parse_sources_in_parallel(&self) {
        let sources = self.root.sources(&self.db);
        if self.threads < 2 {
            return;
        }
        let next = AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..self.threads {
                let db = self.db.clone();
                let next = &next;
                scope.spawn(move || {
                    const BATCH: usize = 32;
                    loop {
                        let start = next.fetch_add(BATCH, Ordering::Relaxed);
                        let Some(batch) = sources.get(start..(start + BATCH).min(sources.len()))
                        else {
                            break;
                        };
                        if batch.is_empty() {
                            break;
                        }
                        for f in batch {
                            source_references(&db, *f);
                        }
                    }
                });
            }
        });
    }

    /// Brings the database up to date with the files at `paths` (as a watcher reports them).
    /// An edit of a known file re-reads that file only; anything else (a new file, a removed
    /// one, a changed ignore file) re-walks the tree and reconciles.
    pub fn update(&mut self, paths: &[PathBuf]) -> Changes {
        let mut changes = Changes::default();
        let mut rewalk = false;
        for path in paths {
            if self.is_spec(path) {
                self.reread_spec(&mut changes);
                continue;
            }
            match self.slots.get(path).copied() {
                Some(slot) if path.is_file() => self.reread(path, slot, &mut changes),
                Some(_) => rewalk = true,
                // A directory that held loaded files was removed or moved away.
                None if !path.exists() => {
                    rewalk |= self.slots.keys().any(|p| p.starts_with(path));
                }
                None => {
                    let rel = path.strip_prefix(&self.dir).unwrap_or(path);
                    let ignore_file = rel
                        .file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| matches!(n, ".gitignore" | ".speccignore" | ".ignore"));
                    rewalk |= ignore_file || walk::classify(rel).is_some() || path.is_dir();
                }
            }
        }
        if rewalk {
            let walked = walk::walk(&self.dir, self.threads);
            let more = self.reconcile(walked, false);
            changes.extend(more);
        }
        changes
    }

    fn is_spec(&self, path: &Path) -> bool {
        self.spec.as_ref().is_some_and(|(canonical, _)| {
            std::fs::canonicalize(path).is_ok_and(|p| p == *canonical)
        })
    }

    /// Re-reads the spec. An unreadable spec keeps its last text (the watcher will see the
    /// next write).
    fn reread_spec(&mut self, changes: &mut Changes) {
        let Some((canonical, spec)) = self.spec.clone() else {
            return;
        };
        let Ok(text) = read_source(&canonical) else {
            return;
        };
        if *spec.text(&self.db) == text {
            return;
        }
        self.files
            .replace(spec.file_id(&self.db), text.as_str().into());
        changes.edited.push(spec.path(&self.db).clone());
        spec.set_text(&mut self.db)
            .with_durability(Durability::HIGH)
            .to(text);
    }

    fn reread(&mut self, path: &Path, slot: Slot, changes: &mut Changes) {
        let (shown, id) = match slot {
            Slot::Doc(d) => (d.path(&self.db).clone(), d.file_id(&self.db)),
            Slot::Source(s) => (s.path(&self.db).clone(), s.file_id(&self.db)),
        };
        let text = match walk::read(path, &shown) {
            Ok(text) => text,
            Err(skipped) => {
                // Now unreadable: drop it and say why.
                self.slots.remove(path);
                self.skipped.retain(|(s, _)| *s != shown);
                self.skipped.push(*skipped);
                self.set_lists();
                changes.removed.push(shown);
                return;
            }
        };
        self.set_text(slot, shown, id, text, changes);
    }

    /// Gives a loaded file new text, if it differs.
    fn set_text(
        &mut self,
        slot: Slot,
        shown: String,
        id: FileId,
        text: Arc<str>,
        changes: &mut Changes,
    ) {
        let same = match slot {
            Slot::Doc(d) => **d.text(&self.db) == *text,
            Slot::Source(s) => **s.text(&self.db) == *text,
        };
        if same {
            return;
        }
        self.files.replace(id, text.clone());
        // An edited source is volatile from now on; sources never edited stay durable, so
        // salsa verifies what depends only on them without walking their dependencies.
        // Documents keep one durability, MEDIUM, edited or not: salsa backdates a value only
        // if its durability did not drop, and backdating `resolve` is what spares the
        // references of a rationale edit; and below HIGH, a document's edit leaves what
        // depends only on unedited sources (their parses) unverified.
        // design: perf.check-durability
        match slot {
            Slot::Doc(d) => {
                d.set_text(&mut self.db)
                    .with_durability(DOC_DURABILITY)
                    .to(text);
            }
            Slot::Source(s) => {
                s.set_text(&mut self.db)
                    .with_durability(Durability::LOW)
                    .to(text);
                self.unparsed += 1;
            }
        }
        changes.edited.push(shown);
    }

    /// Makes the inputs match a fresh walk: new files become inputs, changed ones get their
    /// new text, vanished ones leave the lists.
    /// `initial` is the first load, whose files are not reported as added.
    fn reconcile(&mut self, walked: Walked, initial: bool) -> Changes {
        let mut changes = Changes::default();
        let mut seen: HashMap<PathBuf, Slot> = HashMap::with_capacity(walked.entries.len());
        for Entry {
            shown,
            path,
            kind,
            text,
        } in walked.entries
        {
            // The spec is the spec, not a source, whatever its comments say.
            if matches!(kind, Kind::Source(_))
                && self.spec.as_ref().is_some_and(|(canonical, _)| {
                    canonical.file_name() == path.file_name() && self.is_spec(&path)
                })
            {
                continue;
            }
            if let Some(slot) = self.slots.get(&path).copied() {
                let id = match slot {
                    Slot::Doc(d) => d.file_id(&self.db),
                    Slot::Source(s) => s.file_id(&self.db),
                };
                self.set_text(slot, shown, id, text, &mut changes);
                seen.insert(path, slot);
                continue;
            }
            let id = self.files.add(shown.clone(), text.clone());
            let slot = match kind {
                Kind::Doc => Slot::Doc(
                    DesignDoc::builder(shown.clone(), id, text)
                        .durability(DOC_DURABILITY)
                        .new(&self.db),
                ),
                Kind::Source(method) => {
                    self.unparsed += 1;
                    Slot::Source(
                        SourceFile::builder(shown.clone(), id, method, text)
                            .durability(Durability::HIGH)
                            .new(&self.db),
                    )
                }
            };
            if !initial {
                changes.added.push(shown);
            }
            seen.insert(path, slot);
        }
        for (path, slot) in &self.slots {
            if !seen.contains_key(path) {
                changes.removed.push(match slot {
                    Slot::Doc(d) => d.path(&self.db).clone(),
                    Slot::Source(s) => s.path(&self.db).clone(),
                });
            }
        }
        self.slots = seen;
        let was: Vec<&String> = self.skipped.iter().map(|(p, _)| p).collect();
        let now: Vec<&String> = walked.skipped.iter().map(|(p, _)| p).collect();
        if !initial {
            let differ = was
                .iter()
                .filter(|p| !now.contains(p))
                .chain(now.iter().filter(|p| !was.contains(p)));
            changes.skipped.extend(differ.map(|p| (*p).clone()));
        }
        self.skipped = walked.skipped;
        self.set_lists();
        changes
    }

    /// Sets the root's lists from the slots, in path order.
    fn set_lists(&mut self) {
        let mut paths: Vec<(&PathBuf, Slot)> = self.slots.iter().map(|(p, s)| (p, *s)).collect();
        paths.sort_by(|a, b| a.0.cmp(b.0));
        let mut docs = Vec::new();
        let mut sources = Vec::new();
        for (_, slot) in paths {
            match slot {
                Slot::Doc(d) => docs.push(d),
                Slot::Source(s) => sources.push(s),
            }
        }
        if *self.root.docs(&self.db) != docs {
            self.root
                .set_docs(&mut self.db)
                .with_durability(Durability::HIGH)
                .to(docs);
        }
        if *self.root.sources(&self.db) != sources {
            self.root
                .set_sources(&mut self.db)
                .with_durability(Durability::HIGH)
                .to(sources);
        }
    }
}
