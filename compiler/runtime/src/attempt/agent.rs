//! The worker's model/tool loop for one attempt. The orchestrator, not the prompt, enforces
//! the limits: steps per attempt, tokens per attempt, the wall clock, and the stuck
//! detector. Every model response and tool result is journaled before the next step. After
//! `done` the acceptance checks run and what would land is held to the landing's rules (the
//! line budget); a failure goes back to the worker once.
//! design: runtime.limits-enforced
//! design: runtime.worker-protocol

use std::time::{Duration, Instant};

use serde_json::json;
use specc_llm::types::Author;
use specc_llm::{Client, LlmError, Message, Request, Response, Role, ToolCall, ToolChoice};
use tracing::Instrument as _;

use specc_state::{Journal, JournalError, StepAt, StepKind, step_write};

use super::acceptance::{self, Check};
use super::context::DecisionText;
use super::reading::SpecIndex;
use super::stuck::StuckDetector;
use super::{baseline, budget, ratchet, references};
use crate::checkouts::Diff;
use crate::events::Event;
use crate::landing::Settled;
use crate::services::AttemptLimits;
use crate::tools::{self, Control, Dispute, ToolOutcome, Toolbox};

/// Who makes the attempt and where it is journaled.
pub(super) struct AttemptId<'a> {
    pub run: &'a str,
    pub task: &'a str,
    pub attempt: u32,
    pub role: Role,
}

/// How an attempt's loop ended.
#[derive(Debug)]
pub(super) enum LoopEnd {
    /// `done`, and the acceptance checks passed.
    Done {
        summary: String,
        flagged: Vec<String>,
        /// The last step journaled.
        steps: u32,
        /// What lands.
        diff: Diff,
    },
    /// The attempt failed: gave up, a limit, stuck, or acceptance failed twice.
    Failed {
        reason: String,
        flagged: Vec<String>,
        /// The failed checks with their output, when it failed in them (they ran twice and
        /// failed): its work is worth keeping, and the next rung is shown them.
        checks: Option<String>,
    },
    /// The worker disputed one of its checks (design: runtime.disputes).
    Disputed {
        dispute: Box<Dispute>,
        flagged: Vec<String>,
    },
    /// The budget cap (or a halt) stops the build.
    Budget,
    /// The provider asked to wait longer than a retry waits: the task is queued again after
    /// this long, and gives up its job slot meanwhile.
    Parked(Duration),
    /// The journal could not be written: nothing more may happen.
    Journal(JournalError),
}

/// Everything one loop needs.
pub(super) struct AgentLoop<'a> {
    pub client: &'a Client,
    pub journal: &'a Journal,
    pub id: AttemptId<'a>,
    pub tools: &'a Toolbox,
    pub checks: &'a [Check],
    /// The requirement ids the task covers: each must be referenced (`req:`) when it lands.
    pub covers: &'a [String],
    /// The task's instructions and decisions: what may say a test goes (runtime.ratchet).
    pub allowance: &'a str,
    pub limits: AttemptLimits,
    pub max_tokens_per_call: u32,
    /// Where the attempt's steps are shown (`Event::Step`).
    pub events: &'a dyn Fn(Event),
    /// The decisions the task reads, and the build's settled ones (`contest_decision`).
    pub decisions: &'a [DecisionText],
    pub settled: &'a Settled,
    /// The spec and the plan's decisions, for `read_spec` and `read_decision`.
    pub spec: &'a SpecIndex,
}

/// An attempt's running state.
struct Turns {
    started: Instant,
    messages: Vec<Message>,
    /// The last step journaled.
    step: u32,
    calls: u32,
    tokens: u64,
    stuck: StuckDetector,
    flagged: Vec<String>,
    /// Times the acceptance checks ran.
    rounds: u32,
    /// Answers in a row that called no tool.
    prose: u32,
    /// Responses journaled by this attempt before the build died: used, in order, instead
    /// of asking the model again.
    replay: std::collections::VecDeque<Response>,
    /// An answer is queued in the state database, its commit asked for but maybe not done:
    /// the attempt waits for it before its work lands or its loop ends (design:
    /// llm.answer-durability).
    uncommitted: bool,
}

impl Turns {
    fn fail(&self, reason: String) -> LoopEnd {
        LoopEnd::Failed {
            reason,
            flagged: self.flagged.clone(),
            checks: None,
        }
    }

    fn stuck(&mut self, action: &str, result: &str, failed: bool) -> Result<(), LoopEnd> {
        match self.stuck.record(action, result, failed) {
            Some(why) => Err(self.fail(format!("stuck: {why}"))),
            None => Ok(()),
        }
    }
}

impl AgentLoop<'_> {
    /// Runs the attempt to its end: `done` with passing checks, a failure, or a stop.
    pub(super) async fn run(&self, messages: Vec<Message>, replay: Vec<Response>) -> LoopEnd {
        let mut t = Turns {
            started: Instant::now(),
            messages,
            step: 0,
            calls: 0,
            tokens: 0,
            stuck: StuckDetector::default(),
            flagged: Vec::new(),
            rounds: 0,
            prose: 0,
            replay: replay.into(),
            uncommitted: false,
        };
        loop {
            let Err(end) = self.turn(&mut t).await else {
                continue;
            };
            // A landing waits for the last answer once the attempt gave its job back
            // (`one::submit`); every other end waits here (design: llm.answer-durability).
            let waits = t.uncommitted && !matches!(end, LoopEnd::Done { .. } | LoopEnd::Journal(_));
            if waits && let Err(e) = self.client.durable().await {
                return LoopEnd::Journal(e.into());
            }
            return end;
        }
    }

    /// One model call and the tool calls it makes. `Err` ends the attempt.
    async fn turn(&self, t: &mut Turns) -> Result<(), LoopEnd> {
        let left = self.within_limits(t)?;
        let Some(response) = self.ask(t, left).await? else {
            return Ok(());
        };
        let names: Vec<&str> = response
            .tool_calls
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        self.show(
            t,
            if names.is_empty() {
                "answered without a tool call".to_owned()
            } else {
                names.join(", ")
            },
        );
        if response.tool_calls.is_empty() {
            t.prose += 1;
            if t.prose > MAX_PROSE_REPAIRS {
                return Err(t.fail(format!(
                    "answered in prose instead of calling a tool {} times in a row",
                    t.prose
                )));
            }
            t.messages.push(Message::user(prose_repair(&response.text)));
            return Ok(());
        }
        t.prose = 0;
        for call in &response.tool_calls {
            self.carry_out(t, call).await?;
        }
        Ok(())
    }

    /// Shows what the attempt is doing after its latest model call.
    fn show(&self, t: &Turns, doing: String) {
        (self.events)(Event::Step {
            task: self.id.task.to_owned(),
            attempt: self.id.attempt,
            call: t.calls,
            doing,
        });
    }

    /// The wall clock left, if no limit is reached.
    fn within_limits(&self, t: &Turns) -> Result<Duration, LoopEnd> {
        let l = self.limits;
        if t.calls >= l.max_steps {
            return Err(t.fail(format!("step limit: {} model calls", l.max_steps)));
        }
        if t.tokens >= l.max_tokens {
            let used = t.tokens;
            return Err(t.fail(format!("token budget: {used} of {} tokens", l.max_tokens)));
        }
        l.wall
            .checked_sub(t.started.elapsed())
            .ok_or_else(|| t.fail(format!("wall clock: {} s", l.wall.as_secs())))
    }

    /// Asks the model, within `left`. `None`: the answer went back to the model as an error
    /// (a malformed call), and the next turn asks again.
    async fn ask(&self, t: &mut Turns, left: Duration) -> Result<Option<Response>, LoopEnd> {
        t.calls += 1;
        // The answer is journaled in the transaction that records its call: a crash cannot
        // separate the two, so no answer is paid for and then asked for again.
        let at = StepAt {
            run: self.id.run,
            task: self.id.task,
            attempt: self.id.attempt,
            step: t.step + 1,
        };
        let hook = move |r: &Response| step_write(at, StepKind::Model, &json!(r));
        let answer = match t.replay.pop_front() {
            Some(journaled) => Ok(Ok((journaled, false))),
            None => {
                let request = self.request(&t.messages);
                let call =
                    self.client
                        .call_journaled(self.id.role, self.id.task, request, Some(&hook));
                tokio::time::timeout(left, call).await
            }
        };
        let (response, journaled) = match answer {
            Err(_) => return Err(t.fail(format!("wall clock: {} s", self.limits.wall.as_secs()))),
            Ok(Err(LlmError::Budget { .. })) => {
                return Err(LoopEnd::Budget);
            }
            Ok(Err(LlmError::Halted(_))) => return Err(LoopEnd::Budget),
            // The state database cannot be written: the build stops, as for the journal.
            Ok(Err(LlmError::Ledger(e))) => return Err(LoopEnd::Journal(e.into())),
            Ok(Err(LlmError::Parked { retry_after })) => {
                return Err(LoopEnd::Parked(retry_after));
            }
            Ok(Err(LlmError::MalformedToolCall {
                name,
                arguments,
                reason,
            })) => {
                // The model gets the parse error back, like any malformed call.
                t.step += 1;
                let body = json!({"error": "malformed_tool_call", "tool": name, "reason": reason});
                self.log(t.step, StepKind::ModelError, &body)?;
                t.stuck(&format!("malformed {name} {arguments}"), &reason, true)?;
                t.messages.push(Message::user(format!(
                    "Your last tool call `{name}` had arguments that are not valid JSON ({reason}). \
                     Call the tool again with a JSON object that fits its schema."
                )));
                return Ok(None);
            }
            Ok(Err(e)) => {
                t.step += 1;
                self.log(
                    t.step,
                    StepKind::ModelError,
                    &json!({"error": e.to_string()}),
                )?;
                return Err(t.fail(format!("the model call failed: {e}")));
            }
            Ok(Ok(r)) => r,
        };
        t.tokens += response.usage.input + response.usage.cached_input + response.usage.output;
        t.step += 1;
        t.uncommitted |= journaled;
        if !journaled {
            self.log(t.step, StepKind::Model, &json!(response))?;
        }
        let mut said = Message::new(Author::Assistant, response.text.clone());
        said.tool_calls = response.tool_calls.clone();
        t.messages.push(said);
        Ok(Some(response))
    }

    /// Carries out one tool call, journals its result and hands it to the model.
    async fn carry_out(&self, t: &mut Turns, call: &ToolCall) -> Result<(), LoopEnd> {
        let left = self.limits.wall.saturating_sub(t.started.elapsed());
        // For the build's trace (design: runtime.traces); off unless a trace is exported.
        let span =
            tracing::info_span!("tool call", tool = %call.name, failed = tracing::field::Empty);
        let mut outcome = match call.name.as_str() {
            "contest_decision" => self.contest(call).instrument(span.clone()).await,
            "read_spec" | "read_decision" => span.in_scope(|| self.read(call)),
            _ => {
                self.tools
                    .call(call, t.step, left)
                    .instrument(span.clone())
                    .await
            }
        };
        span.record("failed", outcome.failed);
        if let Some(f) = outcome.flagged.take() {
            t.flagged.push(f);
        }
        let end = match outcome.control.clone() {
            Control::Continue => None,
            Control::GiveUp(reason) => Some(t.fail(format!("gave up: {reason}"))),
            Control::Done(summary) => self.accept(t, summary, &mut outcome).await?,
            Control::Dispute(dispute) => self.disputed(t, *dispute, &mut outcome),
        };
        t.step += 1;
        let body = json!({"call_id": call.id, "tool": call.name, "failed": outcome.failed, "text": outcome.text});
        self.log(t.step, StepKind::Tool, &body)?;
        if let Some(end) = end {
            return Err(end);
        }
        t.stuck(&tools::action_key(call), &outcome.text, outcome.failed)?;
        let mut m = Message::new(Author::Tool, outcome.text);
        m.tool_call_id = Some(call.id.clone());
        t.messages.push(m);
        Ok(())
    }

    /// The checks run on what would land, and what lands: the references read, the line
    /// budget measured and, when the checks pass, the ratchet's weakenings found.
    async fn checked(&self, t: &mut Turns) -> Result<(acceptance::Report, Diff), LoopEnd> {
        // The checks run in the checkout, and the references are read from it.
        if !self.checks.is_empty() || !self.covers.is_empty() {
            self.tools
                .ready()
                .await
                .map_err(|e| t.fail(format!("bringing the checkout to its base: {e}")))?;
        }
        let restored = self
            .tools
            .restore_outside_scope()
            .await
            .map_err(|e| t.fail(format!("restoring the checkout: {e}")))?;
        let left = self.limits.wall.saturating_sub(t.started.elapsed());
        let mut report = acceptance::run(self.tools, self.checks, t.rounds, left).await;
        // An adopted project's failing tests that failed before this task do not gate it.
        baseline::excuse_known_failures(self.tools, self.checks, &mut report, t.rounds, left).await;
        report.restored = restored;
        report.references =
            references::unreferenced(&self.tools.root, &self.tools.scope, self.covers);
        // What lands is decided here, while the worker can still act on a refusal.
        let diff = self
            .tools
            .landing_diff()
            .await
            .map_err(|e| t.fail(format!("diff: {e}")))?;
        report.over_budget = budget::over_budget(self.tools, &diff, &t.flagged).await;
        if t.rounds > 1 {
            // Told once and not split: a file the base holds goes to the VCS, whose refusal
            // schedules its split task (design: runtime.megafile); a new one fails the round.
            report.over_budget.retain(|o| !o.existing);
        }
        if report.passed() {
            let left = self.limits.wall.saturating_sub(t.started.elapsed());
            report.weakened = ratchet::weakenings(
                self.tools,
                self.checks,
                &report.results,
                self.allowance,
                t.rounds,
                left,
            )
            .await;
        }
        Ok((report, diff))
    }

    /// After `done`: the checks run on what would land. Passing ends the attempt; the first
    /// failure goes back to the worker as `done`'s result; the second ends the attempt.
    async fn accept(
        &self,
        t: &mut Turns,
        summary: String,
        outcome: &mut ToolOutcome,
    ) -> Result<Option<LoopEnd>, LoopEnd> {
        t.rounds += 1;
        self.show(t, "acceptance checks".to_owned());
        let (report, diff) = self.checked(t).await?;
        t.step += 1;
        self.log(t.step, StepKind::Acceptance, &json!(report))?;
        if report.passed() {
            // Told, not left to guess (issue 38): what passed, and that the work lands now.
            outcome.text = passed_text(&report);
            return Ok(Some(LoopEnd::Done {
                summary,
                flagged: t.flagged.clone(),
                steps: t.step + 1,
                diff,
            }));
        }
        if t.rounds == 1 {
            outcome.failed = true;
            outcome.text = format!(
                "The acceptance checks failed:\n{}\n{}{}Fix the problem, then call `done` again.",
                report.failures(),
                informed_note(&report),
                restored_note(&report.restored)
            );
            return Ok(None);
        }
        outcome.failed = true;
        outcome.text = format!(
            "The acceptance checks failed again; the attempt ends here:\n{}",
            report.failures()
        );
        Ok(Some(LoopEnd::Failed {
            reason: report.summary(),
            flagged: t.flagged.clone(),
            checks: Some(report.failures()),
        }))
    }

    /// A dispute of one of the task's checks ends the attempt; one naming no check of the
    /// task goes back to the worker with their names.
    fn disputed(&self, t: &Turns, dispute: Dispute, outcome: &mut ToolOutcome) -> Option<LoopEnd> {
        if self.checks.iter().any(|c| c.name == dispute.check.trim()) {
            return Some(LoopEnd::Disputed {
                dispute: Box::new(Dispute {
                    check: dispute.check.trim().to_owned(),
                    ..dispute
                }),
                flagged: t.flagged.clone(),
            });
        }
        let names: Vec<String> = self
            .checks
            .iter()
            .map(|c| format!("`{}`", c.name))
            .collect();
        *outcome = ToolOutcome::error(if names.is_empty() {
            "this task has no checks to dispute".to_owned()
        } else {
            format!(
                "`{}` is not one of this task's checks; they are {}",
                dispute.check,
                names.join(", ")
            )
        });
        None
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
            .map_err(LoopEnd::Journal)
    }
}

/// Answers in a row without a tool call that are sent back (each told why) before the
/// attempt ends: a model's repair budget, as for a malformed call (design:
/// runtime.worker-protocol).
const MAX_PROSE_REPAIRS: u32 = 2;

/// What a worker that answered in prose is told: what it said (the start) and what to do.
fn prose_repair(text: &str) -> String {
    let said: String = text.trim().chars().take(200).collect();
    let said = if said.is_empty() {
        "nothing".to_owned()
    } else {
        format!("\"{said}\"")
    };
    format!(
        "Your last answer called no tool (it said {said}). Work happens only through tool calls: \
         read, write, edit or run to make progress, `done` when the task is complete, \
         `give_up` if it cannot be done. Answer with a tool call."
    )
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

/// A passing `done`'s answer: the checks that passed, and that the work is landing.
fn passed_text(report: &acceptance::Report) -> String {
    let names: Vec<&str> = report
        .results
        .iter()
        .filter(|r| r.result.success() || r.informs.is_none())
        .map(|r| r.name.as_str())
        .collect();
    let passed = match names.as_slice() {
        [] => "No acceptance check gates this task; the work is landing.".to_owned(),
        names => format!(
            "The acceptance checks passed ({}); the work is landing.",
            names.join(", ")
        ),
    };
    format!("{passed}{}", informed_note(report).trim_end())
}

/// The checks that failed for information only, as a paragraph (empty when none did).
fn informed_note(report: &acceptance::Report) -> String {
    match report.informed() {
        s if s.is_empty() => s,
        s => format!("\n{s}\n"),
    }
}
