//! The worker's model/tool loop for one attempt. The orchestrator, not the prompt, enforces
//! the limits: steps per attempt, tokens per attempt, the wall clock, and the stuck
//! detector. Every model response and tool result is journaled before the next step. After
//! `done` the acceptance checks run; a failure goes back to the worker once.
//! design: runtime.limits-enforced
//! design: runtime.worker-protocol

use std::time::{Duration, Instant};

use serde_json::json;
use specc_llm::types::Author;
use specc_llm::{Client, LlmError, Message, Request, Role, ToolChoice};

use crate::acceptance::{self, Check};
use crate::journal::{Journal, StepKind};
use crate::stuck::StuckDetector;
use crate::tools::{self, Control, Toolbox};

/// What the orchestrator allows one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptLimits {
    /// Model calls.
    pub max_steps: u32,
    /// Input and output tokens over all calls.
    pub max_tokens: u64,
    pub wall: Duration,
}

/// Who makes the attempt and where it is journaled.
pub struct AttemptId<'a> {
    pub run: &'a str,
    pub task: &'a str,
    pub attempt: u32,
    pub role: Role,
}

/// How an attempt's loop ended.
#[derive(Debug)]
pub enum LoopEnd {
    /// `done`, and the acceptance checks passed.
    Done {
        summary: String,
        flagged: Vec<String>,
        /// The last step journaled.
        steps: u32,
    },
    /// The attempt failed: gave up, a limit, stuck, or acceptance failed twice.
    Failed {
        reason: String,
        /// The acceptance failure, with output, when that is why.
        acceptance: Option<String>,
        flagged: Vec<String>,
    },
    /// The budget cap stops the build.
    Budget(String),
    /// The journal could not be written: nothing more may happen.
    Journal(String),
}

/// Everything one loop needs.
pub struct AgentLoop<'a> {
    pub client: &'a Client,
    pub journal: &'a Journal,
    pub id: AttemptId<'a>,
    pub tools: &'a Toolbox,
    pub checks: &'a [Check],
    pub limits: AttemptLimits,
    pub max_tokens_per_call: u32,
}

impl AgentLoop<'_> {
    pub async fn run(&self, mut messages: Vec<Message>) -> LoopEnd {
        let started = Instant::now();
        let mut step = 0u32;
        let mut calls = 0u32;
        let mut tokens = 0u64;
        let mut stuck = StuckDetector::default();
        let mut flagged: Vec<String> = Vec::new();
        let mut acceptance_rounds = 0u32;
        let fail = |reason: String, flagged: &[String]| LoopEnd::Failed {
            reason,
            acceptance: None,
            flagged: flagged.to_vec(),
        };
        loop {
            if calls >= self.limits.max_steps {
                return fail(
                    format!("step limit: {} model calls", self.limits.max_steps),
                    &flagged,
                );
            }
            if tokens >= self.limits.max_tokens {
                return fail(
                    format!(
                        "token budget: {tokens} of {} tokens",
                        self.limits.max_tokens
                    ),
                    &flagged,
                );
            }
            let Some(left) = self.limits.wall.checked_sub(started.elapsed()) else {
                return fail(
                    format!("wall clock: {} s", self.limits.wall.as_secs()),
                    &flagged,
                );
            };
            calls += 1;
            let request = self.request(&messages);
            let answer =
                tokio::time::timeout(left, self.client.call(self.id.role, self.id.task, request))
                    .await;
            let response = match answer {
                Err(_) => {
                    return fail(
                        format!("wall clock: {} s", self.limits.wall.as_secs()),
                        &flagged,
                    );
                }
                Ok(Err(LlmError::Budget { .. })) => {
                    return LoopEnd::Budget("the budget cap was reached".to_owned());
                }
                Ok(Err(LlmError::MalformedToolCall {
                    name,
                    arguments,
                    reason,
                })) => {
                    // The model gets the parse error back, like any malformed call.
                    step += 1;
                    let body =
                        json!({"error": "malformed_tool_call", "tool": name, "reason": reason});
                    if let Err(e) = self.log(step, StepKind::ModelError, &body) {
                        return e;
                    }
                    let action = format!("malformed {name} {arguments}");
                    if let Some(why) = stuck.record(&action, &reason, true) {
                        return fail(format!("stuck: {why}"), &flagged);
                    }
                    messages.push(Message::user(format!(
                        "Your last tool call `{name}` had arguments that are not valid JSON ({reason}). \
                         Call the tool again with a JSON object that fits its schema."
                    )));
                    continue;
                }
                Ok(Err(e)) => {
                    step += 1;
                    if let Err(end) =
                        self.log(step, StepKind::ModelError, &json!({"error": e.to_string()}))
                    {
                        return end;
                    }
                    return fail(format!("the model call failed: {e}"), &flagged);
                }
                Ok(Ok(r)) => r,
            };
            tokens += response.usage.input + response.usage.cached_input + response.usage.output;
            step += 1;
            if let Err(e) = self.log(step, StepKind::Model, &json!(response)) {
                return e;
            }
            let mut said = Message::new(Author::Assistant, response.text.clone());
            said.tool_calls = response.tool_calls.clone();
            messages.push(said);
            if response.tool_calls.is_empty() {
                if let Some(why) = stuck.record("no tool call", &response.text, true) {
                    return fail(format!("stuck: {why}"), &flagged);
                }
                messages.push(Message::user(
                    "Answer by calling a tool. When the task is complete, call `done`; if it cannot be done, call `give_up`.",
                ));
                continue;
            }
            for call in &response.tool_calls {
                let left = self.limits.wall.saturating_sub(started.elapsed());
                let mut outcome = self.tools.call(call, step, left).await;
                if let Some(f) = outcome.flagged.take() {
                    flagged.push(f);
                }
                let mut end = None;
                match &outcome.control {
                    Control::Continue => {}
                    Control::GiveUp(reason) => {
                        end = Some(fail(format!("gave up: {reason}"), &flagged));
                    }
                    Control::Done(summary) => {
                        acceptance_rounds += 1;
                        let restored = match self.tools.restore_outside_scope() {
                            Ok(r) => r,
                            Err(e) => {
                                return fail(format!("restoring the checkout: {e}"), &flagged);
                            }
                        };
                        let left = self.limits.wall.saturating_sub(started.elapsed());
                        let mut report =
                            acceptance::run(self.tools, self.checks, acceptance_rounds, left).await;
                        report.restored = restored;
                        step += 1;
                        if let Err(e) = self.log(step, StepKind::Acceptance, &json!(report)) {
                            return e;
                        }
                        if report.passed() {
                            end = Some(LoopEnd::Done {
                                summary: summary.clone(),
                                flagged: flagged.clone(),
                                steps: step + 1,
                            });
                        } else if acceptance_rounds == 1 {
                            outcome.failed = true;
                            outcome.text = format!(
                                "The acceptance checks failed:\n{}\n{}Fix the problem, then call `done` again.",
                                report.failures(),
                                restored_note(&report.restored)
                            );
                        } else {
                            end = Some(LoopEnd::Failed {
                                reason: report.summary(),
                                acceptance: Some(report.failures()),
                                flagged: flagged.clone(),
                            });
                        }
                    }
                }
                step += 1;
                let body = json!({"call_id": call.id, "tool": call.name, "failed": outcome.failed, "text": outcome.text});
                if let Err(e) = self.log(step, StepKind::Tool, &body) {
                    return e;
                }
                if let Some(end) = end {
                    return end;
                }
                if let Some(why) =
                    stuck.record(&tools::action_key(call), &outcome.text, outcome.failed)
                {
                    return fail(format!("stuck: {why}"), &flagged);
                }
                let mut m = Message::new(Author::Tool, outcome.text);
                m.tool_call_id = Some(call.id.clone());
                messages.push(m);
            }
        }
    }

    fn request(&self, messages: &[Message]) -> Request {
        let mut r = Request::new(String::new(), messages.to_vec(), self.max_tokens_per_call);
        r.tools = tools::definitions();
        r.tool_choice = ToolChoice::Required;
        r
    }

    fn log(&self, step: u32, kind: StepKind, body: &serde_json::Value) -> Result<(), LoopEnd> {
        self.journal
            .step(self.id.run, self.id.task, self.id.attempt, step, kind, body)
            .map_err(|e| LoopEnd::Journal(e.to_string()))
    }
}

/// What the worker is told about changes outside its scope that were undone.
fn restored_note(restored: &[String]) -> String {
    if restored.is_empty() {
        return String::new();
    }
    format!(
        "Changes outside your write scope were undone before the checks ran: {}.\n",
        restored.join(", ")
    )
}
