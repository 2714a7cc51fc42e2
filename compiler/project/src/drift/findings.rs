//! What changed in the tree since specc last built it: the tree is compared with the newest
//! commit of its history that specc made (its `Specc-Id` trailer), files as they are on
//! disk (committed by a person or not). Each file the build wrote and someone changed is
//! a finding, and so is each reference it lost, each test of a requirement it deleted, and
//! each pinned reference in code that was edited. Read-only: git is only asked.
//! design: driver.drift

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};
use specc_passes::references::{self, Method, RefKind, Reference};
use specc_passes::requirements::is_test_site;

use specc_vcs::git::read as git;

/// What kind of drift.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A `req:` or `design:` reference the build left is gone.
    ReferenceRemoved,
    /// A test of a requirement (a test file or test function that referenced it) is gone.
    TestRemoved,
    /// Code that carries a pinned `design:` reference was edited.
    PinnedCodeEdited,
    /// A pin no longer matches its decision (E0207).
    PinStale,
    /// A file the build wrote was changed.
    FileChanged,
    /// A file the build wrote was deleted.
    FileDeleted,
}

impl Kind {
    pub fn words(self) -> &'static str {
        match self {
            Kind::ReferenceRemoved => "reference removed",
            Kind::TestRemoved => "test removed",
            Kind::PinnedCodeEdited => "pinned code edited",
            Kind::PinStale => "pin stale",
            Kind::FileChanged => "file changed",
            Kind::FileDeleted => "file deleted",
        }
    }
}

/// One finding: what drifted, for which requirement or decision (`subject`; empty for a
/// changed file that references neither), where, and the file's content now (`content`:
/// blake3 hex, or `deleted`), which is what an accepted baseline entry matches.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Finding {
    pub subject: String,
    pub kind: Kind,
    pub path: String,
    pub line: u32,
    pub content: String,
    /// In words: what was there, or what the check said.
    pub detail: String,
}

/// Why there is nothing to compare against.
#[derive(Debug)]
pub enum NoBase {
    NotGit,
    NoSpeccCommit,
}

/// The newest commit of `tree`'s history (first parents) that specc made.
pub fn base(tree: &Path) -> Result<String, NoBase> {
    let log = git(
        tree,
        &[
            "log",
            "--first-parent",
            "-z",
            "--no-show-signature",
            "--format=%H%x01%cn%x01%(trailers:key=Specc-Id,valueonly)",
            "HEAD",
        ],
    )
    .ok_or(NoBase::NotGit)?;
    log.split('\0')
        .filter_map(|e| {
            let mut parts = e.trim_start_matches('\n').splitn(3, '\u{1}');
            Some((parts.next()?, parts.next()?, parts.next()?))
        })
        .find(|(_, committer, trailer)| *committer == "specc" && !trailer.trim().is_empty())
        .map(|(sha, _, _)| sha.to_owned())
        .ok_or(NoBase::NoSpeccCommit)
}

/// The findings of every file the build wrote (present at `base`) that differs on disk.
pub fn changed_files(tree: &Path, base: &str) -> Vec<Finding> {
    let Some(diff) = git(
        tree,
        &[
            "diff",
            "--relative",
            "--name-status",
            "-z",
            "--no-renames",
            base,
            "--",
            ".",
        ],
    ) else {
        return Vec::new();
    };
    let prefix = git(tree, &["rev-parse", "--show-prefix"]).unwrap_or_default();
    let prefix = prefix.trim();
    let mut fields = diff.split('\0').filter(|f| !f.is_empty());
    let mut out = Vec::new();
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        if status.starts_with('A') {
            continue; // not written by the build
        }
        let old = git(tree, &["show", &format!("{base}:{prefix}{path}")]).unwrap_or_default();
        let new = std::fs::read(tree.join(path))
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned());
        file_findings(path, &old, new.as_deref(), &mut out);
    }
    out
}

/// The findings of one changed file: `old` as the build left it, `new` as it is (`None`:
/// deleted).
fn file_findings(path: &str, old: &str, new: Option<&str>, out: &mut Vec<Finding>) {
    let content = new.map_or_else(|| "deleted".to_owned(), |t| content_id(t.as_bytes()));
    let name = path.rsplit('/').next().unwrap_or(path);
    let method = Method::for_file_name(name);
    let refs = |text: &str| -> Vec<Reference> {
        method.map_or_else(Vec::new, |m| {
            references::extract(specc_ir::FileId(0), m, text)
        })
    };
    let (before, after) = (refs(old), new.map(refs).unwrap_or_default());
    let site = Site { path, content };
    let mut subjects = BTreeSet::new();
    site.removed(old, &before, &after, &mut subjects, out);
    if let Some(text) = new {
        site.pinned(text, &after, out);
        subjects.extend(after.iter().map(|r| r.id.clone()));
    }
    let (kind, detail) = match new {
        Some(_) => (
            Kind::FileChanged,
            "changed outside specc since specc built it",
        ),
        None => (
            Kind::FileDeleted,
            "deleted outside specc since specc built it",
        ),
    };
    if subjects.is_empty() {
        out.push(site.finding("", kind, 0, detail.to_owned()));
    } else {
        for s in subjects {
            out.push(site.finding(&s, kind, 0, detail.to_owned()));
        }
    }
}

/// The changed file the findings are about.
struct Site<'a> {
    path: &'a str,
    /// Its content now, as the store names it (`deleted` if it is gone).
    content: String,
}

impl Site<'_> {
    fn finding(&self, subject: &str, kind: Kind, line: u32, detail: String) -> Finding {
        Finding {
            subject: subject.to_owned(),
            kind,
            path: self.path.to_owned(),
            line,
            content: self.content.clone(),
            detail,
        }
    }

    /// A finding for each reference (or test of a requirement) in `old` that is not in
    /// `after`; every subject `old` referenced goes into `subjects`.
    fn removed(
        &self,
        old: &str,
        before: &[Reference],
        after: &[Reference],
        subjects: &mut BTreeSet<String>,
        out: &mut Vec<Finding>,
    ) {
        let now: BTreeSet<(bool, &str)> = after
            .iter()
            .map(|r| (r.kind == RefKind::Requirement, r.id.as_str()))
            .collect();
        let mut gone = BTreeSet::new();
        for r in before {
            subjects.insert(r.id.clone());
            let key = (r.kind == RefKind::Requirement, r.id.clone());
            if now.contains(&(key.0, r.id.as_str())) || !gone.insert(key) {
                continue;
            }
            let at = line_of(old, r);
            let test = r.kind == RefKind::Requirement
                && is_test_site(self.path, old, r.span.start as usize);
            let (kind, word) = match (test, r.kind) {
                (true, _) => (Kind::TestRemoved, "req"),
                (false, RefKind::Requirement) => (Kind::ReferenceRemoved, "req"),
                (false, RefKind::Decision) => (Kind::ReferenceRemoved, "design"),
            };
            let detail = format!("`{word}: {}` was at line {at} when specc built it", r.id);
            out.push(self.finding(&r.id, kind, at, detail));
        }
    }

    /// A finding for each pinned reference in the file's new `text`.
    fn pinned(&self, text: &str, after: &[Reference], out: &mut Vec<Finding>) {
        for r in after.iter().filter(|r| r.pin.is_some()) {
            let detail = format!(
                "pinned to `{}@{}`; the file changed since specc built it",
                r.id,
                r.pin.as_deref().unwrap_or_default()
            );
            out.push(self.finding(&r.id, Kind::PinnedCodeEdited, line_of(text, r), detail));
        }
    }
}

/// The line `r` is on in `text`.
fn line_of(text: &str, r: &Reference) -> u32 {
    text.get(..r.span.start as usize)
        .map_or(0, |t| t.matches('\n').count() as u32 + 1)
}

/// A file's content as the store names it (blake3).
fn content_id(bytes: &[u8]) -> String {
    specc_vcs::object::ObjectId::of(specc_vcs::object::Kind::Blob, bytes).hex()
}

/// A finding for each stale pin `specc check` reports in the tree (E0207), with the
/// decision it names. `locate` names a diagnostic's file as check showed it and gives the
/// line of its label.
pub fn stale_pins(
    diagnostics: &[specc_ir::Diagnostic],
    locate: &dyn Fn(&specc_ir::Label) -> (String, u32),
    tree: &Path,
) -> Vec<Finding> {
    diagnostics
        .iter()
        .filter(|d| d.code == specc_ir::codes::STALE_PIN)
        .filter_map(|d| {
            let label = d.primary.as_ref()?;
            let subject = d.message.split('`').nth(1)?.to_owned();
            let (shown, line) = locate(label);
            let path = Path::new(&shown)
                .strip_prefix(tree)
                .map_or_else(|_| shown.clone(), |p| p.display().to_string());
            let content = std::fs::read(tree.join(&path))
                .map(|b| content_id(&b))
                .unwrap_or_else(|_| "deleted".to_owned());
            Some(Finding {
                subject,
                kind: Kind::PinStale,
                line,
                path,
                content,
                detail: d.message.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{Kind, file_findings};

    #[test]
    fn a_removed_reference_a_removed_test_and_an_edited_pin_are_each_a_finding() {
        let old = "# req: R-1\n# design: a.b@0123abcd\nx = 1\n";
        let new = "# design: a.b@0123abcd\nx = 2\n";
        let mut out = Vec::new();
        file_findings("src/x.py", old, Some(new), &mut out);
        let kinds: Vec<(String, Kind)> = out.iter().map(|f| (f.subject.clone(), f.kind)).collect();
        assert!(
            kinds.contains(&("R-1".into(), Kind::ReferenceRemoved)),
            "{kinds:?}"
        );
        assert!(
            kinds.contains(&("a.b".into(), Kind::PinnedCodeEdited)),
            "{kinds:?}"
        );
        assert!(
            kinds.contains(&("a.b".into(), Kind::FileChanged)),
            "{kinds:?}"
        );
        let mut out = Vec::new();
        file_findings(
            "tests/test_x.py",
            "# req: R-2\ndef test_x(): pass\n",
            None,
            &mut out,
        );
        let kinds: Vec<Kind> = out.iter().map(|f| f.kind).collect();
        assert_eq!(kinds, vec![Kind::TestRemoved, Kind::FileDeleted]);
    }

    #[test]
    fn a_changed_file_without_references_is_one_finding_of_no_subject() {
        let mut out = Vec::new();
        file_findings("README.md", "old\n", Some("new\n"), &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].subject.as_str(), out[0].kind),
            ("", Kind::FileChanged)
        );
    }
}
