//! A scripted fake for tests: answers with the outcomes it was given, in order, and keeps
//! every request it saw. Compiled only with the `testing` feature, which only tests and
//! benchmarks enable (design: llm.test-fakes).

use std::collections::VecDeque;
use std::sync::Mutex;

use crate::error::LlmError;
use crate::provider::{BoxFuture, Provider};
use crate::types::{Request, Response, Usage};

pub struct Scripted {
    name: String,
    script: Mutex<VecDeque<Result<Response, LlmError>>>,
    seen: Mutex<Vec<Request>>,
}

impl Scripted {
    pub fn new(name: impl Into<String>, script: Vec<Result<Response, LlmError>>) -> Scripted {
        Scripted {
            name: name.into(),
            script: Mutex::new(script.into()),
            seen: Mutex::new(Vec::new()),
        }
    }

    /// A plain text answer with the given usage.
    pub fn text(text: &str, usage: Usage) -> Response {
        Response::text("scripted", text, usage)
    }

    /// The requests received so far.
    pub fn requests(&self) -> Vec<Request> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Provider for Scripted {
    fn name(&self) -> &str {
        &self.name
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(request.clone());
        }
        let next = self.script.lock().ok().and_then(|mut s| s.pop_front());
        Box::pin(async move {
            next.unwrap_or_else(|| Err(LlmError::Protocol("the script has no more answers".into())))
        })
    }
}
