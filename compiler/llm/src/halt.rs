//! Telling a client to make no more model calls: a build that received SIGTERM or SIGINT
//! lets the calls already out finish (their answers are paid for and journaled) and
//! refuses every later one with `LlmError::Halted`, so its attempts end at their next call
//! and the run stays resumable, as at the budget cap.
//! design: runtime.graceful-stop

use std::sync::{Arc, Mutex};

/// A cloneable switch shared by a client and whoever stops it (a signal handler).
#[derive(Clone, Debug, Default)]
pub struct Halt(Arc<Mutex<Option<String>>>);

impl Halt {
    /// No more calls, for `why`; the first reason stays.
    pub fn halt(&self, why: &str) {
        if let Ok(mut r) = self.0.lock()
            && r.is_none()
        {
            *r = Some(why.to_owned());
        }
    }

    /// Why calls were stopped, if they were.
    pub fn reason(&self) -> Option<String> {
        self.0.lock().ok()?.clone()
    }
}
