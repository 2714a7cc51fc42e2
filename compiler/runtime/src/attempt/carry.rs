//! A failed attempt's work, kept for the next attempt when the failure was in the checks
//! (or the worker disputed one): its in-scope changes are written into the next attempt's
//! checkout before the worker starts, and the worker is told which. A file another task
//! changed since is left as the new base holds it, and the worker is told that too, so
//! kept work never overwrites what landed meanwhile.
//! design: runtime.carried-work

use specc_vcs::object::{Kind, ObjectId};
use specc_vcs::{Change, FileAt, Repo};

use super::context::CarriedNote;
use crate::checkouts::{Scope, Tracked, apply};

/// Writes `work` into the checkout at `dir` (of `base`), recording each write in
/// `tracked` as the tools would. A change whose base no longer holds what it was made
/// against is dropped, and so is one outside `scope` (a re-plan narrowed it, or a
/// deliberate break of the last attempt patched it): it would be undone before the checks.
pub(super) async fn carry(
    repo: &Repo,
    base: ObjectId,
    dir: &std::path::Path,
    tracked: &Tracked,
    (work, scope): (&[Change], &Scope),
) -> std::io::Result<CarriedNote> {
    let mut note = CarriedNote::default();
    let mut writes: Vec<(String, FileAt)> = Vec::new();
    for c in work {
        if !scope.allows(&c.path) && c.path != specc_plan::field_guide::PATH {
            note.dropped.push(c.path.clone());
            continue;
        }
        let Ok(now) = repo.file(base, &c.path).await else {
            note.dropped.push(c.path.clone());
            continue;
        };
        let now_id = now.as_ref().map(|(b, _)| ObjectId::of(Kind::Blob, b));
        if now_id != c.expected {
            note.dropped.push(c.path.clone());
            continue;
        }
        tracked.wrote(&c.path);
        if let Some(bytes) = &c.new {
            tracked.wrote_whole(&c.path, bytes, c.executable);
        }
        tracked.before(&c.path, now);
        writes.push((c.path.clone(), c.new.clone().map(|b| (b, c.executable))));
        note.kept.push(c.path.clone());
    }
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || apply(&dir, &writes))
        .await
        .map_err(std::io::Error::other)??;
    Ok(note)
}
