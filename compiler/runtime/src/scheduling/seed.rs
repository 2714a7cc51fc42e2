//! The seed commit: the files the repository must hold before any leaf runs (the planned
//! design documents, the field guide's first text).
//! design: runtime.scheduler

use std::collections::BTreeMap;

use specc_vcs::object::ObjectId;
use specc_vcs::{Change, Outcome, Submission};

use specc_plan::field_guide::PATH as GUIDE;

use crate::services::Services;

/// Commits the seed files the head does not already hold. Returns the new commit, if any.
/// The field guide belongs to the agents once it exists: seeded, never overwritten. A
/// document an agent changed since the last seed (a deliberate break's new decision text)
/// keeps its change: the plan's own changes to it are merged in three ways against the
/// text the last seed wrote, and if they cannot be, the head's text stays.
/// design: runtime.deliberate-breaking
pub(super) async fn seed(
    s: &Services<'_>,
    files: &BTreeMap<String, String>,
) -> Result<Option<ObjectId>, SeedError> {
    let mut changes = Vec::new();
    let mut base = None;
    let mut unmerged: Vec<String> = Vec::new();
    for (path, text) in files {
        let (head, current) = s
            .repo
            .read_head(path)
            .await
            .map_err(|_| SeedError::Unavailable)?;
        base.get_or_insert(head);
        if path == GUIDE && current.is_some() {
            continue;
        }
        let last_seed = s.journal.seeded(path).ok().flatten();
        let wanted = match wanted(path, text, current.as_ref(), last_seed.as_deref()) {
            Wanted::Text(t) => t,
            Wanted::Nothing => continue,
            Wanted::Unmerged => {
                // The plan's change to it waits: not recorded as seeded, so the next seed
                // tries again.
                unmerged.push(path.clone());
                continue;
            }
        };
        if current
            .as_ref()
            .is_some_and(|f| f.bytes.as_slice() == wanted.as_bytes() && !f.executable)
        {
            continue;
        }
        changes.push(Change {
            path: path.clone(),
            expected: current.map(|f| f.blob),
            new: Some(wanted.into_bytes()),
            executable: false,
        });
    }
    let Some(base) = base.filter(|_| !changes.is_empty()) else {
        record_seeded(s, files, &unmerged);
        return Ok(None);
    };
    let submission = Submission {
        base,
        changes,
        message: "plan: design decisions and field guide".to_owned(),
        task: "plan".to_owned(),
        idempotency_key: seed_key(base, files),
    };
    match s.repo.submit(submission).await {
        Outcome::Committed { id, .. } => {
            record_seeded(s, files, &unmerged);
            Ok(Some(id))
        }
        other => Err(SeedError::Refused(Box::new(other))),
    }
}

/// What the seed writes at one path.
enum Wanted {
    Text(String),
    /// Nothing: an agent changed the document since the last seed and the plan did not.
    Nothing,
    /// The plan's change does not merge with the agent's.
    Unmerged,
}

/// What the seed writes at `path` when the plan says `text` and the last seed wrote
/// `last_seed`.
fn wanted(
    path: &str,
    text: &str,
    current: Option<&specc_vcs::HeadFile>,
    last_seed: Option<&str>,
) -> Wanted {
    let head = current.map(|f| String::from_utf8_lossy(&f.bytes).into_owned());
    match (head, last_seed) {
        // Changed by an agent since the last seed: keep its change.
        (Some(head), Some(last)) if head != last => {
            if text == last {
                return Wanted::Nothing; // the plan did not change it either
            }
            match specc_vcs::merge::merge3(last, text, &head) {
                Some(merged) => Wanted::Text(merged),
                None => {
                    tracing::warn!(
                        path,
                        "the plan's change to a document an agent changed does not merge; the document keeps the agent's text"
                    );
                    Wanted::Unmerged
                }
            }
        }
        _ => Wanted::Text(text.to_owned()),
    }
}

/// The seed's idempotency key names the base and the content: the same seed on another base
/// is another commit, and a retried seed on the same base lands once.
fn seed_key(base: ObjectId, files: &BTreeMap<String, String>) -> String {
    let mut h = blake3::Hasher::new();
    h.update(&base.0);
    for (path, text) in files {
        h.update(path.as_bytes());
        h.update(&[0]);
        h.update(text.as_bytes());
        h.update(&[0]);
    }
    format!("seed/{}", &h.finalize().to_hex()[..16])
}

/// Why the seed commit did not land.
#[derive(Debug)]
pub(super) enum SeedError {
    /// The VCS is unavailable.
    Unavailable,
    /// The VCS did not commit it (its outcome).
    Refused(Box<Outcome>),
}

impl std::fmt::Display for SeedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SeedError::Unavailable => write!(f, "the VCS is unavailable"),
            SeedError::Refused(outcome) => write!(
                f,
                "the plan's documents could not be committed: {outcome:?}"
            ),
        }
    }
}

/// Remembers what the plan seeded, the base of the next seed's merge.
fn record_seeded(s: &Services<'_>, files: &BTreeMap<String, String>, unmerged: &[String]) {
    for (path, text) in files.iter().filter(|(p, _)| !unmerged.contains(p)) {
        if let Err(e) = s.journal.set_seeded(path, text) {
            tracing::warn!(path, error = %e, "the seed's text was not recorded");
        }
    }
}
