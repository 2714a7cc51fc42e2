//! The seed commit: the files the repository must hold before any leaf runs (the planned
//! design documents, the field guide's first text).
//! design: runtime.scheduler

use std::collections::BTreeMap;

use specc_vcs::object::ObjectId;
use specc_vcs::{Change, Outcome, Submission};

use crate::attempt::Services;

/// Commits the seed files the head does not already hold. Returns the new commit, if any.
/// The field guide belongs to the agents once it exists: seeded, never overwritten.
pub async fn seed(
    s: &Services<'_>,
    files: &BTreeMap<String, String>,
) -> Result<Option<ObjectId>, String> {
    let mut changes = Vec::new();
    let mut base = None;
    for (path, text) in files {
        let (head, current) = s
            .repo
            .read_head(path)
            .await
            .ok_or("the VCS is unavailable")?;
        base.get_or_insert(head);
        if path == crate::tools::GUIDE && current.is_some() {
            continue;
        }
        if current
            .as_ref()
            .is_some_and(|f| f.bytes.as_slice() == text.as_bytes() && !f.executable)
        {
            continue;
        }
        changes.push(Change {
            path: path.clone(),
            expected: current.map(|f| f.blob),
            new: Some(text.clone().into_bytes()),
            executable: false,
        });
    }
    let Some(base) = base.filter(|_| !changes.is_empty()) else {
        return Ok(None);
    };
    // The key names the base and the content: the same seed on another base is another
    // commit, and a retried seed on the same base lands once.
    let mut h = blake3::Hasher::new();
    h.update(&base.0);
    for (path, text) in files {
        h.update(path.as_bytes());
        h.update(&[0]);
        h.update(text.as_bytes());
        h.update(&[0]);
    }
    let submission = Submission {
        base,
        changes,
        message: "plan: design decisions and field guide".to_owned(),
        task: "plan".to_owned(),
        idempotency_key: format!("seed/{}", &h.finalize().to_hex()[..16]),
    };
    match s.repo.submit(submission).await {
        Outcome::Committed { id, .. } => Ok(Some(id)),
        other => Err(format!(
            "the plan's documents could not be committed: {other:?}"
        )),
    }
}
