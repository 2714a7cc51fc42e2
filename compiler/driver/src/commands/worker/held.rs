//! What a running `specc worker` holds: its claim on the serve, its replica, journal, client, sandbox and slots.

use specc_llm::Client;
use specc_runtime::AttemptPolicy;
use specc_sandbox::Runner;
use specc_state::Journal;
use specc_vcs::Repo;
use std::sync::Arc;

use super::remote::{HttpUpstream, Remote};

pub(super) struct Worker {
    pub(super) holder: String,
    pub(super) remote: Arc<Remote>,
    pub(super) upstream: Arc<HttpUpstream>,
    pub(super) replica: Repo,
    pub(super) journal: Journal,
    pub(super) client: Client,
    pub(super) runner: Arc<dyn Runner>,
    pub(super) slots: specc_runtime::Slots,
    pub(super) intents: specc_runtime::Intents,
    pub(super) policy: AttemptPolicy,
}
