//! A book of hand-written answers, a scripted provider for `specc build`: the planner's
//! answer for each planned task, the re-planner's, and each worker's tool calls, attempt by
//! attempt and step by step. The tests use it, and so does the example recorder
//! (`cargo run -p specc-tests --example record-example`), which turns a book into a
//! recording. The answers are written by people, as a model would answer: they show the
//! pipeline works, not that a model can do the task.
//!
//! The book is JSON:
//! ```json
//! {"planner": {"": <PlannerAnswer>, "replan:<task>": {"instructions": "…"},
//!              "replan-parent:<task>": {"instructions": "…", "acceptance": […], "reason": "…"}},
//!  "workers": {"<task>": [[<step>, …], …]},
//!  "merger": {"<task>": [{"content": "…", "explanation": "…"}, …]},
//!  "reviewer": {"<task>": {"<lens>": {"findings": […]}}},
//!  "coordinator": {"<decision id>": {"decision": "…", "rationale": "…"}}}
//! ```
//! A step is a list of tool calls `{"name": …, "arguments": {…}}`, or
//! `{"malformed": "<tool>"}` (arguments that are not JSON), `{"text": "…"}` (no call), or
//! `{"parked_secs": N, "then": <step>}` (the provider asks to wait N seconds, the first time
//! this step is asked; `then` answers it afterwards).
//! A worker's attempt is recognised by a request with no assistant message yet. The merge
//! agent's answers for a conflicted submission of a task are served in order, the last
//! repeated; so are a planner key's answers when the key holds a list.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use specc_llm::types::{Author, FinishReason};
use specc_llm::{BoxFuture, LlmError, Provider, Request, Response, ToolCall, ToolChoice, Usage};

pub struct AnswerBook {
    book: Value,
    /// Attempts started per worker task.
    attempts: Mutex<HashMap<String, usize>>,
    /// Requests answered, by task (the planner's as `plan:<task>`).
    seen: Mutex<Vec<String>>,
    /// Steps that already answered "parked" once.
    parked: Mutex<std::collections::HashSet<String>>,
    /// The JSON user message of every forced call (planner, re-planner, coordinator, …),
    /// with the tool it forced, in order.
    asked: Mutex<Vec<(String, Value)>>,
    /// Every request answered, as JSON: what a model would have been sent.
    requests: Mutex<Vec<String>>,
}

impl AnswerBook {
    pub fn new(book: Value) -> AnswerBook {
        AnswerBook {
            book,
            attempts: Mutex::new(HashMap::new()),
            seen: Mutex::new(Vec::new()),
            parked: Mutex::new(std::collections::HashSet::new()),
            asked: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
        }
    }

    /// Every request answered so far, as JSON.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// The JSON user messages of the forced calls of `tool` answered so far, in order.
    pub fn asked(&self, tool: &str) -> Vec<Value> {
        self.asked
            .lock()
            .map(|a| {
                a.iter()
                    .filter(|(t, _)| t == tool)
                    .map(|(_, v)| v.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The tasks of the requests answered so far, in order.
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }

    fn answer(&self, request: &Request) -> Result<Response, LlmError> {
        if let (Ok(mut all), Ok(json)) = (self.requests.lock(), serde_json::to_string(request)) {
            all.push(json);
        }
        let miss = |what: String| LlmError::Protocol(format!("the answer book has no {what}"));
        if let ToolChoice::Named(tool) = &request.tool_choice {
            let user: Value = request
                .messages
                .iter()
                .find(|m| m.author == Author::User)
                .and_then(|m| serde_json::from_str(&m.text).ok())
                .unwrap_or(Value::Null);
            if let Ok(mut asked) = self.asked.lock() {
                asked.push((tool.clone(), user.clone()));
            }
            if tool == "merge_decisions" {
                // The coordinator: the book's merge for the question's id.
                let id = user["id"].as_str().unwrap_or_default();
                self.note(format!("coordinate:{id}"));
                let args = self.book["coordinator"][id].clone();
                if args.is_null() {
                    return Err(miss(format!("coordinator answer for `{id}`")));
                }
                return Ok(respond(request, vec![call(tool, args, 0)], 60));
            }
            if tool == "submit_review" {
                // A reviewer: the book's verdict for the task and lens, or no findings.
                let task = user["task"]["id"].as_str().unwrap_or_default();
                let lens = user["view"]["lens"].as_str().unwrap_or_default();
                self.note(format!("review:{lens}:{task}"));
                let verdict = self.book["reviewer"][task][lens].clone();
                let args = if verdict.is_null() {
                    serde_json::json!({"findings": []})
                } else {
                    verdict
                };
                return Ok(respond(request, vec![call(tool, args, 0)], 80));
            }
            if tool == "submit_resolution" {
                // The merge agent: the book's answers for the submitting task, in order.
                let task = user["submitted"]["task"].as_str().unwrap_or_default();
                let key = format!("merge:{task}");
                let n = self.seen().iter().filter(|s| **s == key).count();
                self.note(key);
                let answers = &self.book["merger"][task];
                let args = answers
                    .get(n)
                    .or_else(|| answers.as_array().and_then(|a| a.last()))
                    .cloned()
                    .ok_or_else(|| miss(format!("merger answer for `{task}`")))?;
                return Ok(respond(request, vec![call(tool, args, 0)], 100));
            }
            let task = user["task"]["id"].as_str().unwrap_or_default().to_owned();
            let key = match tool.as_str() {
                // The parent's re-plan after an exhausted ladder carries every failure.
                "replan_task" if user.get("failures").is_some() => {
                    format!("replan-parent:{task}")
                }
                "replan_task" => format!("replan:{task}"),
                _ => task.clone(),
            };
            let n = self
                .seen()
                .iter()
                .filter(|s| **s == format!("plan:{key}"))
                .count();
            self.note(format!("plan:{key}"));
            // A list answers in order, its last repeated.
            let args = match self.book["planner"].get(&key) {
                Some(Value::Array(list)) => list.get(n).or(list.last()).cloned(),
                other => other.cloned(),
            }
            .ok_or_else(|| miss(format!("planner answer for `{key}`")))?;
            return Ok(respond(request, vec![call(tool, args, 0)], 300));
        }
        let task = worker_task(request).ok_or_else(|| miss("task in this request".into()))?;
        let step = turns(request);
        let attempt = {
            let mut a = self.attempts.lock().map_err(|_| miss("lock".into()))?;
            let n = a.entry(task.clone()).or_insert(0);
            if step == 0 {
                *n += 1;
            }
            *n
        };
        self.note(format!("{task}#{attempt}.{step}"));
        let mut entry = self.book["workers"][&task][attempt.saturating_sub(1)][step].clone();
        if let Some(secs) = entry.get("parked_secs").and_then(Value::as_u64) {
            let first = self
                .parked
                .lock()
                .map_err(|_| miss("lock".into()))?
                .insert(format!("{task}#{attempt}.{step}"));
            if first {
                return Err(LlmError::Parked {
                    retry_after: std::time::Duration::from_secs(secs),
                });
            }
            entry = entry["then"].clone();
        }
        if entry.is_null() {
            return Err(miss(format!(
                "answer for `{task}` attempt {attempt} step {step}"
            )));
        }
        if let Some(tool) = entry.get("malformed").and_then(Value::as_str) {
            return Err(LlmError::MalformedToolCall {
                name: tool.to_owned(),
                arguments: "{\"path\": \"src/".to_owned(),
                reason: "EOF while parsing a string".to_owned(),
            });
        }
        if let Some(text) = entry.get("text").and_then(Value::as_str) {
            let mut r = respond(request, Vec::new(), 50);
            r.text = text.to_owned();
            return Ok(r);
        }
        let calls = entry
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        call(
                            c["name"].as_str().unwrap_or_default(),
                            c["arguments"].clone(),
                            step * 10 + i,
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        Ok(respond(request, calls, 200))
    }

    fn note(&self, what: String) {
        if let Ok(mut s) = self.seen.lock() {
            s.push(what);
        }
    }
}

/// Model turns already taken in a worker's conversation: each assistant message, and each
/// user message that follows no assistant message (the answer to a malformed call), after
/// the first.
fn turns(request: &Request) -> usize {
    let mut n = 0usize;
    let mut prev = Author::System;
    for m in &request.messages {
        if m.author == Author::Assistant || (m.author == Author::User && prev != Author::Assistant)
        {
            n += 1;
        }
        prev = m.author;
    }
    n.saturating_sub(1)
}

/// The task of a worker request: its user message starts ``# Task `<id>` ``.
fn worker_task(request: &Request) -> Option<String> {
    let user = request.messages.iter().find(|m| m.author == Author::User)?;
    let rest = user.text.strip_prefix("# Task `")?;
    Some(rest[..rest.find('`')?].to_owned())
}

fn call(name: &str, arguments: Value, n: usize) -> ToolCall {
    ToolCall {
        id: format!("call_{n}"),
        name: name.to_owned(),
        arguments,
    }
}

/// A response with usage derived from the request's size, so it is the same every run.
fn respond(request: &Request, calls: Vec<ToolCall>, output: u64) -> Response {
    // Counted as a provider counts: the messages and the tools' schemas it was sent.
    let tools: usize = request
        .tools
        .iter()
        .map(|t| t.name.len() + t.description.len() + t.parameters.to_string().len())
        .sum();
    let chars: usize = request.messages.iter().map(|m| m.text.len()).sum::<usize>() + tools;
    Response {
        text: String::new(),
        finish: if calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        },
        tool_calls: calls,
        usage: Usage {
            input: (chars / 4) as u64 + 200,
            cached_input: 0,
            output,
        },
        model: request.model.clone(),
        usage_estimated: false,
    }
}

impl Provider for AnswerBook {
    fn name(&self) -> &str {
        "answer-book"
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        let answer = self.answer(request);
        Box::pin(async move { answer })
    }
}
