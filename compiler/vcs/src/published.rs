//! What the integrator last made durable, readable without a round trip through its
//! channel: the head and the files the megafile guard flagged. It is published after each
//! batch's fsync and before the batch's answers, so a reader never sees what a crash could
//! take back, and a submitter told `Committed` sees its own commit (or a later one).
//! design: perf.orchestration

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use crate::object::ObjectId;

#[derive(Clone, Debug, Default)]
pub(crate) struct Published {
    inner: Arc<Mutex<Snapshot>>,
}

#[derive(Debug, Default)]
struct Snapshot {
    /// `None` once the store stopped (an fsync failed): it is unavailable.
    head: Option<ObjectId>,
    flagged: Vec<String>,
}

impl Published {
    /// The integrator's durable head, and its flagged files if they changed.
    pub(crate) fn set(&self, head: ObjectId, flagged: Option<&BTreeSet<String>>) {
        if let Ok(mut s) = self.inner.lock() {
            s.head = Some(head);
            if let Some(flagged) = flagged {
                s.flagged = flagged.iter().cloned().collect();
            }
        }
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
