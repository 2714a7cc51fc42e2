//! `specc worker --connect URL [--jobs N]`: runs work tasks for a `specc serve`. It claims
//! a task, brings its replica of the repository up to the serve's head, runs the task as
//! `specc build` would (checkout slots, the agent loop, acceptance checks in this machine's
//! sandbox, reviews), submits through the serve under the claim's fencing token, heartbeats
//! at a third of the lease meanwhile, and reports how the task ended. A heartbeat refused
//! (the lease was lost: this process was paused, or cut off, for longer than the lease)
//! abandons the attempt at once; anything it would still write is refused anyway. Each
//! model call is held against the serve's budget under the claim first (so workers cannot
//! overspend together, and a lost claim spends nothing more) and recorded in the serve's
//! ledger as it ends.
//!
//! Its own state is under `--dir`'s `.specc/workers/<host>-<pid>/`: the replica, the
//! checkout slots, and a journal and ledger of its own model calls. The models, limits and
//! sandbox come from `--dir`'s specc.toml; its keys never leave this machine.
//!
//! SIGTERM or SIGINT: no new claims; running attempts end at their next model call and
//! their claims are released for other workers. A second signal exits at once.
//! design: state.deployment

mod forward;
mod held;
mod remote;

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use specc_ir::{Diagnostic, codes};
use specc_runtime::WorkOrder;
use specc_runtime::wire::{ClaimAnswer, End, FinishRequest, Token};
use specc_runtime::{Services, Stores, run_task};
use tracing::Instrument as _;

use self::held::Worker;
use self::remote::{Answered, HttpUpstream, Remote, RemoteError};
use crate::cli::{BuildArgs, MessageArgs, MessageFormat, WorkerArgs};
use crate::reporter::Reporter;
use crate::source::Files;
use crate::{Env, exit};
use specc_project::worker::StartError;

/// How long the serve may be unreachable before the worker gives up.
const PATIENCE: Duration = Duration::from_secs(30);

/// How often a worker looks again when it cannot ask (all its jobs are running, or a claim
/// failed), and the pause before asking a serve that did not hold a claim.
const POLL: Duration = Duration::from_millis(100);

/// How long the serve may hold a claim waiting for a leaf to be offered.
const CLAIM_WAIT: Duration = Duration::from_secs(1);

pub(crate) fn run(args: &WorkerArgs, env: &Env, _out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let refuse = |err: &mut dyn Write, message: String| {
        let mut reporter = Reporter::new(MessageFormat::Human, env);
        let d = Diagnostic::new(codes::BUILD_SETUP, message).with_help("see `specc explain E0406`");
        reporter.report(&Files::default(), &d, err);
        exit::USAGE
    };
    let Ok(token) = std::env::var("SPECC_SERVE_TOKEN") else {
        return refuse(
            err,
            "specc worker needs SPECC_SERVE_TOKEN, the token its specc serve was given".to_owned(),
        );
    };
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let build_args = build_args(args, &dir);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty() && !h.contains('/'))
        .unwrap_or_else(|| "worker".to_owned());
    let holder = format!("{host}-{}", std::process::id());
    let state = dir.join(".specc").join("workers").join(&holder);
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return refuse(err, format!("no async runtime: {e}")),
    };
    let remote = match Remote::new(&args.connect, token) {
        Ok(r) => Arc::new(r),
        Err(e) => return refuse(err, e.to_string()),
    };
    let run = match rt.block_on(hello(&remote)) {
        Ok(run) => run,
        Err(e) => return refuse(err, e.to_string()),
    };
    let worker = match open(&build_args, env, &state, remote, &run, holder) {
        Ok(w) => w,
        Err(e) => {
            let (d, status) = crate::command_error::worker(&e);
            Reporter::new(MessageFormat::Human, env).report(&Files::default(), &d, err);
            return status;
        }
    };
    let jobs = args.jobs.unwrap_or(4).max(1);
    let halt = env.signals.then(|| worker.client.halt_switch());
    let status = rt.block_on(async {
        let work = work(&worker, jobs);
        match halt {
            Some(halt) => tokio::select! {
                biased;
                never = specc_project::signals::stop_on_signals(halt) => match never {},
                status = work => status,
            },
            None => work.await,
        }
    });
    match status {
        Ok(()) => {
            // Its state is its own and of no use once it exits.
            let _ = std::fs::remove_dir_all(&state);
            exit::OK
        }
        Err(e) => refuse(err, e.to_string()),
    }
}

/// The build a worker's tasks are of, as `specc build` would be given it.
fn build_args(args: &WorkerArgs, dir: &std::path::Path) -> BuildArgs {
    BuildArgs {
        spec: dir.join("spec.md"),
        config: args.config.clone(),
        out: None,
        jobs: args.jobs,
        provider: args.provider,
        recording: args.recording.clone(),
        record: None,
        dry_run: false,
        format: crate::cli::Format::Text,
        force: Vec::new(),
        approve: None,
        gauges: None,
        messages: MessageArgs {
            message_format: MessageFormat::Human,
            error_limit: None,
        },
    }
}

/// Opens the worker's own state and its link to the serve (design: project.library).
fn open(
    args: &BuildArgs,
    env: &Env,
    state: &std::path::Path,
    remote: Arc<Remote>,
    run: &str,
    holder: String,
) -> Result<Worker, StartError> {
    let upstream = Arc::new(HttpUpstream::new(remote.clone(), &holder));
    let at = specc_project::worker::Start {
        spec: &args.spec,
        source: &args.source(),
        state,
        run,
        record: args.record.as_deref(),
    };
    let opened = specc_project::worker::open(&at, &env.overrides(), upstream.clone())?;
    Ok(Worker {
        holder,
        remote,
        upstream,
        replica: opened.replica,
        journal: opened.journal,
        client: opened.client,
        runner: opened.runner,
        slots: opened.slots,
        intents: specc_runtime::Intents::default(),
        policy: opened.policy,
    })
}

/// The build's run id, asked until the serve answers (within [`PATIENCE`]).
async fn hello(remote: &Remote) -> Result<String, RemoteError> {
    let since = std::time::Instant::now();
    loop {
        match remote.hello().await {
            Ok((run, _)) => return Ok(run),
            Err(e) if since.elapsed() > PATIENCE => return Err(e),
            Err(_) => tokio::time::sleep(POLL * 5).await,
        }
    }
}

/// Claims and runs tasks until the serve says the build is over (or a signal stops it).
/// One claim is asked at a time, beside the running tasks: the serve holds it until a leaf
/// is offered (up to [`CLAIM_WAIT`]), so a leaf is claimed as soon as it is ready.
async fn work(w: &Worker, jobs: usize) -> Result<(), RemoteError> {
    let mut unreachable_since: Option<std::time::Instant> = None;
    tracing::info!(holder = %w.holder, "working for specc serve");
    let mut running = FuturesUnordered::new();
    // The claim being asked, and when it was asked (at most one).
    let mut asking = FuturesUnordered::new();
    let mut retry_at: Option<tokio::time::Instant> = None;
    let mut over = false;
    loop {
        let halted = w.client.halted().is_some();
        let now = tokio::time::Instant::now();
        if asking.is_empty()
            && !over
            && !halted
            && running.len() < jobs
            && retry_at.is_none_or(|t| t <= now)
        {
            retry_at = None;
            asking.push(async move { (w.remote.claim(&w.holder, CLAIM_WAIT).await, now) });
        }
        if running.is_empty() && asking.is_empty() && (over || halted) {
            return Ok(());
        }
        let idle = retry_at.unwrap_or(now + POLL);
        let answer = tokio::select! {
            Some(()) = running.next(), if !running.is_empty() => None,
            Some(answer) = asking.next(), if !asking.is_empty() => Some(answer),
            () = tokio::time::sleep_until(idle), if asking.is_empty() => None,
        };
        let Some((answer, asked)) = answer else {
            continue;
        };
        match answer {
            Ok(ClaimAnswer::Task {
                token,
                run,
                order,
                lease_ms,
            }) => {
                unreachable_since = None;
                if w.client.halted().is_some() {
                    // Stopping: the leaf goes back to the serve for another worker.
                    let _ = w.remote.release(&token).await;
                    continue;
                }
                let lease = Duration::from_millis(lease_ms);
                running.push(one_claim(w, token, run, *order, lease));
            }
            Ok(ClaimAnswer::Wait) => {
                unreachable_since = None;
                // A serve that did not hold the claim is asked again after a pause.
                if asked.elapsed() < CLAIM_WAIT / 2 {
                    retry_at = Some(tokio::time::Instant::now() + POLL);
                }
            }
            Ok(ClaimAnswer::Done) => over = true,
            Err(e) => {
                let since = *unreachable_since.get_or_insert_with(std::time::Instant::now);
                if since.elapsed() > PATIENCE && running.is_empty() {
                    return Err(e);
                }
                tracing::warn!(error = %e, "claiming");
                retry_at = Some(tokio::time::Instant::now() + POLL * 5);
            }
        }
    }
}

/// Runs one claimed task and reports its end, heartbeating meanwhile.
async fn one_claim(w: &Worker, token: Token, run: String, order: WorkOrder, lease: Duration) {
    let task = order.task.id.clone();
    let span = tracing::error_span!("task", task = %task, claim = token.attempt);
    claimed(w, token, run, order, lease).instrument(span).await;
}

async fn claimed(w: &Worker, token: Token, run: String, order: WorkOrder, lease: Duration) {
    w.upstream.hold(&token);
    let forward = forward::Forward::default();
    let end = async {
        w.replica
            .sync()
            .await
            .map_err(|e| format!("syncing the replica: {e}"))?;
        // The attempt's steps go to this worker's own journal, under the claim's run.
        if let Err(e) = w.journal.start_run(&run, "specc serve") {
            return Err(e.to_string());
        }
        let events = |e: specc_runtime::Event| tracing::info!(event = ?e, "build event");
        let stores = Stores {
            client: &w.client,
            journal: &w.journal,
            repo: &w.replica,
            run: &run,
        };
        let services = Services::new(
            stores,
            w.runner.clone(),
            &w.slots,
            &w.intents,
            &w.policy,
            &events,
        )
        .with_pins(Arc::new(super::pins::DriverPins));
        let attempt = run_task(&services, order);
        let end = tokio::select! {
            end = attempt => Some(end),
            lost = heartbeats(w, &token, lease, &forward, &run) => {
                tracing::warn!(reason = %lost, "the claim is lost: the attempt is abandoned");
                None
            }
        };
        // The rest of the claim's journal, before its end is reported (within a third of
        // the lease, so the end still finds the lease held).
        if end.is_some() {
            send_journal(w, &token, &run, &forward, lease / 3).await;
        }
        Ok(end)
    }
    .await;
    let unheld = w.upstream.drop_claim(&token);
    let answered = match end {
        Ok(None) => return,
        Ok(Some(end)) => match End::of(end) {
            // Halted by a signal: another worker does it.
            Some(End::Budget { .. }) if w.client.halted().is_some() => {
                w.remote.release(&token).await
            }
            // Serve could not be asked to hold a call: another try, after a pause, so that
            // a serve in trouble is not asked again at once.
            Some(End::Budget { .. }) if unheld => {
                tracing::warn!("serve could not hold a model call: the claim is released");
                let released = w.remote.release(&token).await;
                tokio::time::sleep(Duration::from_secs(1)).await;
                released
            }
            Some(end) => {
                let f = FinishRequest {
                    token: token.clone(),
                    end,
                };
                w.remote.finish(&f).await
            }
            None => w.remote.release(&token).await,
        },
        Err(e) => {
            tracing::warn!(error = %e, "the task could not run here: released");
            w.remote.release(&token).await
        }
    };
    match answered {
        Ok(Answered::Ok) => {}
        Ok(Answered::Fenced) => tracing::warn!("the task's end was refused: the claim was lost"),
        Err(e) => tracing::warn!(error = %e, "the task's end did not reach specc serve"),
    }
}

/// Sends the claim's new journal steps, giving up after `within` (they go with the next
/// send); `false` if serve refused them: the claim is lost.
async fn send_journal(
    w: &Worker,
    token: &Token,
    run: &str,
    forward: &forward::Forward,
    within: Duration,
) -> bool {
    match tokio::time::timeout(within, forward.send(w, token, run)).await {
        Ok(Ok(Answered::Ok)) => true,
        Ok(Ok(Answered::Fenced)) => {
            tracing::warn!("the journal was refused: the claim was lost");
            false
        }
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "the journal did not reach specc serve");
            true
        }
        Err(_) => {
            tracing::warn!("the journal took too long: it goes with the next send");
            true
        }
    }
}

/// Heartbeats `token` every third of `lease`, sending the claim's new journal steps after
/// each heartbeat (bounded, so the next one is on time); returns why once the claim is lost.
async fn heartbeats(
    w: &Worker,
    token: &Token,
    lease: Duration,
    forward: &forward::Forward,
    run: &str,
) -> String {
    let every = lease / 3;
    let mut last_ok = std::time::Instant::now();
    loop {
        tokio::time::sleep(every).await;
        match w.remote.heartbeat(token).await {
            Ok(Answered::Ok) => last_ok = std::time::Instant::now(),
            Ok(Answered::Fenced) => return "the serve refused the heartbeat".to_owned(),
            Err(e) if last_ok.elapsed() > lease => return e.to_string(),
            Err(e) => tracing::warn!(error = %e, "a heartbeat failed"),
        }
        if !send_journal(w, token, run, forward, every).await {
            return "the serve refused the journal".to_owned();
        }
    }
}
