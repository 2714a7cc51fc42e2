//! `specc serve`'s HTTP API for its workers, on the address `--listen` gives. Every request
//! carries `Authorization: Bearer <token>` (the token is `SPECC_SERVE_TOKEN`; it is never
//! logged); a request without it is answered 401 and nothing else. JSON in and out, except
//! the repository's objects, which travel as bundles (`specc_vcs::Bundle`). A write whose
//! fencing token no longer holds is answered 409.
//!
//! | route | body | answer |
//! |---|---|---|
//! | `GET /v1/build` | | `{run, lease_ms}` |
//! | `POST /v1/claim` | `{holder, wait_ms}` | a `ClaimAnswer`, held up to `wait_ms` for a leaf |
//! | `POST /v1/heartbeat` | a token | 200, or 409 |
//! | `POST /v1/fetch` | `{have}` | the bundle from `have` to the head |
//! | `POST /v1/submit` | a `SubmitRequest` | u32 length, the outcome's JSON, the bundle; or 409 |
//! | `POST /v1/flag` | `{path}` | 200 |
//! | `POST /v1/finish` | a `FinishRequest` | 200, or 409 |
//! | `POST /v1/journal` | a `JournalRequest`: the claim's steps | 200 once durable, or 409 |
//! | `POST /v1/release` | a token | 200, or 409 |
//! | `POST /v1/budget/…` | holds, rows and releases of the workers' model calls: `budget.rs` | |
//! | `GET /metrics` | | Prometheus text |
//!
//! design: state.deployment

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use specc_runtime::wire::{ClaimAnswer, FinishRequest, JournalRequest, SubmitRequest, Token};
use specc_runtime::{Claimed, Dispatch};
use specc_vcs::object::ObjectId;

use super::budget;
use super::shared::{Shared, json, refused, text};

/// The largest request body: a submission with its files.
const MAX_BODY: usize = 512 << 20;

/// Serves `listener` until the process ends.
pub(super) async fn serve(listener: tokio::net::TcpListener, shared: Arc<Shared>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(answer(&shared, req).await) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            if let Err(e) = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await
            {
                tracing::debug!(error = %e, "a worker's connection ended");
            }
        });
    }
}

fn authorized(shared: &Shared, req: &Request<Incoming>) -> bool {
    let Some(given) = req
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "))
    else {
        return false;
    };
    // The same time whatever the first difference.
    let want = shared.token.as_bytes();
    given.len() == want.len() && given.iter().zip(want).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0
}

async fn body<T: serde::de::DeserializeOwned>(
    req: Request<Incoming>,
) -> Result<T, Response<Full<Bytes>>> {
    let bytes = Limited::new(req.into_body(), MAX_BODY)
        .collect()
        .await
        .map_err(|e| text(StatusCode::BAD_REQUEST, format!("reading the body: {e}")))?
        .to_bytes();
    serde_json::from_slice(&bytes)
        .map_err(|e| text(StatusCode::BAD_REQUEST, format!("the body: {e}")))
}

#[derive(serde::Deserialize)]
struct Holder {
    holder: String,
    /// How long the claim may wait for a leaf, in milliseconds (at most [`MAX_CLAIM_WAIT`]).
    #[serde(default)]
    wait_ms: u64,
}

/// The longest a claim is held waiting for a leaf.
const MAX_CLAIM_WAIT: Duration = Duration::from_secs(10);

#[derive(serde::Deserialize)]
struct Have {
    have: Option<ObjectId>,
}

#[derive(serde::Deserialize)]
struct Flag {
    path: String,
}

async fn answer(shared: &Shared, req: Request<Incoming>) -> Response<Full<Bytes>> {
    if !authorized(shared, &req) {
        return text(StatusCode::UNAUTHORIZED, "a bearer token is required");
    }
    let d = &shared.dispatch;
    let route = (req.method().clone(), req.uri().path().to_owned());
    let r = match (route.0, route.1.as_str()) {
        (Method::GET, "/v1/build") => Ok(json(&serde_json::json!({
            "run": d.run_id(),
            "lease_ms": d.lease().as_millis() as u64,
        }))),
        (Method::POST, "/v1/claim") => claim(shared, req).await,
        (Method::POST, "/v1/heartbeat") => match body::<Token>(req).await {
            Ok(t) => Ok(match d.heartbeat(&t.into()).await {
                Ok(()) => text(StatusCode::OK, ""),
                Err(e) => refused(&e),
            }),
            Err(r) => Err(r),
        },
        (Method::POST, "/v1/fetch") => match body::<Have>(req).await {
            Ok(h) => Ok(match d.repo().bundle(h.have).await {
                Some(b) => text(StatusCode::OK, b.encode()),
                None => text(StatusCode::SERVICE_UNAVAILABLE, "the VCS is unavailable"),
            }),
            Err(r) => Err(r),
        },
        (Method::POST, "/v1/submit") => submit(d, req).await,
        (Method::POST, "/v1/flag") => body::<Flag>(req).await.map(|f| {
            d.repo().flag(&f.path);
            text(StatusCode::OK, "")
        }),
        (Method::POST, "/v1/finish") => finish(shared, req).await,
        (Method::POST, "/v1/journal") => match body::<JournalRequest>(req).await {
            Ok(j) => Ok(match d.journal(&j.token.into(), &j.steps).await {
                Ok(()) => text(StatusCode::OK, ""),
                Err(e) => refused(&e),
            }),
            Err(r) => Err(r),
        },
        (Method::POST, "/v1/release") => release(shared, req).await,
        (Method::POST, "/v1/budget/hold") => match body(req).await {
            Ok(h) => Ok(budget::hold(shared, h).await),
            Err(r) => Err(r),
        },
        (Method::POST, "/v1/budget/record") => match body(req).await {
            Ok(r) => Ok(budget::record(shared, r).await),
            Err(r) => Err(r),
        },
        (Method::POST, "/v1/budget/release") => {
            body(req).await.map(|r| budget::release(shared, &r))
        }
        (Method::GET, "/metrics") => Ok(metrics(shared)),
        _ => Ok(text(StatusCode::NOT_FOUND, "no such route")),
    };
    r.unwrap_or_else(|r| r)
}

/// A worker's attempt ended: its end is recorded and its budget holds swept.
async fn finish(
    shared: &Shared,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Response<Full<Bytes>>> {
    let f = body::<FinishRequest>(req).await?;
    let end = f.end.into_task_end();
    let claim: specc_state::Claim = f.token.into();
    Ok(match shared.dispatch.finish(&claim, end).await {
        Ok(()) => {
            budget::sweep(shared, &claim.task, claim.attempt);
            text(StatusCode::OK, "")
        }
        Err(e) => refused(&e),
    })
}

/// A worker gave its claim back: the task is offered again and its budget holds swept.
async fn release(
    shared: &Shared,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Response<Full<Bytes>>> {
    let t = body::<Token>(req).await?;
    let claim: specc_state::Claim = t.into();
    Ok(match shared.dispatch.release(&claim).await {
        Ok(()) => {
            budget::sweep(shared, &claim.task, claim.attempt);
            text(StatusCode::OK, "")
        }
        Err(e) => refused(&e),
    })
}

async fn claim(
    shared: &Shared,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Response<Full<Bytes>>> {
    let Holder { holder, wait_ms } = body::<Holder>(req).await?;
    let d = &shared.dispatch;
    let wait = Duration::from_millis(wait_ms).min(MAX_CLAIM_WAIT);
    let claimed = d.claim_within(&holder, wait).await;
    for ended in d.take_ended() {
        budget::sweep_later(shared, &ended.task, ended.attempt);
    }
    let answer = match claimed {
        Ok(Some(Claimed { claim, order })) => {
            tracing::info!(task = %claim.task, claim = claim.attempt, holder = %holder, "claimed");
            // The earlier claims' calls that never settled are given back, after a grace.
            budget::sweep_later(shared, &claim.task, claim.attempt - 1);
            ClaimAnswer::Task {
                run: format!("{}@{}", d.run_id(), claim.attempt),
                token: Token::from(&claim),
                order: Box::new((*order).clone()),
                lease_ms: d.lease().as_millis() as u64,
            }
        }
        Ok(None) if d.stopped() => ClaimAnswer::Done,
        Ok(None) => ClaimAnswer::Wait,
        Err(e) => return Err(text(StatusCode::SERVICE_UNAVAILABLE, e.to_string())),
    };
    if let Ok(mut seen) = shared.seen.lock() {
        seen.insert(
            holder,
            (Instant::now(), matches!(answer, ClaimAnswer::Done)),
        );
    }
    Ok(json(&answer))
}

async fn submit(
    d: &Dispatch,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Response<Full<Bytes>>> {
    let s = body::<SubmitRequest>(req).await?;
    let outcome = match d.submit(&s.token.into(), s.submission).await {
        Ok(o) => o,
        Err(e) => return Ok(refused(&e)),
    };
    let Some(bundle) = d.repo().bundle(Some(s.have)).await else {
        return Ok(text(
            StatusCode::SERVICE_UNAVAILABLE,
            "the VCS is unavailable",
        ));
    };
    let outcome = serde_json::to_vec(&outcome).unwrap_or_default();
    let mut out = Vec::with_capacity(4 + outcome.len());
    out.extend_from_slice(&(outcome.len() as u32).to_le_bytes());
    out.extend_from_slice(&outcome);
    out.extend_from_slice(&bundle.encode());
    Ok(text(StatusCode::OK, out))
}

/// Records a worker's model calls in the build's ledger, whatever became of their claim:
/// they were paid for. Only the build's own run is accepted.
fn metrics(shared: &Shared) -> Response<Full<Bytes>> {
    let mut out = String::new();
    // Read through the build's own state database, on whichever backend it is.
    let db = shared.ledger.state_db();
    if let Ok(Some(status)) = db.read(specc_state::status_of) {
        let rows: Vec<specc_llm::CallRow> = shared
            .ledger
            .rows()
            .map(|rows| {
                rows.into_iter()
                    .filter(|r| r.run == status.run.run)
                    .collect()
            })
            .unwrap_or_default();
        let spend = crate::commands::metrics::Spend::of(&rows, shared.budget);
        out.push_str(&crate::commands::metrics::prometheus(&status, &spend));
    }
    out.push_str(&crate::commands::metrics::dispatch_counters(
        &shared.dispatch.counters,
    ));
    let mut r = text(StatusCode::OK, out);
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    r
}
