//! A worker's answers are committed to the state database before its work lands (design:
//! llm.answer-durability). The attempt does not wait for the commits before that, so this
//! is checked from outside, on a second connection to the database: when a task has landed,
//! both of its answers are in the ledger. To make a missing wait show every time, the
//! first `done` answer is given while a second connection holds the database's write lock
//! for 300 ms: its commit stalls, and its task must not land meanwhile.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::json;
use specc_ir::plan::{ChildKind, TaskNode};
use specc_llm::types::Author;
use specc_llm::{
    BoxFuture, Client, Ledger, LlmConfig, LlmError, Provider, Request, Response, Scripted,
    ToolCall, Usage,
};
use specc_runtime::{Event, Plan, Services, Stores, Workers, build};
use specc_sandbox::ProcessRunner;
use specc_state::{Journal, TaskState};
use specc_vcs::Repo;

use specc_tests::{plans, settings};

const LEAVES: usize = 24;

/// The worker answers in a breath: `write` its file, then `done`.
struct Checking {
    db: std::path::PathBuf,
    /// The tasks of the calls, in order.
    seen: Mutex<Vec<String>>,
    /// The thread holding the write lock, once the first `done` is answered.
    stall: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// Holds the database's write lock on a connection of its own for 300 ms; returns once
/// the lock is held.
fn stall_commits(db: &Path) -> std::thread::JoinHandle<()> {
    let (held, wait) = std::sync::mpsc::channel();
    let db = db.to_owned();
    let thread = std::thread::spawn(move || {
        let conn = rusqlite::Connection::open(&db).expect("a second connection");
        conn.execute_batch("BEGIN EXCLUSIVE")
            .expect("the write lock");
        held.send(()).expect("held");
        std::thread::sleep(std::time::Duration::from_millis(300));
        conn.execute_batch("COMMIT").expect("commit");
    });
    wait.recv().expect("the lock is held");
    thread
}

fn committed(db: &Path, task: &str) -> usize {
    Ledger::open_existing(db)
        .expect("a second connection")
        .rows()
        .expect("rows")
        .iter()
        .filter(|r| r.task == task && r.outcome == "ok")
        .count()
}

impl Provider for Checking {
    fn name(&self) -> &str {
        "w"
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        let had = request
            .messages
            .iter()
            .filter(|m| m.author == Author::Assistant)
            .count();
        let user = request
            .messages
            .iter()
            .find(|m| m.author == Author::User)
            .map_or("", |m| m.text.as_str());
        let task = user.split('`').nth(1).unwrap_or("?").to_owned();
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(task.clone());
        }
        if had == 1
            && let Ok(mut stall) = self.stall.lock()
            && stall.is_none()
        {
            *stall = Some(stall_commits(&self.db));
        }
        let call = match had {
            0 => ToolCall {
                id: "1".into(),
                name: "write".into(),
                arguments: json!({"path": format!("{task}.txt"), "content": "x\n"}),
            },
            _ => ToolCall {
                id: "2".into(),
                name: "done".into(),
                arguments: json!({"summary": "wrote it"}),
            },
        };
        let mut r = Scripted::text(
            "",
            Usage {
                input: 10,
                cached_input: 0,
                output: 1,
            },
        );
        r.tool_calls = vec![call];
        Box::pin(async move { Ok(r) })
    }
}

fn plan() -> Plan {
    let root = plans::root();
    let leaves: Vec<TaskNode> = (0..LEAVES)
        .map(|i| TaskNode {
            id: format!("l{i:02}"),
            parent: Some("t".into()),
            kind: ChildKind::Work,
            role: "worker".into(),
            model: "w".into(),
            title: format!("file {i}"),
            instructions: format!("Write l{i:02}.txt."),
            write_scope: vec![format!("l{i:02}.txt")],
            fingerprint: format!("fp{i}"),
            budget: 1000,
            ..root.clone()
        })
        .collect();
    let orders = leaves.iter().map(plans::order).collect();
    Plan {
        tasks: std::iter::once(root).chain(leaves).collect(),
        orders,
        seed: [("README.md".to_owned(), "answers\n".to_owned())].into(),
        force: Vec::new(),
        spec: Default::default(),
    }
}

#[test]
fn a_tasks_answers_are_committed_before_its_work_lands() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("state.db");
    let ledger = Arc::new(Ledger::open(&db).expect("ledger"));
    let journal = Journal::on(ledger.state_db()).expect("journal");
    std::fs::create_dir_all(dir.path().join("vcs")).expect("dir");
    let repo =
        Repo::open(&dir.path().join("vcs/log"), specc_vcs::Options::default()).expect("repo");
    let config = LlmConfig::parse(
        "[providers.w]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n\
         [roles.worker]\nprovider = \"w\"\nmodel = \"w\"\n\
         [prices.w]\ninput = 1.0\noutput = 2.0\n",
    )
    .expect("config");
    let worker = Arc::new(Checking {
        db: db.clone(),
        seen: Mutex::new(Vec::new()),
        stall: Mutex::new(None),
    });
    let client = Client::from_config(config, &|_| None, None)
        .with_provider("w", worker.clone(), 8)
        .with_ledger(ledger, "run");
    let policy = settings::settings(false, 1000);
    let landed: Mutex<Vec<(String, usize)>> = Mutex::new(Vec::new());
    let events = |e: Event| {
        if let Event::Landed { task, .. } = e {
            let now = committed(&db, &task);
            if let Ok(mut l) = landed.lock() {
                l.push((task, now));
            }
        }
    };
    let slots = specc_runtime::Slots::new(dir.path().join("work"));
    let intents = specc_runtime::Intents::default();
    let stores = Stores {
        client: &client,
        journal: &journal,
        repo: &repo,
        run: "run",
    };
    let services = Services::new(
        stores,
        Arc::new(ProcessRunner::default()),
        &slots,
        &intents,
        &policy,
        &events,
    );
    journal.start_run("run", "answers").expect("run");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let report = rt.block_on(build(&services, plan(), Workers::Local { jobs: 8 }));
    assert_eq!(
        report.count(TaskState::Landed),
        LEAVES,
        "{:?}",
        report.stopped
    );
    let stalled = worker.stall.lock().expect("stall").take().expect("a stall");
    stalled.join().expect("the stall ended");
    let seen = worker.seen.lock().expect("seen").clone();
    assert_eq!(seen.len(), 2 * LEAVES, "two calls a task: {seen:?}");
    let landed = landed.lock().expect("landed").clone();
    assert_eq!(landed.len(), LEAVES);
    for (task, now) in &landed {
        assert_eq!(*now, 2, "{task} landed with both its answers committed");
    }
}
