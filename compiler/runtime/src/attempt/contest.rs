//! `contest_decision`: a worker contests a decision it was given that the spec contradicts.
//! The coordinator settles it at once (`landing/settled.rs`) and the worker is told the
//! settled text as the call's result; every task that starts afterwards reads that text.
//! design: runtime.contested-decisions

use specc_llm::ToolCall;

use super::agent::AgentLoop;
use crate::landing::{Contest, Contester};
use crate::tools::ToolOutcome;

impl AgentLoop<'_> {
    /// Carries out a `read_spec` or `read_decision` call (design: spec.node-text).
    pub(super) fn read(&self, call: &ToolCall) -> ToolOutcome {
        let id = call
            .arguments
            .get("id")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .trim();
        if call.name == "read_spec" {
            return match self.spec.read_spec(call) {
                Ok(text) => ToolOutcome::ok(text),
                Err(e) => ToolOutcome::error(e),
            };
        }
        if let Some(row) = self.settled.get(id) {
            return ToolOutcome::ok(format!("`{id}`: {}", row.text.trim()));
        }
        match self.spec.decision(id) {
            Some(text) => ToolOutcome::ok(format!("`{id}`: {}", text.trim())),
            None => ToolOutcome::error(format!("the plan has no decision `{id}`")),
        }
    }

    /// Carries out a `contest_decision` call.
    pub(super) async fn contest(&self, call: &ToolCall) -> ToolOutcome {
        let c: Contest = match serde_json::from_value(call.arguments.clone()) {
            Ok(c) => c,
            Err(e) => {
                return ToolOutcome::error(format!(
                    "the arguments of `contest_decision` do not fit its schema ({e}): give `decision`, `evidence` and `proposed`"
                ));
            }
        };
        let id = c.decision.trim();
        let Some(given) = self.decisions.iter().find(|d| d.id == id) else {
            let ids: Vec<String> = self
                .decisions
                .iter()
                .map(|d| format!("`{}`", d.id))
                .collect();
            return ToolOutcome::error(if ids.is_empty() {
                "this task was given no decision to contest".to_owned()
            } else {
                format!(
                    "`{id}` is not a decision this task was given; they are {}",
                    ids.join(", ")
                )
            });
        };
        // A settlement of this text (this call, journaled before a resume, or another
        // task's) answers as it did, before any other check.
        if let Some(row) = self.settled.get(id).filter(|r| r.replaced == given.text) {
            return ToolOutcome::ok(format!(
                "`{id}` was settled: \"{}\" ({}). This text replaces the one your task gave: follow it, and reference it with `design: {id}` where your code carries it out.",
                row.text.trim(),
                row.rationale.trim()
            ));
        }
        if given.spec {
            return ToolOutcome::error(format!(
                "`{id}` is the spec's own decision: it binds everyone and cannot be contested; follow it, or `give_up` saying what it makes impossible"
            ));
        }
        if c.evidence.trim().is_empty() || c.proposed.trim().is_empty() {
            return ToolOutcome::error(
                "a contest needs the evidence (the spec's words, quoted) and the proposed text",
            );
        }
        if c.proposed
            .split_whitespace()
            .eq(given.text.split_whitespace())
        {
            return ToolOutcome::error(format!("`{id}` already says that: follow it as it stands"));
        }
        let who = Contester {
            run: self.id.run,
            task: self.id.task,
            attempt: self.id.attempt,
        };
        let settled = self
            .settled
            .settle(
                self.client,
                self.journal,
                who,
                given,
                &c,
                self.max_tokens_per_call,
            )
            .await;
        match settled {
            Ok(row) => ToolOutcome::ok(format!(
                "The coordinator settled `{id}`: \"{}\" ({}). This text replaces the one your task gave: follow it, and reference it with `design: {id}` where your code carries it out. Every task that starts from now on reads it.",
                row.text.trim(),
                row.rationale.trim()
            )),
            Err(e) => ToolOutcome::error(format!(
                "the contest could not be settled ({e}): follow `{id}` as given, or `give_up` saying why it cannot be followed"
            )),
        }
    }
}
