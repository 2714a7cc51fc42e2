//! A ledger row for the budget tests: one ok call of `run` that cost `dollars`.

use std::time::Duration;

use specc_llm::CallRow;
use specc_llm::types::Usage;

pub(crate) fn row(dollars: f64) -> CallRow {
    CallRow {
        run: "run".into(),
        task: "t".into(),
        role: "worker".into(),
        provider: "p".into(),
        model: "m".into(),
        usage: Usage::default(),
        dollars,
        latency: Duration::ZERO,
        attempt: 1,
        outcome: "ok".into(),
    }
}
