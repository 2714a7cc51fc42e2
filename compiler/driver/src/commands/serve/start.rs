//! Serving a build: the HTTP API started on the build's runtime with the dispatch its
//! scheduler hands leaves to (the leases in the state database, or with a state URL, in
//! PostgreSQL), and the drain after the build that tells each worker it is over.
//! design: state.deployment

use std::sync::Arc;
use std::time::{Duration, Instant};

use specc_runtime::Dispatch;
use specc_state::{LeaseStore, PgState};

use super::http;
use super::shared::Shared;
use specc_project::session::Session;

/// Leaves offered at once unless `--jobs` says otherwise: the workers' `--jobs` are the
/// real limit.
pub(in crate::commands) const OFFERED: usize = 256;

/// What serving needs before the build starts: the bound address and the token.
pub(in crate::commands) struct Serving {
    pub(super) listener: std::net::TcpListener,
    pub(super) lease: Duration,
    pub(super) token: String,
}

/// Why serving could not start.
#[derive(Debug)]
pub(in crate::commands) enum ServeError {
    /// The leases' tables in the PostgreSQL state database.
    Postgres(specc_state::StateError),
    /// The leases' tables in the SQLite state database.
    Sqlite(specc_state::StateError),
    Journal(specc_state::JournalError),
    /// The listener could not be handed to the async runtime.
    Listener(std::io::Error),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Postgres(e) => write!(f, "the state database (PostgreSQL): {e}"),
            ServeError::Sqlite(e) => write!(f, "the state database: {e}"),
            ServeError::Journal(e) => write!(f, "{e}"),
            ServeError::Listener(e) => write!(f, "the listener could not join the runtime: {e}"),
        }
    }
}

/// Starts the HTTP API on `s`'s runtime; the dispatch the build's scheduler hands its
/// leaves to. The leases are in the state database, or with a state URL, in PostgreSQL.
pub(in crate::commands) fn start(
    s: &Session,
    serving: Serving,
) -> Result<(Arc<Dispatch>, Arc<Shared>), ServeError> {
    let store = match &s.cfg.state_url {
        Some(url) => {
            let password = specc_project::config::pg_password();
            let pg = PgState::connect_as(url, password.as_deref()).map_err(ServeError::Postgres)?;
            s.rt.block_on(LeaseStore::postgres(pg))
                .map_err(ServeError::Postgres)?
        }
        None => LeaseStore::sqlite(s.ledger.state_db()).map_err(ServeError::Sqlite)?,
    };
    let dispatch = Arc::new(Dispatch::new(store, &s.run, serving.lease, s.repo.clone()));
    if s.resumed {
        // Landings of claims whose workers never reported before the last serve died.
        let reported = s
            .journal
            .tasks(&s.run)
            .map_err(ServeError::Journal)?
            .into_iter()
            .filter(|t| t.state == "landed")
            .map(|t| t.task)
            .collect();
        let found = s.rt.block_on(dispatch.recover_landings(&reported));
        if found > 0 {
            tracing::info!(tasks = found, "landings no worker reported were recovered");
        }
    }
    let shared = Arc::new(Shared {
        dispatch: dispatch.clone(),
        token: serving.token,
        budget: s.cfg.llm.budget.dollars,
        ledger: s.ledger.clone(),
        holds: Default::default(),
        seen: Default::default(),
    });
    let _entered = s.rt.enter();
    match tokio::net::TcpListener::from_std(serving.listener) {
        Ok(listener) => {
            s.rt.spawn(http::serve(listener, shared.clone()));
        }
        Err(e) => return Err(ServeError::Listener(e)),
    }
    Ok((dispatch, shared))
}

/// After the build: answers the workers' claims for a little longer, so that each worker
/// heard from lately learns that the build is over and exits.
pub(in crate::commands) fn drain(s: &Session, shared: &Shared) {
    let c = &shared.dispatch.counters;
    let get = |n: &std::sync::atomic::AtomicU64| n.load(std::sync::atomic::Ordering::Relaxed);
    tracing::info!(
        claims = get(&c.claims),
        commits = get(&c.commits),
        conflicts = get(&c.conflicts),
        fenced = get(&c.fenced),
        claim_micros = get(&c.claim_micros),
        ready_micros = get(&c.ready_micros),
        cpu_ms = own_cpu_ms(),
        "the build's leaves are over"
    );
    let window = shared.dispatch.lease().min(Duration::from_secs(10));
    let until = Instant::now() + window;
    s.rt.block_on(async {
        while Instant::now() < until && !shared.all_told(window) {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
}

/// This process's CPU time so far in milliseconds (user and system, all threads), where the
/// system says (Linux's /proc; `/proc`'s clock ticks are 100 a second there); 0 elsewhere.
fn own_cpu_ms() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // After the command's closing parenthesis: the state is the first field, and utime and
    // stime are the 12th and 13th.
    let rest = stat.rsplit(')').next().unwrap_or_default();
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    (f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)) * 10
}
