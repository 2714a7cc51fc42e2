//! `specc serve SPEC --listen ADDR`: `specc build` whose work leaves run on `specc worker`
//! processes, here or on other machines. This process plans, seeds, schedules (critical
//! path first, never two overlapping write scopes), hosts the VCS integrator and exports,
//! as a build does; each ready leaf is offered as a task lease, and workers claim it, run it
//! against their replica of the repository and submit through this process's HTTP API
//! (`http`), under the claim's fencing token. The bearer token is `SPECC_SERVE_TOKEN`.
//! design: state.deployment

mod budget;
pub(in crate::commands) mod http;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use specc_ir::{Diagnostic, codes};
use specc_state::PgState;
use specc_runtime::Dispatch;
use specc_state::LeaseStore;

use super::build::session::Session;
use super::{Reporter, build};
use crate::cli::ServeArgs;
use crate::source::Files;
use crate::{Env, exit};

/// Leaves offered at once unless `--jobs` says otherwise: the workers' `--jobs` are the
/// real limit.
pub(super) const OFFERED: usize = 256;

/// What serving needs before the build starts: the bound address and the token.
pub(in crate::commands) struct Serving {
    listener: std::net::TcpListener,
    lease: Duration,
    token: String,
}

pub(crate) fn run(args: &ServeArgs, env: &Env, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let refuse = |err: &mut dyn Write, message: String| {
        let mut reporter = Reporter::new(args.build.messages.message_format, env);
        let d = Diagnostic::new(codes::BUILD_SETUP, message).with_help("see `specc explain E0406`");
        reporter.report(&Files::default(), &d, err);
        exit::USAGE
    };
    let token = match std::env::var("SPECC_SERVE_TOKEN") {
        Ok(t) if t.len() >= 16 => t,
        _ => {
            return refuse(
                err,
                "specc serve needs SPECC_SERVE_TOKEN, a secret of 16 characters or more that its workers present".to_owned(),
            );
        }
    };
    // A heartbeat goes out every third of the lease: shorter than 0.1 s would spin, and a
    // day is longer than any attempt needs.
    if !(0.1..=86_400.0).contains(&args.lease_seconds) {
        return refuse(
            err,
            "--lease-seconds must be between 0.1 and 86400".to_owned(),
        );
    }
    let listener = match std::net::TcpListener::bind(&args.listen)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
    {
        Ok(l) => l,
        Err(e) => return refuse(err, format!("listening on {}: {e}", args.listen)),
    };
    if let Ok(addr) = listener.local_addr() {
        // Port 0 picks a free port: this line says which.
        let _ = writeln!(err, "specc serve: listening on http://{addr}");
    }
    let serving = Serving {
        listener,
        lease: Duration::from_secs_f64(args.lease_seconds),
        token,
    };
    build::run_with(&args.build, Some(serving), env, out, err)
}

/// Starts the HTTP API on `s`'s runtime; the dispatch the build's scheduler hands its
/// leaves to. The leases are in the state database, or with a state URL, in PostgreSQL.
pub(super) fn start(
    s: &Session,
    serving: Serving,
) -> Result<(Arc<Dispatch>, Arc<http::Shared>), String> {
    let store = match &s.cfg.state_url {
        Some(url) => {
            let password = super::build::config::pg_password();
            let pg = PgState::connect_as(url, password.as_deref())
                .map_err(|e| format!("the state database (PostgreSQL): {e}"))?;
            s.rt.block_on(LeaseStore::postgres(pg))
                .map_err(|e| format!("the state database (PostgreSQL): {e}"))?
        }
        None => LeaseStore::sqlite(s.ledger.state_db())
            .map_err(|e| format!("the state database: {e}"))?,
    };
    let dispatch = Arc::new(Dispatch::new(store, &s.run, serving.lease, s.repo.clone()));
    if s.resumed {
        // Landings of claims whose workers never reported before the last serve died.
        let reported = s
            .journal
            .tasks(&s.run)
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|t| t.state == "landed")
            .map(|t| t.task)
            .collect();
        let found = s.rt.block_on(dispatch.recover_landings(&reported));
        if found > 0 {
            tracing::info!(tasks = found, "landings no worker reported were recovered");
        }
    }
    let shared = Arc::new(http::Shared {
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
        Err(e) => return Err(format!("the listener could not join the runtime: {e}")),
    }
    Ok((dispatch, shared))
}

/// After the build: answers the workers' claims for a little longer, so that each worker
/// heard from lately learns that the build is over and exits.
pub(super) fn drain(s: &Session, shared: &http::Shared) {
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
