//! Amend mode: a task re-planned after an edit gets its earlier answer and what changed in
//! its inputs, and is asked to amend that answer. Each decision or child it keeps may be
//! marked `"unchanged": true`; specc then keeps the earlier one word for word, whatever the
//! new answer's wording, so a planner that paraphrases what it kept does not change its
//! children's requests and their cached subtrees stay.
//! design: runtime.amend-planning

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use specc_ir::plan::{PlannedChild, PlannedDecision, PlannerAnswer};
use specc_llm::{Request, Tool};

use crate::planner;

/// The fields of a request's inputs compared one level down (the others as a whole).
const NESTED: [&str; 2] = ["task", "node"];

/// An earlier answer of a task and the inputs it answered.
#[derive(Clone, Debug)]
pub(crate) struct Earlier<'a> {
    pub answer: &'a PlannerAnswer,
    pub inputs: &'a Value,
}

/// A decision of an amended answer.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct AmendedDecision {
    #[serde(flatten)]
    pub decision: PlannedDecision,
    #[serde(default)]
    pub unchanged: bool,
}

/// A child of an amended answer.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct AmendedChild {
    #[serde(flatten)]
    pub child: PlannedChild,
    #[serde(default)]
    pub unchanged: bool,
}

/// An answer in amend mode.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub(crate) struct Amended {
    #[serde(default)]
    pub decisions: Vec<AmendedDecision>,
    pub children: Vec<AmendedChild>,
    #[serde(default)]
    pub contested: Vec<specc_ir::plan::Contest>,
    #[serde(default)]
    pub no_code: Vec<specc_ir::plan::Waiver>,
}

impl Amended {
    /// The answer as the planner wrote it, every mark ignored.
    pub(crate) fn as_written(&self) -> PlannerAnswer {
        PlannerAnswer {
            decisions: self.decisions.iter().map(|d| d.decision.clone()).collect(),
            children: self.children.iter().map(|c| c.child.clone()).collect(),
            contested: self.contested.clone(),
            no_code: self.no_code.clone(),
        }
    }

    /// The answer it stands for: each decision or child marked unchanged is the earlier one
    /// of its id or key (one the earlier answer does not have is taken as written).
    pub(crate) fn resolve(&self, earlier: &PlannerAnswer) -> PlannerAnswer {
        let decisions = self
            .decisions
            .iter()
            .map(|d| {
                let kept = earlier.decisions.iter().find(|e| e.id == d.decision.id);
                match kept {
                    Some(e) if d.unchanged => e.clone(),
                    _ => d.decision.clone(),
                }
            })
            .collect();
        let children = self
            .children
            .iter()
            .map(|c| {
                let kept = earlier.children.iter().find(|e| e.key == c.child.key);
                match kept {
                    Some(e) if c.unchanged => e.clone(),
                    _ => c.child.clone(),
                }
            })
            .collect();
        PlannerAnswer {
            decisions,
            children,
            contested: self.contested.clone(),
            no_code: self.no_code.clone(),
        }
    }
}

/// What differs between two requests' inputs: `{"what", "before", "after"}` for each
/// top-level field, and for each field of `task` and `node`, that changed.
pub(crate) fn changes(before: &Value, after: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    let keys = |v: &Value| -> Vec<String> {
        v.as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    };
    let mut top = keys(before);
    for k in keys(after) {
        if !top.contains(&k) {
            top.push(k);
        }
    }
    for k in top {
        let (b, a) = (&before[&k], &after[&k]);
        if b == a {
            continue;
        }
        if let (Some(bs), Some(as_)) = (by_id(b), by_id(a)) {
            // A list of sections or requirements: only the entries that changed, by id.
            out.extend(entry_changes(&k, &bs, &as_));
        } else if NESTED.contains(&k.as_str()) && b.is_object() && a.is_object() {
            for (field, change) in changes(b, a).into_iter().map(|c| (c["what"].clone(), c)) {
                let mut change = change;
                change["what"] = json!(format!("{k}.{}", field.as_str().unwrap_or_default()));
                out.push(change);
            }
        } else {
            out.push(json!({"what": k, "before": b, "after": a}));
        }
    }
    out
}

/// The entries of a list of objects that all have an `id`, in order; `None` otherwise.
fn by_id(v: &Value) -> Option<Vec<(&str, &Value)>> {
    let list = v.as_array()?;
    if list.is_empty() {
        return None;
    }
    list.iter().map(|e| Some((e["id"].as_str()?, e))).collect()
}

/// `{"what": "<list>[<id>]", "before", "after"}` for each entry of a list by id that changed,
/// appeared (`before` null) or went (`after` null).
fn entry_changes(list: &str, before: &[(&str, &Value)], after: &[(&str, &Value)]) -> Vec<Value> {
    let mut out = Vec::new();
    for (id, a) in after {
        let b = before.iter().find(|(i, _)| i == id).map(|(_, v)| *v);
        if b != Some(*a) {
            out.push(json!({"what": format!("{list}[{id}]"), "before": b, "after": a}));
        }
    }
    for (id, b) in before {
        if !after.iter().any(|(i, _)| i == id) {
            out.push(json!({"what": format!("{list}[{id}]"), "before": b, "after": null}));
        }
    }
    out
}

/// The amend request: the task's inputs as a fresh request has them, with the earlier answer
/// and what changed since it was given; the schema lets each decision and child be marked
/// unchanged.
pub(crate) fn request(inputs: &Value, earlier: &Earlier<'_>, max_tokens: u32) -> Request {
    let system = format!(
        "{} This task was planned before, and its inputs changed since: you are given your \
         earlier answer under amend.earlier_answer and the changes under amend.changed. Amend \
         the earlier answer for what changed: keep every decision and child the change does \
         not reach, with its key or id, and mark each one you keep with \"unchanged\": true \
         (its earlier text is then kept whatever you write); change, add or drop only what \
         the change reaches.",
        planner::SYSTEM
    );
    let mut user = inputs.clone();
    user["amend"] = json!({
        "earlier_answer": earlier.answer,
        "changed": changes(earlier.inputs, inputs),
    });
    let mut schema = planner::answer_schema();
    for list in ["decisions", "children"] {
        schema["properties"][list]["items"]["properties"]["unchanged"] = json!({"type": "boolean",
            "description": "true: this entry is the earlier answer's, kept word for word (specc keeps the earlier text whatever you wrote here, so the tasks below are not planned again)."});
    }
    crate::ask::request(
        &system,
        &user,
        Tool {
            name: planner::TOOL.to_owned(),
            description: "Submit the amended plan for this node.".to_owned(),
            parameters: schema,
        },
        max_tokens,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn child(key: &str, instructions: &str) -> PlannedChild {
        serde_json::from_value(json!({"key": key, "kind": "work", "title": key,
            "instructions": instructions}))
        .expect("child")
    }

    #[test]
    fn kept_children_and_decisions_are_the_earlier_ones_word_for_word() {
        let earlier = PlannerAnswer {
            decisions: vec![PlannedDecision {
                id: "a.x".into(),
                decision: "JSON".into(),
                rationale: "r".into(),
            }],
            children: vec![child("one", "Do one."), child("two", "Do two.")],
            contested: Vec::new(),
            no_code: Vec::new(),
        };
        let amended: Amended = serde_json::from_value(json!({
            "decisions": [{"id": "a.x", "decision": "Use JSON.", "rationale": "r2", "unchanged": true}],
            "children": [
                {"key": "one", "kind": "work", "title": "one", "instructions": "Carry out one.", "unchanged": true},
                {"key": "two", "kind": "work", "title": "two", "instructions": "Do two, faster."},
                {"key": "three", "kind": "work", "title": "three", "instructions": "New.", "unchanged": true}
            ]
        }))
        .expect("parses");
        let resolved = amended.resolve(&earlier);
        assert_eq!(resolved.decisions, earlier.decisions);
        assert_eq!(resolved.children[0], earlier.children[0]);
        assert_eq!(resolved.children[1].instructions, "Do two, faster.");
        assert_eq!(resolved.children[2].instructions, "New.");
    }

    #[test]
    fn changes_name_the_fields_that_differ() {
        let before = json!({"task": {"id": "a", "depth": 1}, "node": {"prose": "old", "title": "T"},
                            "field_guide": "g"});
        let after = json!({"task": {"id": "a", "depth": 1}, "node": {"prose": "new", "title": "T"},
                           "field_guide": "g", "settled_decisions": []});
        let c = changes(&before, &after);
        assert_eq!(
            c,
            vec![
                json!({"what": "node.prose", "before": "old", "after": "new"}),
                json!({"what": "settled_decisions", "before": null, "after": []}),
            ]
        );
        assert!(changes(&after, &after).is_empty());
    }
}
