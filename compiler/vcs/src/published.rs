//! What the integrator last made durable, readable without a round trip through its
//! channel: the head, the files the megafile guard flagged, and the files each recent
//! commit changed. It is published after each batch's fsync and before the batch's
//! answers, so a reader never sees what a crash could take back, and a submitter told
//! `Committed` sees its own commit (or a later one).
//! design: perf.orchestration
//! design: vcs.recent-changes

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::{Arc, Mutex};

use crate::object::ObjectId;

/// The files one commit changed: each path with its new bytes and whether it is
/// executable (`None`: removed).
pub(crate) type Files = Vec<(String, Option<(Arc<Vec<u8>>, bool)>)>;

/// A file's bytes and whether it is executable, or no file (`read::FileAt`, named here
/// without importing `read`, which imports the state that imports this).
type FileBytes = Option<(Vec<u8>, bool)>;

/// How many recent commits are kept, and how many bytes of their files at most.
const RECENT_COMMITS: usize = 4096;
const RECENT_BYTES: usize = 16 << 20;

#[derive(Clone, Debug, Default)]
pub(crate) struct Published {
    inner: Arc<Mutex<Snapshot>>,
}

#[derive(Debug, Default)]
struct Snapshot {
    /// `None` once the store stopped (an fsync failed): it is unavailable.
    head: Option<ObjectId>,
    flagged: Vec<String>,
    /// Recent durable commits in order, each with the files it changed since the one before
    /// it; the first one's files are not used (it anchors the rest).
    recent: VecDeque<(ObjectId, Files)>,
    /// The bytes of the files in `recent`.
    recent_bytes: usize,
}

fn size(files: &Files) -> usize {
    files
        .iter()
        .map(|(p, f)| p.len() + f.as_ref().map_or(0, |(b, _)| b.len()))
        .sum()
}

impl Published {
    /// The integrator's durable head, and its flagged files if they changed.
    pub(crate) fn set(&self, head: ObjectId, flagged: Option<&BTreeSet<String>>) {
        self.set_with(head, flagged, Vec::new());
    }

    /// [`Published::set`] with the commits the batch made, in order, each with the files
    /// it changed. When they do not lead from the last head published to `head` (the head
    /// was loaded or imported), the recent commits start again at `head`.
    pub(crate) fn set_with(
        &self,
        head: ObjectId,
        flagged: Option<&BTreeSet<String>>,
        made: Vec<(ObjectId, Files)>,
    ) {
        let Ok(mut s) = self.inner.lock() else {
            return;
        };
        let s = &mut *s;
        // The recent commits end at the last head published (they are set together).
        let leads = made.last().map_or(s.head, |(id, _)| Some(*id)) == Some(head);
        if s.head.is_some() && leads {
            for (id, files) in made {
                s.recent_bytes += size(&files);
                s.recent.push_back((id, files));
            }
            while s.recent.len() > RECENT_COMMITS
                || (s.recent_bytes > RECENT_BYTES && s.recent.len() > 1)
            {
                if let Some((_, files)) = s.recent.pop_front() {
                    s.recent_bytes -= size(&files);
                }
                // The new first commit only anchors the rest: its files are never read.
                if let Some((_, files)) = s.recent.front_mut() {
                    s.recent_bytes -= size(files);
                    files.clear();
                }
            }
        } else {
            s.recent.clear();
            s.recent.push_back((head, Vec::new()));
            s.recent_bytes = 0;
        }
        s.head = Some(head);
        if let Some(flagged) = flagged {
            s.flagged = flagged.iter().cloned().collect();
        }
    }

    /// The files that differ between two recent durable commits, `from` no later than
    /// `to`, with `to`'s file at each; `None` when either is not among the recent commits.
    pub(crate) fn changes(&self, from: ObjectId, to: ObjectId) -> Option<Vec<(String, FileBytes)>> {
        // The files' `Arc`s are taken under the lock and copied outside it: the integrator
        // publishes through that lock before it answers anyone.
        let mut out = BTreeMap::new();
        {
            let s = self.inner.lock().ok()?;
            s.head?;
            let j = s.recent.iter().rposition(|(id, _)| *id == to)?;
            let i = s.recent.range(..=j).rposition(|(id, _)| *id == from)?;
            for (_, files) in s.recent.range(i + 1..=j) {
                for (path, file) in files {
                    out.insert(path.clone(), file.clone());
                }
            }
        }
        Some(
            out.into_iter()
                .map(|(p, f)| (p, f.map(|(b, x)| (b.to_vec(), x))))
                .collect(),
        )
    }

    /// The store stopped: nothing it holds may be read any more.
    pub(crate) fn stop(&self) {
        if let Ok(mut s) = self.inner.lock() {
            s.head = None;
        }
    }

    /// A guard that stops the store when dropped (the integrator's end).
    pub(crate) fn stop_on_drop(&self) -> StopOnDrop {
        StopOnDrop(self.clone())
    }

    pub(crate) fn head(&self) -> Option<ObjectId> {
        self.inner.lock().ok()?.head
    }

    pub(crate) fn flagged(&self) -> Vec<String> {
        self.inner
            .lock()
            .map(|s| s.flagged.clone())
            .unwrap_or_default()
    }
}

/// See [`Published::stop_on_drop`].
pub(crate) struct StopOnDrop(Published);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.stop();
    }
}
