//! The forced tool call every structured question of specc's goes through (the planner,
//! the coordinator, a re-plan, the merge agent, a reviewer): a request of a system prompt
//! and a JSON user message, answered by calling one tool forced by name (what makes even
//! small models answer in structure); the answer is parsed, checked, and repaired at most
//! [`ForcedCall::repairs`] times, each repair quoting the errors back to the model.
//! design: runtime.planner-protocol

use serde::de::DeserializeOwned;
use specc_ir::Diagnostic;
use specc_llm::types::Author;
use specc_llm::{Client, LlmError, Message, Request, Response, Role, Tool, ToolCall, ToolChoice};

use crate::spec_text::MAX_READS;

use crate::error::PlanError;

/// Repairs after the first answer, unless a call says otherwise.
pub const MAX_REPAIRS: usize = 2;

/// A request of `system` and the JSON `user` message, answered by calling `tool`, forced by
/// name.
pub fn request(system: &str, user: &serde_json::Value, tool: Tool, max_tokens: u32) -> Request {
    let mut r = Request::new(
        String::new(),
        vec![Message::system(system), Message::user(user.to_string())],
        max_tokens,
    );
    r.tool_choice = ToolChoice::Named(tool.name.clone());
    r.tools = vec![tool].into();
    r
}

/// An accepted answer.
#[derive(Debug)]
pub struct Asked<T> {
    pub answer: T,
    /// Model calls it took: 1, its repairs and its reads of the spec.
    pub calls: usize,
    /// Errors the repairs did not remove but the caller resolves another way (see
    /// [`ForcedCall::tolerate`]).
    pub unresolved: Vec<Diagnostic>,
}

/// The checks of an answer.
pub type Check<'a, T> = &'a (dyn Fn(&T) -> Vec<Diagnostic> + Sync);

/// Which errors an answer may keep once its repairs are spent.
pub type Tolerate<'a> = &'a (dyn Fn(&Diagnostic) -> bool + Sync);

/// One question: whom it goes to, the request and the tool that answers it, how the answer
/// is checked and how many repairs it gets.
pub struct ForcedCall<'a, T> {
    role: Role,
    /// Another model of the role's provider (a reviewer lens's own); `None`: the role's.
    model: Option<&'a str>,
    /// The task the call is made for (the ledger's `task`).
    task: &'a str,
    request: Request,
    tool: &'a str,
    repairs: usize,
    check: Check<'a, T>,
    tolerate: Tolerate<'a>,
    /// A tool the model may call to read before it answers, and how it is answered.
    reader: Option<(Tool, Reader<'a>)>,
}

/// Answers a reading tool's call.
pub type Reader<'a> = &'a (dyn Fn(&ToolCall) -> String + Sync);

fn no_problems<T>(_: &T) -> Vec<Diagnostic> {
    Vec::new()
}

fn nothing(_: &Diagnostic) -> bool {
    false
}

impl<'a, T: DeserializeOwned> ForcedCall<'a, T> {
    /// Asks `role` for `task` with `request`, answered by `tool`: no checks beyond the
    /// answer's shape, [`MAX_REPAIRS`] repairs, nothing tolerated.
    pub fn new(role: Role, task: &'a str, request: Request, tool: &'a str) -> ForcedCall<'a, T> {
        ForcedCall {
            role,
            model: None,
            task,
            request,
            tool,
            repairs: MAX_REPAIRS,
            check: &no_problems::<T>,
            tolerate: &nothing,
            reader: None,
        }
    }

    /// Lets the model call `tool` (answered by `read`) before it answers: the answer tool is
    /// then required rather than forced by name, and after [`MAX_READS`] reads it is
    /// forced. Reads are not repairs.
    pub fn reading(mut self, tool: Tool, read: Reader<'a>) -> Self {
        self.reader = Some((tool, read));
        self
    }

    /// Checks each answer with `check`: its errors are repaired.
    pub fn check(mut self, check: Check<'a, T>) -> Self {
        self.check = check;
        self
    }

    /// Once the repairs are spent, an answer whose only errors `tolerate` accepts is
    /// returned with them ([`Asked::unresolved`]).
    pub fn tolerate(mut self, tolerate: Tolerate<'a>) -> Self {
        self.tolerate = tolerate;
        self
    }

    /// At most `repairs` repairs after the first answer.
    pub fn repairs(mut self, repairs: usize) -> Self {
        self.repairs = repairs;
        self
    }

    /// Another model of the role's provider (`None`: the role's).
    pub fn model(mut self, model: Option<&'a str>) -> Self {
        self.model = model;
        self
    }

    /// Asks, parses the call of the tool (or a JSON text answer) into a `T`, checks it and
    /// repairs it, quoting the errors, until it passes or the repairs are spent.
    pub async fn ask(self, client: &Client) -> Result<Asked<T>, PlanError> {
        let mut req = self.request.clone();
        if let Some((tool, _)) = &self.reader {
            let mut tools = req.tools.to_vec();
            tools.insert(0, tool.clone());
            req.tools = tools.into();
            req.tool_choice = ToolChoice::Required;
        }
        let mut calls = 0;
        let mut reads = 0;
        loop {
            calls += 1;
            let response = match client
                .call_model(self.role, self.model, self.task, req.clone())
                .await
            {
                Ok(r) => r,
                // Cheap models often break a tool call's JSON: that is a mistake to repair,
                // within the same budget, not a failed answer.
                Err(LlmError::MalformedToolCall {
                    name,
                    arguments,
                    reason,
                }) if calls <= self.repairs => {
                    req.messages
                        .push(Message::user(self.unreadable(&name, &arguments, &reason)));
                    continue;
                }
                Err(e) => return Err(PlanError::Model(e)),
            };
            if self.read(&mut req, &response, &mut reads) {
                calls -= 1; // a read is not an answer: it spends no repair
                continue;
            }
            // Every call is counted, reads too: they are paid for like answers.
            let made = calls + reads;
            let problems = match parse::<T>(&response, self.tool) {
                Ok(answer) => {
                    let errors: Vec<Diagnostic> = (self.check)(&answer)
                        .into_iter()
                        .filter(|d| d.is_error())
                        .collect();
                    let tolerated = calls > self.repairs && errors.iter().all(self.tolerate);
                    if errors.is_empty() || tolerated {
                        return Ok(Asked {
                            answer,
                            calls: made,
                            unresolved: errors,
                        });
                    }
                    errors
                }
                Err(e) => vec![
                    Diagnostic::new(specc_ir::codes::PLANNING_FAILED, e.to_string()).with_help(
                        format!(
                            "answer by calling {} with arguments in its schema",
                            self.tool
                        ),
                    ),
                ],
            };
            if calls > self.repairs {
                return Err(PlanError::Invalid {
                    task: self.task.to_owned(),
                    problems,
                });
            }
            self.repair(&mut req, &response, &problems);
        }
    }

    /// Answers the response's reading calls, when it made some and no answer: the calls
    /// and their results join the conversation. After [`MAX_READS`] reads the answer tool
    /// is forced by name. Whether it read.
    fn read(&self, req: &mut Request, response: &Response, reads: &mut usize) -> bool {
        let Some((tool, read)) = &self.reader else {
            return false;
        };
        let asked: Vec<&ToolCall> = response
            .tool_calls
            .iter()
            .filter(|c| c.name == tool.name)
            .collect();
        if asked.is_empty() || response.tool_calls.iter().any(|c| c.name == self.tool) {
            return false;
        }
        *reads += 1;
        let mut said = Message::new(Author::Assistant, response.text.clone());
        said.tool_calls = response.tool_calls.clone();
        req.messages.push(said);
        for call in &response.tool_calls {
            let text = if call.name == tool.name {
                read(call)
            } else {
                format!(
                    "`{}` is not a tool here: read, or answer with {}",
                    call.name, self.tool
                )
            };
            let mut m = Message::new(Author::Tool, text);
            m.tool_call_id = Some(call.id.clone());
            req.messages.push(m);
        }
        if *reads >= MAX_READS {
            req.messages.push(Message::user(format!(
                "You have read enough: answer now by calling {}.",
                self.tool
            )));
            req.tool_choice = ToolChoice::Named(self.tool.to_owned());
        }
        true
    }

    /// What the model is told when its call's arguments are not JSON.
    fn unreadable(&self, name: &str, arguments: &str, reason: &str) -> String {
        let cut: String = arguments.chars().take(300).collect();
        format!(
            "Your call of {name} could not be read: its arguments are not JSON ({reason}). \
             They began: {cut}\nCall {} again with arguments that are one JSON object in its \
             schema.",
            self.tool
        )
    }

    /// Adds the answer and the errors it must repair to the conversation: as the tool's
    /// result when the model called a tool, else as a user message.
    fn repair(&self, req: &mut Request, response: &Response, problems: &[Diagnostic]) {
        let mut said = Message::new(Author::Assistant, response.text.clone());
        said.tool_calls = response.tool_calls.clone();
        req.messages.push(said);
        let repair = format!(
            "Your answer is not valid:\n{}\nCall {} again with a corrected answer.",
            problems
                .iter()
                .map(|d| match &d.help {
                    Some(help) => format!("- {}: {} ({help})", d.code, d.message),
                    None => format!("- {}: {}", d.code, d.message),
                })
                .collect::<Vec<_>>()
                .join("\n"),
            self.tool
        );
        match response.tool_calls.first() {
            Some(call) => {
                let mut m = Message::new(Author::Tool, repair);
                m.tool_call_id = Some(call.id.clone());
                req.messages.push(m);
            }
            None => req.messages.push(Message::user(repair)),
        }
    }
}

/// Why an answer could not be read: told to the model, which repairs it.
#[derive(Debug)]
enum Unreadable<'a> {
    /// No call of the tool, and the text is not JSON either.
    NoCall {
        tool: &'a str,
        error: serde_json::Error,
    },
    /// The arguments do not have the answer's shape.
    Schema(serde_json::Error),
}

impl std::fmt::Display for Unreadable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unreadable::NoCall { tool, error } => {
                write!(f, "no {tool} call, and the text is not JSON: {error}")
            }
            Unreadable::Schema(e) => write!(f, "the answer does not match the schema: {e}"),
        }
    }
}

/// The answer in a response: the `tool` call's arguments, or JSON text.
fn parse<'a, T: DeserializeOwned>(response: &Response, tool: &'a str) -> Result<T, Unreadable<'a>> {
    let value = match response.tool_calls.iter().find(|c| c.name == tool) {
        Some(call) => call.arguments.clone(),
        None => serde_json::from_str(response.text.trim())
            .map_err(|error| Unreadable::NoCall { tool, error })?,
    };
    serde_json::from_value(value).map_err(Unreadable::Schema)
}
