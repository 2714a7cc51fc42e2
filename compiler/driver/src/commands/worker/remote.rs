//! The worker's side of `specc serve`'s HTTP API (`serve/http.rs`): claims, heartbeats,
//! ends and releases, and the replica's upstream (`HttpUpstream`): submissions under the
//! claim of their task, fetches and flags; the same claims hold the model calls against
//! the serve's budget and record them in its ledger (`BudgetGate`). The bearer token goes in every request's header
//! and nowhere else.
//! design: state.deployment
//! design: vcs.replica

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use specc_llm::{BoxFuture, BudgetGate, CallRow, LlmError};
use specc_runtime::wire::{ClaimAnswer, FinishRequest, JournalRequest, SubmitRequest, Token};
use specc_vcs::object::ObjectId;
use specc_vcs::{Boxed, Bundle, Outcome, Submission, Upstream, UpstreamError};

/// Why a request to `specc serve` failed.
#[derive(Debug)]
pub(super) enum RemoteError {
    /// The HTTP client could not be made.
    Client(reqwest::Error),
    /// The serve at `base` could not be reached (reqwest's words, without the URL).
    Unreachable { base: String, why: String },
    /// The serve refused the token.
    Token { base: String },
    /// The serve answered with an error status.
    Status {
        base: String,
        status: reqwest::StatusCode,
        body: String,
    },
    /// The answer's body could not be read or decoded (reqwest's words, without the URL).
    Body(String),
    /// The claim's token no longer holds.
    Fenced,
    /// A bundle that does not decode.
    DamagedBundle,
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoteError::Client(e) => write!(f, "{e}"),
            RemoteError::Unreachable { base, why } => write!(f, "specc serve at {base}: {why}"),
            RemoteError::Token { base } => write!(
                f,
                "specc serve at {base} refused the token (SPECC_SERVE_TOKEN)"
            ),
            RemoteError::Status { base, status, body } => {
                write!(f, "specc serve at {base}: {status}: {body}")
            }
            RemoteError::Body(why) => write!(f, "{why}"),
            RemoteError::Fenced => write!(f, "fenced: the claim's lease is lost"),
            RemoteError::DamagedBundle => write!(f, "a damaged bundle"),
        }
    }
}

/// How a write for a claim was answered.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Answered {
    Ok,
    /// The claim's token no longer holds: its lease expired or another worker has the task.
    Fenced,
}

pub(super) struct Remote {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl Remote {
    pub(super) fn new(base: &str, token: String) -> Result<Remote, RemoteError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(300))
            .build()
            .map_err(RemoteError::Client)?;
        Ok(Remote {
            http,
            base: base.trim_end_matches('/').to_owned(),
            token,
        })
    }

    /// Sends `req` with the token; any answer is returned as it came: only a failure to
    /// reach the serve is an error.
    async fn transport(
        &self,
        req: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, RemoteError> {
        req.bearer_auth(&self.token)
            .send()
            .await
            .map_err(|e| RemoteError::Unreachable {
                base: self.base.clone(),
                why: without_url(&e),
            })
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> Result<reqwest::Response, RemoteError> {
        let r = self.transport(req).await?;
        match r.status() {
            s if s.is_success() || s == reqwest::StatusCode::CONFLICT => Ok(r),
            reqwest::StatusCode::UNAUTHORIZED => Err(RemoteError::Token {
                base: self.base.clone(),
            }),
            status => Err(RemoteError::Status {
                base: self.base.clone(),
                status,
                body: r.text().await.unwrap_or_default(),
            }),
        }
    }

    async fn post<T: serde::Serialize>(
        &self,
        path: &str,
        body: &T,
    ) -> Result<reqwest::Response, RemoteError> {
        let req = self.http.post(format!("{}{path}", self.base)).json(body);
        self.send(req).await
    }

    /// POSTs `body`, the answer as it came ([`Remote::transport`]).
    async fn post_raw<T: serde::Serialize>(
        &self,
        path: &str,
        body: &T,
    ) -> Result<reqwest::Response, RemoteError> {
        let req = self.http.post(format!("{}{path}", self.base)).json(body);
        self.transport(req).await
    }

    async fn write<T: serde::Serialize>(
        &self,
        path: &str,
        body: &T,
    ) -> Result<Answered, RemoteError> {
        let r = self.post(path, body).await?;
        Ok(if r.status() == reqwest::StatusCode::CONFLICT {
            Answered::Fenced
        } else {
            Answered::Ok
        })
    }

    /// The build's run id and the lease.
    pub(super) async fn hello(&self) -> Result<(String, Duration), RemoteError> {
        #[derive(serde::Deserialize)]
        struct Hello {
            run: String,
            lease_ms: u64,
        }
        let r = self
            .send(self.http.get(format!("{}/v1/build", self.base)))
            .await?;
        let h: Hello = r
            .json()
            .await
            .map_err(|e| RemoteError::Body(without_url(&e)))?;
        Ok((h.run, Duration::from_millis(h.lease_ms)))
    }

    /// Claims a leaf; the serve may hold the request up to `wait` until one is offered.
    pub(super) async fn claim(
        &self,
        holder: &str,
        wait: Duration,
    ) -> Result<ClaimAnswer, RemoteError> {
        let body = serde_json::json!({"holder": holder, "wait_ms": wait.as_millis() as u64});
        let r = self.post("/v1/claim", &body).await?;
        r.json()
            .await
            .map_err(|e| RemoteError::Body(without_url(&e)))
    }

    pub(super) async fn heartbeat(&self, t: &Token) -> Result<Answered, RemoteError> {
        self.write("/v1/heartbeat", t).await
    }

    /// Sends the claim's journaled steps to serve's journal.
    pub(super) async fn journal(&self, j: &JournalRequest) -> Result<Answered, RemoteError> {
        self.write("/v1/journal", j).await
    }

    pub(super) async fn finish(&self, f: &FinishRequest) -> Result<Answered, RemoteError> {
        self.write("/v1/finish", f).await
    }

    pub(super) async fn release(&self, t: &Token) -> Result<Answered, RemoteError> {
        self.write("/v1/release", t).await
    }

    async fn bytes(&self, path: &str, body: &serde_json::Value) -> Result<Vec<u8>, RemoteError> {
        let r = self.post(path, body).await?;
        if r.status() == reqwest::StatusCode::CONFLICT {
            return Err(RemoteError::Fenced);
        }
        Ok(r.bytes()
            .await
            .map_err(|e| RemoteError::Body(without_url(&e)))?
            .to_vec())
    }
}

/// reqwest's errors name the URL; ours already does.
fn without_url(e: &reqwest::Error) -> String {
    let mut s = e.to_string();
    if let Some(url) = e.url() {
        s = s.replace(&format!(" ({url})"), "");
    }
    s
}

/// The replica's upstream: submissions go under the claim that holds their task.
pub(super) struct HttpUpstream {
    pub(super) remote: Arc<Remote>,
    /// The claims running here, by task and attempt: a worker cut off past its lease may be
    /// handed its own task again as the next attempt while the old one still runs.
    tokens: Mutex<HashMap<(String, i64), Token>>,
    /// Tasks whose model calls could not be held because serve could not be asked: their
    /// attempts' ends are not the budget's, and their claims are released.
    unheld: Mutex<std::collections::HashSet<(String, i64)>>,
    /// Numbers the rows recorded at serve, so that a record sent again after a lost answer
    /// is counted once.
    rows: std::sync::atomic::AtomicU64,
    holder: String,
}

impl HttpUpstream {
    pub(super) fn new(remote: Arc<Remote>, holder: &str) -> HttpUpstream {
        HttpUpstream {
            remote,
            tokens: Mutex::default(),
            unheld: Mutex::default(),
            rows: std::sync::atomic::AtomicU64::new(0),
            // Rows are numbered from 0 in each process: the start time keeps a restarted
            // worker's (same host, same pid) apart from its predecessor's.
            holder: format!(
                "{holder}@{}",
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos())
            ),
        }
    }

    /// Submissions and calls for `t.task` go under `t` until [`HttpUpstream::drop_claim`].
    pub(super) fn hold(&self, t: &Token) {
        if let Ok(mut m) = self.tokens.lock() {
            m.insert((t.task.clone(), t.attempt), t.clone());
        }
    }

    /// Forgets claim `t`; whether a call of its task could not be held for want of serve.
    pub(super) fn drop_claim(&self, t: &Token) -> bool {
        if let Ok(mut m) = self.tokens.lock() {
            m.remove(&(t.task.clone(), t.attempt));
        }
        self.unheld
            .lock()
            .is_ok_and(|mut u| u.remove(&(t.task.clone(), t.attempt)))
    }

    /// The claim a submission goes under: its task's (the coordinator's `coordinate:TASK`
    /// goes under TASK's), of the attempt its idempotency key names (`RUN@ATTEMPT/…`, the
    /// run the claim handed out).
    fn token_of(&self, s: &Submission) -> Option<Token> {
        let attempt: i64 = s
            .idempotency_key
            .split('/')
            .next()?
            .rsplit_once('@')?
            .1
            .parse()
            .ok()?;
        // The coordinator submits for the task it settled decisions in.
        let task = s.task.strip_prefix("coordinate:").unwrap_or(&s.task);
        let m = self.tokens.lock().ok()?;
        m.get(&(task.to_owned(), attempt)).cloned()
    }

    /// The claim a model call of `label` is made under: its task's (`t`), or the task a
    /// review or merge of it names (`review:LENS:t`, `merge:t`), the newest attempt first;
    /// else any claim running here (a coordinator's call names a decision, not a task).
    fn token_for(&self, label: &str) -> Option<Token> {
        let m = self.tokens.lock().ok()?;
        let names = |t: &str| {
            label == t
                || label
                    .strip_suffix(t)
                    .is_some_and(|rest| rest.ends_with(':'))
        };
        m.values()
            .filter(|t| names(&t.task))
            .max_by_key(|t| t.attempt)
            .or_else(|| m.values().max_by_key(|t| t.attempt))
            .cloned()
    }
}

/// The build's budget and ledger are the serve's (`serve/budget.rs`): each call is held
/// there under its task's claim, and its rows are recorded there.
impl BudgetGate for HttpUpstream {
    fn hold<'a>(&'a self, task: &'a str, dollars: f64) -> BoxFuture<'a, Result<u64, LlmError>> {
        Box::pin(async move {
            let token = self.token_for(task).ok_or_else(|| {
                LlmError::Halted(format!("no claim of this worker holds `{task}`"))
            })?;
            // Serve could not be asked: the call cannot go out, and the attempt's end is not
            // the budget's (its claim is released for another try).
            let unheld = |why: String| {
                if let Ok(mut u) = self.unheld.lock() {
                    u.insert((token.task.clone(), token.attempt));
                }
                LlmError::Halted(why)
            };
            let unreached = |e: RemoteError| unheld(e.to_string());
            let body = serde_json::json!({"token": token, "dollars": dollars});
            let r = self
                .remote
                .post_raw("/v1/budget/hold", &body)
                .await
                .map_err(unreached)?;
            let status = r.status();
            let text = r.text().await.unwrap_or_default();
            let answer: serde_json::Value =
                serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
            match status {
                s if s.is_success() => answer["hold"].as_u64().ok_or_else(|| {
                    LlmError::Halted("specc serve answered a hold without one".to_owned())
                }),
                reqwest::StatusCode::CONFLICT => Err(LlmError::Halted(
                    "the claim is lost (its lease expired), or the build is stopping".to_owned(),
                )),
                reqwest::StatusCode::PAYMENT_REQUIRED => Err(LlmError::Budget {
                    cap: answer["cap"].as_f64().unwrap_or(0.0),
                    committed: answer["committed"].as_f64().unwrap_or(0.0),
                    needed: answer["needed"].as_f64().unwrap_or(dollars),
                }),
                s if s.is_server_error() => Err(unheld(format!("specc serve: {s}: {text}"))),
                s => Err(LlmError::Halted(format!(
                    "specc serve refused a hold: {s}: {text}"
                ))),
            }
        })
    }

    fn record<'a>(&'a self, row: &'a CallRow, hold: Option<u64>) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let n = self.rows.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let id = format!("{}/{n}", self.holder);
            let body = serde_json::json!({"row": row, "hold": hold, "id": id});
            let mut failed = None;
            for pause in [0, 200, 1000, 5000] {
                tokio::time::sleep(Duration::from_millis(pause)).await;
                match self.remote.post("/v1/budget/record", &body).await {
                    Ok(_) => return,
                    Err(e) => failed = Some(e),
                }
            }
            tracing::error!(
                error = %failed.map(|e| e.to_string()).unwrap_or_default(),
                task = %row.task,
                dollars = row.dollars,
                "a model call's row did not reach specc serve's ledger"
            );
        })
    }

    fn release(&self, hold: u64) {
        let remote = self.remote.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                let body = serde_json::json!({ "hold": hold });
                if let Err(e) = remote.post("/v1/budget/release", &body).await {
                    tracing::warn!(error = %e, "a budget hold's release did not reach specc serve");
                }
            });
        }
    }
}

impl Upstream for HttpUpstream {
    fn submit<'a>(
        &'a self,
        s: &'a Submission,
        have: ObjectId,
    ) -> Boxed<'a, Result<(Outcome, Bundle), UpstreamError>> {
        Box::pin(async move {
            let token = self.token_of(s).ok_or_else(|| {
                UpstreamError::Refused(format!("no claim here holds task `{}`", s.task))
            })?;
            let req = SubmitRequest {
                token,
                have,
                submission: s.clone(),
            };
            let body =
                serde_json::to_value(&req).map_err(|e| UpstreamError::Refused(e.to_string()))?;
            // No answer, or one that did not arrive whole: the replica asks again.
            let lost = |why: String| {
                tracing::warn!(task = %s.task, error = %why, "a submission's answer was lost");
                UpstreamError::Lost(why)
            };
            let r = self
                .remote
                .post("/v1/submit", &body)
                .await
                .map_err(|e| lost(e.to_string()))?;
            if r.status() == reqwest::StatusCode::CONFLICT {
                return Err(UpstreamError::Refused(
                    "fenced: the claim's lease is lost".to_owned(),
                ));
            }
            let bytes = r.bytes().await.map_err(|e| lost(without_url(&e)))?;
            let short = || lost("a short answer".to_owned());
            let len = bytes
                .get(..4)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_le_bytes)
                .ok_or_else(short)? as usize;
            let outcome = bytes.get(4..4 + len).ok_or_else(short)?;
            let outcome: Outcome =
                serde_json::from_slice(outcome).map_err(|e| lost(e.to_string()))?;
            let bundle = Bundle::decode(&bytes[4 + len..])
                .ok_or_else(|| lost("a damaged bundle".to_owned()))?;
            Ok((outcome, bundle))
        })
    }

    fn fetch(&self, have: ObjectId) -> Boxed<'_, Result<Bundle, UpstreamError>> {
        Box::pin(async move {
            let bytes = self
                .remote
                .bytes("/v1/fetch", &serde_json::json!({"have": have}))
                .await
                .map_err(|e| UpstreamError::Lost(e.to_string()))?;
            Bundle::decode(&bytes)
                .ok_or_else(|| UpstreamError::Lost(RemoteError::DamagedBundle.to_string()))
        })
    }

    fn flag(&self, path: &str) {
        let remote = self.remote.clone();
        let body = serde_json::json!({"path": path});
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                if let Err(e) = remote.post("/v1/flag", &body).await {
                    tracing::warn!(error = %e, "a flag did not reach specc serve");
                }
            });
        }
    }
}
