//! A claim's journal, sent on to serve's: the steps the worker's attempt journaled in its
//! own state database (model responses, tool results, acceptance runs, submissions), under
//! the claim's run, go to `POST /v1/journal` at every heartbeat and once more before the
//! claim's end is reported, each send bounded by a third of the lease so that it never
//! delays a heartbeat past it. Serve writes them only while the claim's lease holds (the
//! fencing token), so a worker paused or cut off past its lease can no longer journal
//! there; steps not acknowledged are sent again next time (serve's write replaces them).
//! design: state.leases

use std::sync::Mutex;

use specc_runtime::wire::{JournalRequest, Token};
use specc_state::StepRecord;

use super::held::Worker;
use super::remote::{Answered, RemoteError};

/// The last step of one claim serve acknowledged, as (attempt, step): steps are journaled
/// in that order, so what comes after it is what serve has not seen.
/// Why a claim's steps could not be sent on.
#[derive(Debug)]
pub(super) enum ForwardError {
    /// A thread panicked holding what serve acknowledged: a bug.
    Poisoned,
    /// This worker's journal could not be read.
    Journal(specc_state::JournalError),
    Remote(RemoteError),
}

impl std::fmt::Display for ForwardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ForwardError::Poisoned => write!(f, "a lock"),
            ForwardError::Journal(e) => write!(f, "{e}"),
            ForwardError::Remote(e) => write!(f, "{e}"),
        }
    }
}

#[derive(Default)]
pub(super) struct Forward {
    acknowledged: Mutex<Option<(u32, u32)>>,
}

impl Forward {
    /// Sends the claim's steps serve has not acknowledged yet.
    pub(super) async fn send(
        &self,
        w: &Worker,
        token: &Token,
        run: &str,
    ) -> Result<Answered, ForwardError> {
        let after = *self
            .acknowledged
            .lock()
            .map_err(|_| ForwardError::Poisoned)?;
        let rows = w
            .journal
            .task_steps_after(run, &token.task, after)
            .map_err(ForwardError::Journal)?;
        let Some(last) = rows.last().map(|r| (r.attempt, r.step)) else {
            return Ok(Answered::Ok);
        };
        let steps: Vec<StepRecord> = rows
            .into_iter()
            .map(|r| StepRecord {
                run: run.to_owned(),
                attempt: r.attempt,
                step: r.step,
                kind: r.kind,
                body: r.body,
            })
            .collect();
        let request = JournalRequest {
            token: token.clone(),
            steps,
        };
        let answered = w
            .remote
            .journal(&request)
            .await
            .map_err(ForwardError::Remote)?;
        if answered == Answered::Ok
            && let Ok(mut acknowledged) = self.acknowledged.lock()
        {
            *acknowledged = Some(last);
        }
        Ok(answered)
    }
}
