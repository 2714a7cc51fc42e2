//! A one-file submission for the VCS's test binaries that submit edits.

use specc_vcs::object::ObjectId;
use specc_vcs::{Change, Submission};

/// `path` set to `new` on `base` (`expected`: the blob the author saw there, `None` for a new
/// file), with idempotency key `key` (empty: none).
pub(crate) fn edit(
    base: ObjectId,
    path: &str,
    expected: Option<ObjectId>,
    new: &str,
    key: &str,
) -> Submission {
    Submission {
        base,
        changes: vec![Change {
            path: path.to_owned(),
            expected,
            new: Some(new.as_bytes().to_vec()),
            executable: false,
        }],
        message: format!("edit {path}"),
        task: "task-1".to_owned(),
        idempotency_key: key.to_owned(),
    }
}
