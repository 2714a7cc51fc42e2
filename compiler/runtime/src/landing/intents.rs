//! What each task of a build intends (its title, instructions and the decisions it reads):
//! what the merge agent is told of both sides of a conflict.
//! design: runtime.merge-agent

use std::collections::HashMap;
use std::sync::Mutex;

use crate::attempt::{DecisionText, WorkOrder};

/// What the build's tasks intend, by task id: what the merger is told of each side.
#[derive(Default)]
pub struct Intents {
    by_task: Mutex<HashMap<String, Intent>>,
}

#[derive(Clone, Debug)]
pub(super) struct Intent {
    pub(super) title: String,
    pub(super) instructions: String,
    pub(super) decisions: Vec<DecisionText>,
}

impl Intents {
    /// Records the intents of `orders`.
    pub fn add(&self, orders: &[WorkOrder]) {
        if let Ok(mut m) = self.by_task.lock() {
            for o in orders {
                m.insert(
                    o.task.id.clone(),
                    Intent {
                        title: o.task.title.clone(),
                        instructions: o.task.instructions.clone(),
                        decisions: o.decisions.clone(),
                    },
                );
            }
        }
    }

    pub(super) fn get(&self, task: &str) -> Option<Intent> {
        self.by_task.lock().ok()?.get(task).cloned()
    }
}
