//! The tools of one attempt, bound to its checkout, and the path rules every tool keeps:
//! what the task may read and write, links, special files, and what may land.
//! design: runtime.tools

use std::path::{Path, PathBuf};
use std::sync::Arc;

use specc_plan::field_guide::PATH as GUIDE;
use specc_sandbox::{CommandLimits, Runner};

use super::outcome::ToolOutcome;
use crate::checkouts::{Diff, Scope, Tracked, diff, diff_tracked};
use crate::landing::{Break, Contradiction, Pins};

/// The tools of one attempt, bound to its checkout.
pub struct Toolbox {
    pub root: PathBuf,
    pub scope: Scope,
    pub runner: Arc<dyn Runner>,
    /// For `run` commands and acceptance checks alike.
    pub limits: CommandLimits,
    /// Where `run` logs go (one file per call).
    pub logs: PathBuf,
    /// The field guide's line budget.
    pub guide_lines: usize,
    /// The attempt's base commit: what is restored outside the write scope before the
    /// acceptance checks run.
    pub base: Base,
    /// What the tools wrote, and whether a command ran. Until one runs, `root` must hold
    /// no link outside `KEPT` (a checkout slot's lease guarantees it): the tools look for
    /// links on a path only once a command ran.
    pub tracked: Arc<Tracked>,
    /// `specc check`'s and `specc pin`'s work, for the `pin` tool.
    pub pins: Option<Arc<dyn Pins>>,
    /// The attempt's deliberate breaks (`break_scope`).
    pub breaks: std::sync::Mutex<Vec<Break>>,
    /// Decisions the worker found contradicting each other (`report_contradiction`).
    pub contradictions: std::sync::Mutex<Vec<Contradiction>>,
    /// The checkout's git view, made before its first command.
    pub git: GitView,
}

/// The git repository beside a checkout that makes `git status`, `git diff` and `git log`
/// answer in it (design: vcs.checkout-view): made once, before the attempt's first command;
/// its directory, which commands may read, or `None` if it could not be made.
#[derive(Default)]
pub struct GitView(tokio::sync::OnceCell<Vec<PathBuf>>);

/// The attempt's base commit; its files are read from the VCS only if a full comparison
/// is needed (a command ran), once.
pub struct Base {
    pub repo: specc_vcs::Repo,
    pub commit: specc_vcs::object::ObjectId,
    files: tokio::sync::OnceCell<Vec<specc_vcs::FileEntry>>,
}

impl Base {
    pub fn new(repo: specc_vcs::Repo, commit: specc_vcs::object::ObjectId) -> Base {
        Base {
            repo,
            commit,
            files: tokio::sync::OnceCell::new(),
        }
    }

    /// Every file of the base commit.
    pub async fn files(&self) -> std::io::Result<&[specc_vcs::FileEntry]> {
        self.files
            .get_or_try_init(|| async {
                self.repo
                    .files(self.commit)
                    .await
                    .map_err(std::io::Error::from)
            })
            .await
            .map(Vec::as_slice)
    }
}

impl Toolbox {
    /// The checkout path of a relative `path` the task may read, or an error for the model.
    pub(super) fn readable(&self, path: &str) -> Result<(String, PathBuf), ToolOutcome> {
        let rel = crate::checkouts::normalise(path).ok_or_else(|| {
            ToolOutcome::error(format!(
                "`{path}` is not a relative path inside the checkout"
            ))
        })?;
        if crate::checkouts::reserved(&rel) {
            return Err(ToolOutcome::error(format!(
                "`{rel}` is specc's own state, not part of the code"
            )));
        }
        if self.secret_file(&rel) {
            return Err(ToolOutcome::error(format!(
                "`{rel}` holds secrets (an environment or key file): no task reads it unless its write scope names it"
            )));
        }
        if let Some(link) = (!self.as_leased(&rel))
            .then(|| symlink_on_path(&self.root, &rel))
            .flatten()
        {
            return Err(ToolOutcome::error(format!(
                "`{link}` is a symbolic link; specc's tools do not follow links"
            )));
        }
        Ok((rel.clone(), self.root.join(&rel)))
    }

    /// Whether the checkout at `rel` is still as its lease made it: no command ran and
    /// `rel` is outside `KEPT`. It then holds no link (a checkout removes them all and the
    /// tools make none) and, until the tools write it, the base's file (design:
    /// perf.orchestration).
    pub(super) fn as_leased(&self, rel: &str) -> bool {
        let top = rel.split('/').next().unwrap_or_default();
        !self.tracked.ran() && !crate::checkouts::KEPT.contains(&top)
    }

    /// [`Toolbox::readable`] for a path that must be a regular file if it exists (a FIFO or
    /// a device would block or misbehave).
    pub(super) fn readable_file(&self, path: &str) -> Result<(String, PathBuf), ToolOutcome> {
        let (rel, full) = self.readable(path)?;
        not_special(&rel, &std::fs::symlink_metadata(&full))?;
        Ok((rel, full))
    }

    /// [`Toolbox::writable`] for a file: a regular file, or nothing yet. The caller is
    /// about to write it, so it is tracked from here (a write that then fails costs only a
    /// comparison). Until the first write, and while no command ran, the checkout holds
    /// the base there: what it held is kept, and the task's change is measured against it
    /// without asking the VCS (design: perf.orchestration).
    pub(super) fn writable_file(&self, path: &str) -> Result<(String, PathBuf), ToolOutcome> {
        self.writable_file_as_is(path)
            .map(|(rel, full, _)| (rel, full))
    }

    /// [`Toolbox::writable_file`], with what is at the path: the file's metadata, or why
    /// there is none.
    pub(super) fn writable_file_as_is(
        &self,
        path: &str,
    ) -> Result<(String, PathBuf, std::io::Result<std::fs::Metadata>), ToolOutcome> {
        use std::os::unix::fs::PermissionsExt as _;
        let (rel, full) = self.writable(path)?;
        let meta = std::fs::symlink_metadata(&full);
        not_special(&rel, &meta)?;
        if self.tracked.wrote(&rel) && self.as_leased(&rel) {
            let before = match &meta {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(None),
                Ok(m) if m.is_file() => std::fs::read(&full)
                    .ok()
                    .map(|b| Some((b, m.permissions().mode() & 0o111 != 0))),
                _ => None,
            };
            if let Some(before) = before {
                self.tracked.before(&rel, before);
            }
        }
        Ok((rel, full, meta))
    }

    /// Brings the checkout's directory to the base where it still owes it files (design:
    /// runtime.lazy-checkouts), before anything reads it or runs in it.
    pub async fn ready(&self) -> std::io::Result<()> {
        self.tracked.ready(&self.root).await
    }

    /// The changes outside the write scope (other than the field guide) undone, so the
    /// acceptance checks run on what would land: the base plus the task's own changes.
    /// Returns the paths restored or removed. While no command has run, only the tools
    /// wrote, and they write nothing outside the scope: nothing to look at.
    pub async fn restore_outside_scope(&self) -> std::io::Result<Vec<String>> {
        if self.tracked.known().is_some() {
            return Ok(Vec::new());
        }
        let files = self.base.files().await?;
        crate::checkouts::restore_outside(&self.root, files, &self.landing_scope())
    }

    /// What would land: the checkout's difference from the base within the write scope and
    /// the files deliberate breaks patched (only the paths the tools wrote while no command
    /// ran).
    pub(crate) async fn landing_diff(&self) -> std::io::Result<Diff> {
        let scope = self.landing_scope();
        if self.tracked.lost() {
            return Err(std::io::Error::other(
                "the checkout could not be brought to its base; nothing is taken from it",
            ));
        }
        let (repo, base) = (&self.base.repo, self.base.commit);
        match self.tracked.known() {
            Some(paths) => diff_tracked(repo, base, &self.root, &paths, &scope).await,
            None => diff(&self.root, self.base.files().await?, &scope),
        }
    }

    /// The checkout's git view of the base, made before the first command: the directories
    /// commands may read for it (the view, and the objects every view shares), none when it
    /// could not be made: the command then runs in a checkout that is not a repository, as
    /// it would without one.
    pub(crate) async fn git_view(&self) -> Vec<PathBuf> {
        let make = || async {
            let Some(name) = self.root.file_name() else {
                return Vec::new();
            };
            let git_dir = self
                .root
                .with_file_name(format!("{}.git", name.to_string_lossy()));
            let made = self
                .base
                .repo
                .git_view(&git_dir, &self.root, self.base.commit)
                .await;
            match made {
                Ok(shared) => vec![git_dir, shared],
                Err(e) => {
                    tracing::warn!(checkout = %self.root.display(), error = %e, "no git view");
                    let _ = std::fs::remove_file(self.root.join(".git"));
                    Vec::new()
                }
            }
        };
        self.git.0.get_or_init(make).await.clone()
    }

    /// Whether `rel` is a file that holds secrets — `.env` and its variants, private keys
    /// and certificates' key stores, cloud credentials — which the tools neither read nor
    /// search unless the task's write scope names it (design: secrets.redaction).
    pub(crate) fn secret_file(&self, rel: &str) -> bool {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let secret = name == ".env"
            || (name.starts_with(".env.")
                && !name.ends_with(".example")
                && !name.ends_with(".sample"))
            || name.starts_with("id_rsa")
            || name.starts_with("id_ecdsa")
            || name.starts_with("id_ed25519")
            || [".pem", ".key", ".p12", ".pfx", ".jks", ".keystore"]
                .iter()
                .any(|ext| name.ends_with(ext))
            || rel.ends_with(".aws/credentials")
            || name == ".netrc"
            || name == ".pgpass";
        secret && !self.scope.names(rel)
    }

    /// The breaks so far.
    pub fn breaks(&self) -> Vec<Break> {
        self.breaks.lock().map(|b| b.clone()).unwrap_or_default()
    }

    /// What the attempt may land: its write scope and the files its deliberate breaks
    /// patched.
    pub fn landing_scope(&self) -> Scope {
        let breaks = self.breaks();
        if breaks.is_empty() {
            return self.scope.clone();
        }
        let mut patterns = self.scope.patterns().to_vec();
        for b in breaks {
            patterns.push(b.path);
            patterns.push(b.doc);
        }
        Scope::new(&patterns)
    }

    /// The checkout path of a relative `path` the task may write, or an error that says
    /// what it may write instead.
    pub(super) fn writable(&self, path: &str) -> Result<(String, PathBuf), ToolOutcome> {
        use crate::checkouts::Denied;
        let rel = crate::checkouts::normalise(path);
        let allowed = match &rel {
            Some(r) if r == GUIDE => Ok(()),
            Some(r) => self.scope.check(r),
            None => Err(Denied::NotRelative),
        };
        match allowed {
            Ok(()) => self.readable(path),
            Err(Denied::NotRelative) => Err(ToolOutcome::error(format!(
                "`{path}` is not a relative path inside the checkout"
            ))),
            Err(Denied::Reserved) => Err(ToolOutcome::error(format!(
                "`{path}` is inside .specc/ or .git/, which no task writes"
            ))),
            Err(Denied::OutsideScope) => Err(ToolOutcome::error(format!(
                "`{path}` is outside your write scope ({}). Write only there; if the task needs \
                 a change elsewhere, finish with `done` or `give_up` and say what is needed",
                self.scope.patterns().join(", ")
            ))),
        }
    }
}

/// Refuses an existing path that is not a regular file.
fn not_special(rel: &str, meta: &std::io::Result<std::fs::Metadata>) -> Result<(), ToolOutcome> {
    match meta {
        Ok(m) if m.is_dir() => Err(ToolOutcome::error(format!("`{rel}` is a directory"))),
        Ok(m) if !m.is_file() => Err(ToolOutcome::error(format!("`{rel}` is not a regular file"))),
        _ => Ok(()),
    }
}

/// The first part of `rel` below `root` that is a symbolic link, if any.
fn symlink_on_path(root: &Path, rel: &str) -> Option<String> {
    let mut at = root.to_path_buf();
    let mut seen = String::new();
    for part in rel.split('/') {
        at.push(part);
        if !seen.is_empty() {
            seen.push('/');
        }
        seen.push_str(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => return Some(seen),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}
