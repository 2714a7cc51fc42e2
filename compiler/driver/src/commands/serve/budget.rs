//! The build's budget, shared by its workers (design: state.leases): a worker holds each
//! model call's worst case here before the call goes out, under its claim's token, and
//! records each attempt's row here, the last settling the hold in the same transaction. The
//! holds are reservations in serve's ledger, so the cap is checked against every worker's
//! calls at once: no two workers can overspend together, and a worker whose claim is lost
//! cannot spend. Rows are recorded whatever became of their claim: they were paid for.
//!
//! | Route | Body | Answer |
//! |---|---|---|
//! | `POST /v1/budget/hold` | `{token, dollars}` | `{hold}`; 402 `{cap, committed, needed}` past the cap; 409 the claim is lost |
//! | `POST /v1/budget/record` | `{row, hold?}` | 200 once durable |
//! | `POST /v1/budget/release` | `{hold}` | 200 |

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Response, StatusCode};
use specc_llm::{CallRow, LlmError, Reservation};
use specc_runtime::dispatch::wire::Token;
use specc_runtime::task_leases::Claim;

use super::http::{Shared, json, refused, text};

/// The holds of the workers' calls in flight.
#[derive(Default)]
pub(super) struct Holds {
    next: AtomicU64,
    open: Mutex<HashMap<u64, Open>>,
}

struct Open {
    task: String,
    attempt: i64,
    reservation: Reservation,
}

#[derive(serde::Deserialize)]
pub(super) struct HoldRequest {
    token: Token,
    dollars: f64,
}

#[derive(serde::Deserialize)]
pub(super) struct RecordRequest {
    row: CallRow,
    hold: Option<u64>,
}

#[derive(serde::Deserialize)]
pub(super) struct ReleaseRequest {
    hold: u64,
}

pub(super) async fn hold(shared: &Shared, h: HoldRequest) -> Response<Full<Bytes>> {
    if !(h.dollars.is_finite() && h.dollars >= 0.0) {
        return text(StatusCode::BAD_REQUEST, "dollars must be a finite amount");
    }
    let claim: Claim = h.token.into();
    // Only a claim that holds may spend (and asking shows its worker is alive).
    if let Err(e) = shared.dispatch.heartbeat(&claim).await {
        return refused(&e);
    }
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

pub(super) async fn record(shared: &Shared, r: RecordRequest) -> Response<Full<Bytes>> {
    if r.row.run != shared.dispatch.run_id() {
        return text(StatusCode::BAD_REQUEST, "a call of another run");
    }
    let settled = r.hold.and_then(|id| take(shared, |k, _| *k == id).pop());
    if let Err(e) = shared.ledger.record_with(&r.row, None, settled) {
        return text(StatusCode::SERVICE_UNAVAILABLE, e.to_string());
    }
    match shared.ledger.durable().await {
        Ok(()) => text(StatusCode::OK, ""),
        Err(e) => text(StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
    }
}

pub(super) fn release(shared: &Shared, r: &ReleaseRequest) -> Response<Full<Bytes>> {
    give_back(shared, take(shared, |k, _| *k == r.hold));
    text(StatusCode::OK, "")
}

/// Gives back the holds of `task`'s claims up to attempt `upto`: their calls will never
/// settle (the claim ended, or was lost to a later one).
pub(super) fn sweep(shared: &Shared, task: &str, upto: i64) {
    give_back(
        shared,
        take(shared, |_, o| o.task == task && o.attempt <= upto),
    );
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
