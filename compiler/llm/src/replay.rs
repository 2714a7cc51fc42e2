//! Record and replay: responses stored by request fingerprint, for deterministic tests and
//! offline demos. A recording holds the request and the response, never a key: requests are
//! plain data, and keys live only in the HTTP layer.
//! design: llm.replay

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::error::LlmError;
use crate::provider::{BoxFuture, Provider};
use crate::types::{Author, Request, Response};

/// The fingerprint of a request: blake3 over its JSON form (every field, in a fixed order;
/// JSON objects inside, such as tool schemas, have sorted keys), first 16 hex digits.
pub fn fingerprint(request: &Request) -> String {
    let json = serde_json::to_vec(request).unwrap_or_default();
    blake3::hash(&json).to_hex()[..16].to_owned()
}

/// The fingerprint of a request with the text of its tool results left out: what a
/// conversation said and asked, without what its commands printed. A worker's `run` prints
/// timings and temporary paths that differ on every run, so a recorded conversation is
/// found by this when its exact fingerprint is not (design: llm.replay).
pub fn loose_fingerprint(request: &Request) -> String {
    let mut r = request.clone();
    for m in r.messages.iter_mut().filter(|m| m.author == Author::Tool) {
        m.text.clear();
    }
    fingerprint(&r)
}

/// A few words naming a request in messages: model and the start of the last user message.
pub(crate) fn summary(request: &Request) -> String {
    let last = request
        .messages
        .iter()
        .rev()
        .find(|m| m.author == Author::User)
        .map(|m| m.text.chars().take(60).collect::<String>())
        .unwrap_or_default();
    format!(
        "model {}, last user message \"{}\"",
        request.model,
        last.replace('\n', " ")
    )
}

/// One line of a recording file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Recording {
    pub fingerprint: String,
    pub request: Request,
    pub response: Response,
}

/// Serves recorded responses: by exact fingerprint, else by loose fingerprint when that
/// names one recorded response only. A request with neither is `LlmError::ReplayMiss`.
pub struct Replay {
    name: String,
    by_fingerprint: HashMap<String, Response>,
    /// By loose fingerprint; `None` where two recorded requests share one.
    by_loose: HashMap<String, Option<Response>>,
}

impl Replay {
    /// Reads a recording file (JSON lines). A missing file is an empty recording.
    pub fn open(name: impl Into<String>, path: &Path) -> Result<Replay, LlmError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(LlmError::Config(format!("{}: {e}", path.display()))),
        };
        let mut by_fingerprint = HashMap::new();
        let mut by_loose: HashMap<String, Option<Response>> = HashMap::new();
        for (i, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            let r: Recording = serde_json::from_str(line).map_err(|e| {
                LlmError::Config(format!(
                    "{}:{}: not a recording: {e}",
                    path.display(),
                    i + 1
                ))
            })?;
            by_loose
                .entry(loose_fingerprint(&r.request))
                .and_modify(|seen| {
                    if seen.as_ref() != Some(&r.response) {
                        *seen = None;
                    }
                })
                .or_insert_with(|| Some(r.response.clone()));
            by_fingerprint.insert(r.fingerprint, r.response);
        }
        Ok(Replay {
            name: name.into(),
            by_fingerprint,
            by_loose,
        })
    }

    pub fn len(&self) -> usize {
        self.by_fingerprint.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_fingerprint.is_empty()
    }
}

impl Provider for Replay {
    fn name(&self) -> &str {
        &self.name
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        let fp = fingerprint(request);
        let found = self.by_fingerprint.get(&fp).cloned().or_else(|| {
            let loose = self.by_loose.get(&loose_fingerprint(request))?.clone();
            if loose.is_some() {
                tracing::debug!(fingerprint = %fp, "replayed by the loose fingerprint");
            }
            loose
        });
        Box::pin(async move {
            found.ok_or_else(|| LlmError::ReplayMiss {
                fingerprint: fp,
                request: summary(request),
            })
        })
    }
}

/// Wraps a provider and appends every successful exchange to a recording file.
pub struct Recorder {
    inner: Arc<dyn Provider>,
    path: PathBuf,
    lock: Mutex<()>,
    failures: RecordFailures,
}

/// Exchanges a recorder could not write, shared by the recorders of one client: the count
/// and the first error. A failed write never fails the call — the answer is paid for and
/// used — so the caller reads this afterwards and warns.
#[derive(Clone, Debug, Default)]
pub struct RecordFailures(Arc<Mutex<(usize, Option<String>)>>);

impl RecordFailures {
    fn add(&self, error: String) {
        if let Ok(mut f) = self.0.lock() {
            f.0 += 1;
            f.1.get_or_insert(error);
        }
    }

    /// How many exchanges were not recorded, and why the first was not; `None` if all were.
    pub fn get(&self) -> Option<(usize, String)> {
        let f = self.0.lock().ok()?;
        (f.0 > 0).then(|| (f.0, f.1.clone().unwrap_or_default()))
    }
}

impl Recorder {
    pub fn new(inner: Arc<dyn Provider>, path: impl Into<PathBuf>) -> Recorder {
        Recorder::sharing(inner, path, RecordFailures::default())
    }

    /// A recorder that counts its failed writes in `failures`.
    pub fn sharing(
        inner: Arc<dyn Provider>,
        path: impl Into<PathBuf>,
        failures: RecordFailures,
    ) -> Recorder {
        Recorder {
            inner,
            path: path.into(),
            lock: Mutex::new(()),
            failures,
        }
    }

    /// The exchanges this recorder (and those sharing its count) could not write.
    pub fn failures(&self) -> RecordFailures {
        self.failures.clone()
    }

    fn append(&self, request: &Request, response: &Response) -> Result<(), LlmError> {
        let line = serde_json::to_string(&Recording {
            fingerprint: fingerprint(request),
            request: request.clone(),
            response: response.clone(),
        })
        .map_err(|e| LlmError::Protocol(e.to_string()))?;
        let _guard = self
            .lock
            .lock()
            .map_err(|_| LlmError::Config("recorder lock".into()))?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| LlmError::Config(e.to_string()))?;
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| LlmError::Config(format!("{}: {e}", self.path.display())))?;
        writeln!(f, "{line}").map_err(|e| LlmError::Config(e.to_string()))
    }
}

impl Provider for Recorder {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        Box::pin(async move {
            let response = match self.inner.complete(request).await {
                Ok(r) => r,
                Err(e) => {
                    // A malformed tool call is an answer the caller repairs: the recording
                    // cannot hold it, so a replay would stop here. Say so.
                    if let LlmError::MalformedToolCall { name, .. } = &e {
                        self.failures.add(format!(
                            "a call of {name} with arguments that are not JSON is not recorded"
                        ));
                    }
                    return Err(e);
                }
            };
            // The answer is paid for: a recording that cannot be written is a warning for
            // the caller (`failures`), never a failed call.
            if let Err(e) = self.append(request, &response) {
                tracing::warn!(path = %self.path.display(), error = %e, "an exchange was not recorded");
                self.failures.add(format!("{}: {e}", self.path.display()));
            }
            Ok(response)
        })
    }
}
