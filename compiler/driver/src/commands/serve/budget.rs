//! The build's budget, shared by its workers (design: state.leases): a worker holds each
//! model call's worst case here before the call goes out, under its claim's token, and
//! records each attempt's row here, the last settling the hold in the same transaction. The
//! holds are reservations in serve's ledger, so the cap is checked against every worker's
//! calls at once: no two workers can overspend together, and a worker whose claim is lost
//! (or whose build is stopping) cannot spend. Rows are recorded whatever became of their
//! claim: they were paid for; each once, by the id its worker gave it. A claim's holds are
//! given back when its worker ends or releases it, and ten minutes after another claim took
//! its task over (a call still in flight there may yet be paid for).
//!
//! | Route | Body | Answer |
//! |---|---|---|
//! | `POST /v1/budget/hold` | `{token, dollars}` | `{hold}`; 402 `{cap, committed, needed}` past the cap; 409 the claim is lost |
//! | `POST /v1/budget/record` | `{row, hold?}` | 200 once durable |
//! | `POST /v1/budget/release` | `{hold}` | 200 |

use std::sync::atomic::Ordering;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Response, StatusCode};
use specc_llm::{CallRow, LlmError, Reservation};
use specc_runtime::wire::Token;
use specc_state::Claim;

use super::holds::{GRACE, Open};
use super::shared::{Shared, json, refused, text};

#[derive(serde::Deserialize)]
pub(super) struct HoldRequest {
    token: Token,
    dollars: f64,
}

#[derive(serde::Deserialize)]
pub(super) struct RecordRequest {
    row: CallRow,
    hold: Option<u64>,
    /// The worker's id for the row: a row whose id was recorded already is not again.
    id: Option<String>,
}

#[derive(serde::Deserialize)]
pub(super) struct ReleaseRequest {
    hold: u64,
}

#[tracing::instrument(level = "info", skip_all, fields(task = %h.token.task, claim = h.token.attempt))]
pub(super) async fn hold(shared: &Shared, h: HoldRequest) -> Response<Full<Bytes>> {
    if !(h.dollars.is_finite() && h.dollars >= 0.0) {
        return text(StatusCode::BAD_REQUEST, "dollars must be a finite amount");
    }
    let claim: Claim = h.token.into();
    // A stopping build spends no more (its running attempts end at their next call).
    if shared.dispatch.stopped() {
        return text(StatusCode::CONFLICT, "the build is stopping");
    }
    // Only a claim that holds may spend (and asking shows its worker is alive).
    if let Err(e) = shared.dispatch.heartbeat(&claim).await {
        return refused(&e);
    }
    let now = Instant::now();
    give_back(
        shared,
        take(shared, |_, o| o.until.is_some_and(|t| t <= now)),
    );
    let run = shared.dispatch.run_id();
    match shared.ledger.reserve(run, h.dollars, shared.budget) {
        Ok(reservation) => {
            let id = shared.holds.next.fetch_add(1, Ordering::Relaxed);
            if let Ok(mut open) = shared.holds.open.lock() {
                open.insert(
                    id,
                    Open {
                        task: claim.task,
                        attempt: claim.attempt,
                        reservation,
                        until: None,
                    },
                );
            }
            json(&serde_json::json!({ "hold": id }))
        }
        Err(LlmError::Budget {
            cap,
            committed,
            needed,
        }) => {
            let body = serde_json::json!({"cap": cap, "committed": committed, "needed": needed});
            let mut r = json(&body);
            *r.status_mut() = StatusCode::PAYMENT_REQUIRED;
            r
        }
        Err(e) => text(StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
    }
}

#[tracing::instrument(level = "info", skip_all, fields(task = %r.row.task))]
pub(super) async fn record(shared: &Shared, r: RecordRequest) -> Response<Full<Bytes>> {
    if r.row.run != shared.dispatch.run_id() {
        return text(StatusCode::BAD_REQUEST, "a call of another run");
    }
    // Marked while it is written, and unmarked if that fails, so that a row sent again
    // after a lost answer is recorded once and a row whose write failed can be sent again.
    if let Some(id) = &r.id {
        let seen = shared
            .holds
            .recorded
            .lock()
            .map(|mut s| !s.insert(id.clone()));
        if seen.unwrap_or(false) {
            return text(StatusCode::OK, "");
        }
    }
    let unmark = |e: String| {
        if let (Some(id), Ok(mut s)) = (&r.id, shared.holds.recorded.lock()) {
            s.remove(id);
        }
        text(StatusCode::SERVICE_UNAVAILABLE, e)
    };
    let settled = r.hold.and_then(|id| take(shared, |k, _| *k == id).pop());
    if let Err(e) = shared.ledger.record_with(&r.row, None, settled) {
        return unmark(e.to_string());
    }
    match shared.ledger.durable().await {
        Ok(()) => text(StatusCode::OK, ""),
        Err(e) => unmark(e.to_string()),
    }
}

pub(super) fn release(shared: &Shared, r: &ReleaseRequest) -> Response<Full<Bytes>> {
    give_back(shared, take(shared, |k, _| *k == r.hold));
    text(StatusCode::OK, "")
}

/// Gives back the holds of `task`'s claims up to attempt `upto`: their worker said they
/// ended, so their calls will never settle.
pub(super) fn sweep(shared: &Shared, task: &str, upto: i64) {
    give_back(
        shared,
        take(shared, |_, o| o.task == task && o.attempt <= upto),
    );
}

/// The holds of `task`'s claims up to attempt `upto`, lost to a later claim, are given back
/// after [`GRACE`]: a call still in flight there may yet be paid for.
pub(super) fn sweep_later(shared: &Shared, task: &str, upto: i64) {
    let until = Instant::now() + GRACE;
    if let Ok(mut open) = shared.holds.open.lock() {
        for o in open.values_mut() {
            if o.task == task && o.attempt <= upto && o.until.is_none() {
                o.until = Some(until);
            }
        }
    }
}

fn take(shared: &Shared, which: impl Fn(&u64, &Open) -> bool) -> Vec<Reservation> {
    let Ok(mut open) = shared.holds.open.lock() else {
        return Vec::new();
    };
    let ids: Vec<u64> = open
        .iter()
        .filter(|(k, o)| which(k, o))
        .map(|(k, _)| *k)
        .collect();
    ids.iter()
        .filter_map(|k| open.remove(k).map(|o| o.reservation))
        .collect()
}

fn give_back(shared: &Shared, reservations: Vec<Reservation>) {
    for r in reservations {
        if let Err(e) = shared.ledger.release(r) {
            tracing::error!(error = %e, "a worker's budget hold could not be given back");
        }
    }
}
