//! A swarm on one codebase: 64 scripted writers, each making 8 changes, every change
//! appending a line to one of three hot files (and writing a file of its own), all at once
//! against the real VCS. Run four ways — with and without the merge agent, with and without
//! the megafile guard — and report the conflicts, the most-conflicted file's conflicts and
//! line count over time, and the landed commits. Without the merge agent a conflicting
//! writer re-does its change on the new head (as a re-run would), giving up after 20 tries;
//! with it, the runtime's merge agent (`specc_runtime::merge`, the merger answered by a
//! scripted union of both sides) lands the change. With the guard (100 lines here), the first
//! writer refused for a hot file splits it (its lines move to a part file) and every writer
//! retries. `cargo bench -p specc-tests --bench swarm`.
//! design: perf.swarm

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use specc_ir::plan::{ChildKind, TaskNode};
use specc_llm::{
    BoxFuture, Client, Ledger, LlmConfig, LlmError, Provider, Request, Response, Scripted,
    ToolCall, Usage,
};
use specc_runtime::{Intents, Merged, Services, Stores, WorkOrder, reconcile as merge};
use specc_sandbox::ProcessRunner;
use specc_state::Journal;
use specc_vcs::object::{Kind, ObjectId};
use specc_vcs::{Change, Options, Outcome, Refusal, Repo, Submission};

use specc_tests::settings as common;

const WRITERS: usize = 64;
const CHANGES: usize = 8;
const HOT: [&str; 3] = ["src/registry.rs", "src/routes.rs", "src/config.rs"];
const TRIES: usize = 20;
/// The megafile guard's line budget here: low enough that the hot files pass it in a run.
const GUARD: usize = 100;

/// The merger: every line of the landed side, then the submitted side's lines it lacks.
struct Union;

impl Provider for Union {
    fn name(&self) -> &str {
        "m"
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        let user: Value = serde_json::from_str(&request.messages[1].text).unwrap_or_default();
        let landed = user["landed"]["content"].as_str().unwrap_or_default();
        let mine = user["submitted"]["content"].as_str().unwrap_or_default();
        let mut out = landed.to_owned();
        for l in mine.lines() {
            if !landed.lines().any(|x| x == l) {
                out.push_str(l);
                out.push('\n');
            }
        }
        let mut r = Scripted::text("", Usage::default());
        r.tool_calls = vec![ToolCall {
            id: "m".into(),
            name: specc_runtime::MERGE_TOOL.into(),
            arguments: json!({"content": out, "explanation": "both sides' lines"}),
        }];
        Box::pin(async move { Ok(r) })
    }
}

fn order(w: usize) -> WorkOrder {
    WorkOrder {
        task: TaskNode {
            id: format!("w{w:02}"),
            parent: Some(String::new()),
            kind: ChildKind::Work,
            role: "worker".into(),
            model: "w".into(),
            title: format!("writer {w}"),
            instructions: "register yourself in the hot files".into(),
            decisions_to_read: Vec::new(),
            write_scope: vec![format!("src/w{w:02}/**")],
            read_scope: Vec::new(),
            acceptance: Vec::new(),
            dependencies: Vec::new(),
            covers_requirements: Vec::new(),
            covers_nodes: Vec::new(),
            budget: 0,
            fingerprint: String::new(),
        },
        fingerprint: String::new(),
        decisions: Vec::new(),
        requirements: Vec::new(),
        checks: Vec::new(),
        parent: None,
        spec: Vec::new(),
        other_decisions: Vec::new(),
        origin: None,
    }
}

#[derive(Default)]
struct Tally {
    landed: AtomicUsize,
    conflicts: AtomicUsize,
    gave_up: AtomicUsize,
    merged: AtomicUsize,
    splits: AtomicUsize,
}

struct Mode {
    merger: bool,
    guard: bool,
}

/// One change of writer `w`: a line appended to a hot file, and a file of its own.
async fn change(
    s: &Services<'_>,
    o: &WorkOrder,
    w: usize,
    k: usize,
    mode: &Mode,
    t: &Tally,
    splitting: &AtomicBool,
) {
    let hot = HOT[(w + k) % HOT.len()];
    for _ in 0..TRIES {
        let Ok((head, file)) = s.repo.read_head(hot).await else {
            return;
        };
        let current = file
            .as_ref()
            .map(|f| String::from_utf8_lossy(&f.bytes).into_owned());
        let text = format!(
            "{}register(w{w:02}, {k});\n",
            current.as_deref().unwrap_or("")
        );
        let sub = Submission {
            base: head,
            changes: vec![
                Change {
                    path: hot.to_owned(),
                    expected: file.as_ref().map(|f| f.blob),
                    new: Some(text.into_bytes()),
                    executable: false,
                },
                Change {
                    path: format!("src/w{w:02}/c{k}.rs"),
                    expected: None,
                    new: Some(format!("// change {k}\n").into_bytes()),
                    executable: false,
                },
            ],
            message: format!("w{w:02}: change {k}"),
            task: o.task.id.clone(),
            idempotency_key: String::new(),
        };
        match s.repo.submit(sub.clone()).await {
            Outcome::Committed { .. } => {
                t.landed.fetch_add(1, Ordering::Relaxed);
                return;
            }
            Outcome::Conflict(c) => {
                t.conflicts.fetch_add(1, Ordering::Relaxed);
                if mode.merger {
                    let m = merge(s, o, &sub, &c).await.merged;
                    if let Merged::Landed { .. } = m {
                        t.landed.fetch_add(1, Ordering::Relaxed);
                        t.merged.fetch_add(1, Ordering::Relaxed);
                        return;
                    }
                } else {
                    let _ = s.repo.withdraw(&o.task.id);
                }
            }
            Outcome::Refused(Refusal::Megafile { path, .. }) => {
                if !splitting.swap(true, Ordering::SeqCst) {
                    split(s.repo, &path, t).await;
                    splitting.store(false, Ordering::SeqCst);
                } else {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
            Outcome::Refused(_) => return,
        }
    }
    t.gave_up.fetch_add(1, Ordering::Relaxed);
}

/// What a split task does here: every line of `path` but the last 50 moves to a part file.
async fn split(repo: &Repo, path: &str, t: &Tally) {
    let Ok((head, Some(f))) = repo.read_head(path).await else {
        return;
    };
    let text = String::from_utf8_lossy(&f.bytes).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    let keep = lines.len().saturating_sub(50);
    let n = t.splits.fetch_add(1, Ordering::Relaxed);
    let part = format!("{}/part{n}.rs", path.trim_end_matches(".rs"));
    let moved: String = lines[..keep].iter().map(|l| format!("{l}\n")).collect();
    let kept: String = lines[keep..].iter().map(|l| format!("{l}\n")).collect();
    let kept = format!("mod part{n};\n{kept}");
    let _ = repo
        .submit(Submission {
            base: head,
            changes: vec![
                Change {
                    path: path.to_owned(),
                    expected: Some(ObjectId::of(Kind::Blob, &f.bytes)),
                    new: Some(kept.into_bytes()),
                    executable: false,
                },
                Change {
                    path: part,
                    expected: None,
                    new: Some(moved.into_bytes()),
                    executable: false,
                },
            ],
            message: format!("split {path}"),
            task: format!("split-{path}"),
            idempotency_key: String::new(),
        })
        .await;
}

#[allow(clippy::print_stdout)] // a bench binary reports on stdout
async fn run(mode: Mode, name: &str) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("dir");
    let budget = if mode.guard { GUARD } else { usize::MAX / 2 };
    let repo = Repo::open(
        &dir.path().join("log"),
        Options {
            line_budget: budget,
            ..Options::default()
        },
    )
    .expect("repo");
    let db = dir.path().join("state.db");
    let ledger = Arc::new(Ledger::open(&db).expect("ledger"));
    let journal = Journal::on(ledger.state_db()).expect("journal");
    let config = LlmConfig::parse(
        "[providers.m]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n\
         [roles.merger]\nprovider = \"m\"\nmodel = \"union\"\n",
    )
    .expect("config");
    let client = Client::from_config(config, &|_| None, None)
        .with_provider("m", Arc::new(Union), WRITERS)
        .with_ledger(ledger, "swarm");
    let settings = common::settings(mode.merger, 4096);
    let events = |_: specc_runtime::Event| {};
    let slots = specc_runtime::Slots::new(dir.path().join("work"));
    let intents = Intents::default();
    let stores = Stores {
        client: &client,
        journal: &journal,
        repo: &repo,
        run: "swarm",
    };
    let s = Services::new(
        stores,
        Arc::new(ProcessRunner::default()),
        &slots,
        &intents,
        &settings,
        &events,
    );
    let orders: Vec<WorkOrder> = (0..WRITERS).map(order).collect();
    intents.add(&orders);
    let tally = Tally::default();
    let splitting = AtomicBool::new(false);
    let mut series = Vec::new();
    let writers = futures_util::future::join_all((0..WRITERS).map(|w| {
        let (s, o, mode, t, sp) = (&s, &orders[w], &mode, &tally, &splitting);
        async move {
            for k in 0..CHANGES {
                change(s, o, w, k, mode, t, sp).await;
            }
        }
    }));
    let watch = async {
        loop {
            let st = repo.stats().await;
            let hottest = st.conflicts.first().cloned();
            let lines = match &hottest {
                Some((p, _)) => repo
                    .read_head(p)
                    .await
                    .ok()
                    .and_then(|(_, f)| f)
                    .map_or(0, |f| f.bytes.iter().filter(|b| **b == b'\n').count()),
                None => 0,
            };
            series.push((
                st.seq,
                tally.conflicts.load(Ordering::Relaxed),
                hottest,
                lines,
            ));
            if tally.landed.load(Ordering::Relaxed) + tally.gave_up.load(Ordering::Relaxed)
                >= WRITERS * CHANGES
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::join!(writers, watch);
    let st = repo.stats().await;
    let (hot, hot_conflicts) = st.conflicts.first().cloned().unwrap_or_default();
    println!("\n## {name}");
    println!(
        "landed {} of {} changes ({} by the merge agent), gave up {}, conflicts {}, splits {}, commits {}",
        tally.landed.load(Ordering::Relaxed),
        WRITERS * CHANGES,
        tally.merged.load(Ordering::Relaxed),
        tally.gave_up.load(Ordering::Relaxed),
        tally.conflicts.load(Ordering::Relaxed),
        tally.splits.load(Ordering::Relaxed),
        st.seq,
    );
    println!("most-conflicted file: {hot} ({hot_conflicts} conflicts)");
    println!("  commits  conflicts  hottest file (its conflicts)  its lines");
    let step = (series.len() / 8).max(1);
    for (i, (seq, conflicts, hottest, lines)) in series.iter().enumerate() {
        if i % step == 0 || i + 1 == series.len() {
            let h = hottest
                .as_ref()
                .map_or_else(|| "-".to_owned(), |(p, n)| format!("{p} ({n})"));
            println!("  {seq:>7}  {conflicts:>9}  {h:<28}  {lines:>9}");
        }
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for (merger, guard, name) in [
        (
            false,
            false,
            "no merge agent, no megafile guard (re-run on conflict)",
        ),
        (false, true, "no merge agent, megafile guard"),
        (true, false, "merge agent, no megafile guard"),
        (true, true, "merge agent and megafile guard"),
    ] {
        rt.block_on(run(Mode { merger, guard }, name));
    }
}
