//! What every request of serve's HTTP API shares: the dispatch, the token, the budget and
//! its holds, the workers heard from; and how an answer is made.
//! design: state.deployment

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Response, StatusCode};
use specc_runtime::Dispatch;
use specc_state::LeaseError;

use super::holds::Holds;

/// What serve's request handlers share.
pub(in crate::commands) struct Shared {
    pub(super) dispatch: Arc<Dispatch>,
    pub(super) token: String,
    pub(super) budget: Option<f64>,
    /// The build's ledger: workers' model calls are recorded here.
    pub(super) ledger: Arc<specc_llm::Ledger>,
    /// The budget's holds for the workers' calls in flight.
    pub(super) holds: Holds,
    /// Workers heard from: when, and whether they were told the build is over.
    pub(super) seen: Mutex<HashMap<String, (Instant, bool)>>,
}

impl Shared {
    /// Whether every worker heard from within `window` has been told the build is over.
    pub(super) fn all_told(&self, window: Duration) -> bool {
        self.seen.lock().map_or(true, |s| {
            s.values().all(|(at, told)| *told || at.elapsed() > window)
        })
    }
}

/// An answer of `status` with `body`.
pub(super) fn text(status: StatusCode, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    r
}

pub(super) fn json<T: serde::Serialize>(v: &T) -> Response<Full<Bytes>> {
    match serde_json::to_vec(v) {
        Ok(b) => text(StatusCode::OK, b),
        Err(e) => text(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

/// The answer to a write refused by the leases: 409 for a lost claim, 503 for the store.
pub(super) fn refused(e: &LeaseError) -> Response<Full<Bytes>> {
    match e {
        LeaseError::Fenced => text(StatusCode::CONFLICT, e.to_string()),
        LeaseError::State(_) => text(StatusCode::SERVICE_UNAVAILABLE, e.to_string()),
    }
}
