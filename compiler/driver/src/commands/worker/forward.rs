//! A claim's journal, sent on to serve's: the steps the worker's attempt journaled in its
//! own state database (model responses, tool results, acceptance runs, submissions), under
//! the claim's run, go to `POST /v1/journal` at every heartbeat and once more before the
//! claim's end is reported. Serve writes them only while the claim's lease holds (the
//! fencing token), so a worker paused or cut off past its lease can no longer journal
//! there; a step not acknowledged is sent again next time (serve's write replaces it).
//! design: state.leases

use std::collections::BTreeSet;
use std::sync::Mutex;

use specc_runtime::dispatch::wire::{JournalRequest, Token};
use specc_runtime::task_leases::StepRecord;

use super::Worker;
use super::remote::Answered;

/// The steps of one claim already acknowledged by serve, by (attempt, step).
#[derive(Default)]
pub(super) struct Forward {
    sent: Mutex<BTreeSet<(u32, u32)>>,
}

impl Forward {
    /// Sends the claim's steps serve has not acknowledged yet.
    pub(super) async fn send(
        &self,
        w: &Worker,
        token: &Token,
        run: &str,
    ) -> Result<Answered, String> {
        let rows = w.journal.steps(run).map_err(|e| e.to_string())?;
        let steps: Vec<StepRecord> = {
            let sent = self.sent.lock().map_err(|_| "a lock".to_owned())?;
            rows.into_iter()
                .filter(|r| r.task == token.task && !sent.contains(&(r.attempt, r.step)))
                .map(|r| StepRecord {
                    run: run.to_owned(),
                    attempt: r.attempt,
                    step: r.step,
                    kind: r.kind,
                    body: r.body,
                })
                .collect()
        };
        if steps.is_empty() {
            return Ok(Answered::Ok);
        }
        let keys: Vec<(u32, u32)> = steps.iter().map(|s| (s.attempt, s.step)).collect();
        let request = JournalRequest {
            token: token.clone(),
            steps,
        };
        let answered = w.remote.journal(&request).await?;
        if answered == Answered::Ok
            && let Ok(mut sent) = self.sent.lock()
        {
            sent.extend(keys);
        }
        Ok(answered)
    }
}
