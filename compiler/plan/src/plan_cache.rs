//! What planning remembers between runs: answers by the key of the request that asked for
//! them, the coordinator's merges, the ids an answer was accepted with though they clash,
//! and each task's latest answer with the inputs it answered (what amend mode starts from).
//! design: runtime.incremental-planning
//! design: runtime.amend-planning

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use specc_ir::plan::{ChildKind, PlannedChild, PlannedDecision, PlannerAnswer};
use specc_llm::{Client, Role};
use specc_passes::plan::{self, Owned};

use crate::amend::Earlier;

/// The planner cache. Persisting it is the caller's business (it is plain data); a file in
/// an older shape reads as empty.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Cache {
    pub answers: HashMap<String, PlannerAnswer>,
    #[serde(default)]
    pub merges: HashMap<String, PlannedDecision>,
    /// By answer key: the ids its planner kept deciding against their owner after the
    /// repairs. Such an answer goes to the coordinator again on a hit; a clash on any other
    /// id (a new owner since) asks again.
    #[serde(default)]
    pub contested: HashMap<String, Vec<String>>,
    /// By task id: the key of its latest answer and the inputs that answer was given.
    #[serde(default)]
    pub latest: HashMap<String, Latest>,
}

/// A task's latest answer: its key in `answers`, and the request's inputs, with the field
/// guide kept as its hash (it is the same text for every task).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Latest {
    pub key: String,
    pub inputs: Value,
}

const GUIDE: &str = "field_guide";

impl Cache {
    pub fn new() -> Cache {
        Cache::default()
    }

    /// Records `key` as `task`'s latest answer, given `inputs`.
    pub fn remember(&mut self, task: &str, key: &str, inputs: &Value) {
        let mut kept = inputs.clone();
        if let Some(guide) = inputs[GUIDE].as_str() {
            kept[GUIDE] = Value::String(guide_hash(guide));
        }
        self.latest.insert(
            task.to_owned(),
            Latest {
                key: key.to_owned(),
                inputs: kept,
            },
        );
    }

    /// The earlier answer of `task` and its inputs (for the field guide: today's text if it
    /// is unchanged, a placeholder if not), when one is known.
    pub fn earlier(&self, task: &str, inputs: &Value) -> Option<(PlannerAnswer, Value)> {
        let latest = self.latest.get(task)?;
        let answer = self.answers.get(&latest.key)?.clone();
        let mut before = latest.inputs.clone();
        if let Some(guide) = inputs[GUIDE].as_str() {
            before[GUIDE] = if before[GUIDE].as_str() == Some(&guide_hash(guide)) {
                Value::String(guide.to_owned())
            } else {
                Value::String("(an earlier version of the field guide)".to_owned())
            };
        }
        Some((answer, before))
    }
}

impl Cache {
    /// The work leaves of the latest plan, by task id: from the root's latest answer down
    /// through each plan child's, in the answers' order. Tasks the build added while it ran
    /// (follow-ups, splits) are not in it.
    pub fn latest_leaves(&self) -> Vec<(String, PlannedChild)> {
        let mut out = Vec::new();
        let mut stack = vec![String::new()];
        while let Some(task) = stack.pop() {
            let Some(answer) = self
                .latest
                .get(&task)
                .and_then(|l| self.answers.get(&l.key))
            else {
                continue;
            };
            for c in answer.children.iter().rev() {
                let id = if task.is_empty() {
                    c.key.clone()
                } else {
                    format!("{task}/{}", c.key)
                };
                match c.kind {
                    ChildKind::Plan => stack.push(id),
                    ChildKind::Work => out.push((id, c.clone())),
                }
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// The requirements the latest plan waives (`no_code`), with why, by id.
    pub fn latest_waivers(&self) -> std::collections::BTreeMap<String, String> {
        self.latest
            .values()
            .filter_map(|l| self.answers.get(&l.key))
            .flat_map(|a| a.no_code.iter())
            .map(|w| (w.id.clone(), w.reason.clone()))
            .collect()
    }
}

/// Borrows an earlier answer for [`crate::amend::request`].
pub(crate) fn as_earlier<'a>(e: &'a (PlannerAnswer, Value)) -> Earlier<'a> {
    Earlier {
        answer: &e.0,
        inputs: &e.1,
    }
}

fn guide_hash(text: &str) -> String {
    format!("blake3:{}", &blake3::hash(text.as_bytes()).to_hex()[..16])
}

/// The cache key of a planner-role request: the request as the provider will get it, with
/// the provider's name, so answers from one provider or model never stand in for another's.
pub(crate) fn cache_key(client: &Client, mut request: specc_llm::Request) -> String {
    let provider = match client.binding(Role::Planner) {
        Some(b) => {
            request.model.clone_from(&b.model);
            b.provider.clone()
        }
        None => String::new(),
    };
    format!("{provider}:{}", specc_llm::fingerprint(&request))
}

/// The ids `answer` decides with another text than their owner's.
pub(crate) fn clashes(answer: &PlannerAnswer, owned: &BTreeMap<String, Owned>) -> Vec<String> {
    let mut ids: Vec<String> = answer
        .decisions
        .iter()
        .filter(|d| {
            owned.get(&d.id).is_some_and(|o| {
                plan::decision_key(&o.decision.decision) != plan::decision_key(&d.decision)
            })
        })
        .map(|d| d.id.clone())
        .collect();
    ids.dedup();
    ids
}
