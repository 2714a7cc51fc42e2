//! The execution journal in `.specc/state.db`: runs, tasks, attempts and their steps. Every
//! model response and tool result is written here (WAL, synchronous=NORMAL) before the next
//! step: what resuming a killed build will replay instead of paying for it again (the next
//! stage; today a killed build re-runs unfinished tasks). The journal is the only writer of
//! build state.
//! design: runtime.journal

use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, params};

/// The journal could not be written or read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournalError(pub String);

impl std::fmt::Display for JournalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the build journal: {}", self.0)
    }
}

fn db(e: rusqlite::Error) -> JournalError {
    JournalError(e.to_string())
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// What a step of an attempt was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// The model's response (text and tool calls).
    Model,
    /// A tool's result.
    Tool,
    /// The model call failed (the error is the body).
    ModelError,
    /// An acceptance run.
    Acceptance,
    /// The submission to the VCS and its outcome.
    Submit,
    /// The planner's new instructions, before the attempt that uses them (step 0).
    Replan,
}

impl StepKind {
    fn as_str(self) -> &'static str {
        match self {
            StepKind::Model => "model",
            StepKind::Tool => "tool",
            StepKind::ModelError => "model_error",
            StepKind::Acceptance => "acceptance",
            StepKind::Submit => "submit",
            StepKind::Replan => "replan",
        }
    }
}

/// A task's state in a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskState {
    Pending,
    Running,
    Landed,
    /// Landed in an earlier build with the same fingerprint.
    UpToDate,
    Failed,
    Skipped,
    /// Not started or not finished because the build stopped (budget).
    Stopped,
}

impl TaskState {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Pending => "pending",
            TaskState::Running => "running",
            TaskState::Landed => "landed",
            TaskState::UpToDate => "up_to_date",
            TaskState::Failed => "failed",
            TaskState::Skipped => "skipped",
            TaskState::Stopped => "stopped",
        }
    }
}

/// Where a step goes.
#[derive(Clone, Copy, Debug)]
pub struct StepAt<'a> {
    pub run: &'a str,
    pub task: &'a str,
    pub attempt: u32,
    pub step: u32,
}

/// Writes a step on `c`: the journal's own connection, or the ledger's transaction that
/// records the call the step answers (`Client::call_journaled`).
pub fn insert_step(
    c: &Connection,
    at: StepAt<'_>,
    kind: StepKind,
    body: &serde_json::Value,
) -> rusqlite::Result<()> {
    c.prepare_cached(
        "INSERT OR REPLACE INTO steps (run, task, attempt, step, kind, body) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?.execute(params![at.run, at.task, at.attempt, at.step, kind.as_str(), body.to_string()],
    )
    .map(drop)
}

/// One step as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepRow {
    pub task: String,
    pub attempt: u32,
    pub step: u32,
    pub kind: String,
    pub body: String,
}

/// The task a record is about.
#[derive(Clone, Copy, Debug)]
pub struct TaskRef<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub fingerprint: &'a str,
}

/// One task as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaskRow {
    pub task: String,
    pub state: String,
    pub reason: Option<String>,
}

pub struct Journal {
    conn: Mutex<Connection>,
}

impl Journal {
    /// Opens (creating) the journal's tables in the state database at `path`.
    pub fn open(path: &Path) -> Result<Journal, JournalError> {
        let conn = specc_llm::open_state_db(path).map_err(|e| JournalError(e.to_string()))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS runs (
                 run TEXT PRIMARY KEY, spec TEXT NOT NULL, started_unix INTEGER NOT NULL,
                 finished_unix INTEGER, status TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS tasks (
                 run TEXT NOT NULL, task TEXT NOT NULL, title TEXT NOT NULL,
                 fingerprint TEXT NOT NULL, state TEXT NOT NULL, reason TEXT,
                 commit_id TEXT, PRIMARY KEY (run, task));
             CREATE TABLE IF NOT EXISTS attempts (
                 run TEXT NOT NULL, task TEXT NOT NULL, attempt INTEGER NOT NULL,
                 role TEXT NOT NULL, base TEXT NOT NULL, state TEXT NOT NULL, reason TEXT,
                 started_unix INTEGER NOT NULL, finished_unix INTEGER,
                 PRIMARY KEY (run, task, attempt));
             CREATE TABLE IF NOT EXISTS steps (
                 run TEXT NOT NULL, task TEXT NOT NULL, attempt INTEGER NOT NULL,
                 step INTEGER NOT NULL, kind TEXT NOT NULL, body TEXT NOT NULL,
                 PRIMARY KEY (run, task, attempt, step));
             CREATE TABLE IF NOT EXISTS landed (
                 task TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, commit_id TEXT,
                 run TEXT NOT NULL);",
        )
        .map_err(db)?;
        Ok(Journal {
            conn: Mutex::new(conn),
        })
    }

    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, JournalError> {
        let conn = self
            .conn
            .lock()
            .map_err(|_| JournalError("lock poisoned".into()))?;
        f(&conn).map_err(db)
    }

    pub fn start_run(&self, run: &str, spec: &str) -> Result<(), JournalError> {
        self.with(|c| {
            c.prepare_cached(
                "INSERT OR REPLACE INTO runs (run, spec, started_unix, status) VALUES (?1, ?2, ?3, 'running')")?.execute(params![run, spec, now()],
            )
            .map(drop)
        })
    }

    pub fn finish_run(&self, run: &str, status: &str) -> Result<(), JournalError> {
        self.with(|c| {
            c.prepare_cached("UPDATE runs SET finished_unix = ?2, status = ?3 WHERE run = ?1")?
                .execute(params![run, now(), status])
                .map(drop)
        })
    }

    pub fn set_task(
        &self,
        run: &str,
        t: TaskRef<'_>,
        state: TaskState,
        reason: Option<&str>,
        commit: Option<&str>,
    ) -> Result<(), JournalError> {
        let TaskRef {
            id: task,
            title,
            fingerprint,
        } = t;
        self.with(|c| {
            c.prepare_cached(
                "INSERT INTO tasks (run, task, title, fingerprint, state, reason, commit_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (run, task) DO UPDATE SET state = ?5, reason = ?6,
                     commit_id = COALESCE(?7, commit_id), fingerprint = ?4")?.execute(params![run, task, title, fingerprint, state.as_str(), reason, commit],
            )?;
            if state == TaskState::Landed {
                c.prepare_cached(
                    "INSERT OR REPLACE INTO landed (task, fingerprint, commit_id, run) VALUES (?1, ?2, ?3, ?4)")?.execute(params![task, fingerprint, commit, run],
                )?;
            }
            Ok(())
        })
    }

    /// [`Journal::set_task`] for many tasks in one transaction (a build's first states).
    pub fn set_tasks(
        &self,
        run: &str,
        tasks: &[(TaskRef<'_>, TaskState)],
    ) -> Result<(), JournalError> {
        self.with(|c| {
            let tx = c.unchecked_transaction()?;
            {
                let mut insert = tx.prepare_cached(
                    "INSERT INTO tasks (run, task, title, fingerprint, state, reason, commit_id)
                     VALUES (?1, ?2, ?3, ?4, ?5, NULL, NULL)
                     ON CONFLICT (run, task) DO UPDATE SET state = ?5, reason = NULL,
                         fingerprint = ?4",
                )?;
                for (t, state) in tasks {
                    insert.execute(params![run, t.id, t.title, t.fingerprint, state.as_str()])?;
                }
            }
            tx.commit()
        })
    }

    /// Every task's last landed fingerprint, in any run.
    pub fn landed_fingerprints(
        &self,
    ) -> Result<std::collections::HashMap<String, String>, JournalError> {
        self.with(|c| {
            let mut q = c.prepare("SELECT task, fingerprint FROM landed")?;
            let rows = q.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect()
        })
    }

    /// The fingerprint task `task` last landed with, in any run.
    pub fn landed_fingerprint(&self, task: &str) -> Result<Option<String>, JournalError> {
        self.with(|c| {
            c.prepare_cached("SELECT fingerprint FROM landed WHERE task = ?1")?
                .query_row(params![task], |r| r.get(0))
                .optional()
        })
    }

    /// Every task that ever landed, by id.
    pub fn landed_tasks(&self) -> Result<Vec<String>, JournalError> {
        self.with(|c| {
            let mut q = c.prepare("SELECT task FROM landed ORDER BY task")?;
            let rows = q.query_map([], |r| r.get(0))?;
            rows.collect()
        })
    }

    pub fn start_attempt(
        &self,
        run: &str,
        task: &str,
        attempt: u32,
        role: &str,
        base: &str,
    ) -> Result<(), JournalError> {
        self.with(|c| {
            c.prepare_cached(
                "INSERT OR REPLACE INTO attempts (run, task, attempt, role, base, state, started_unix)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6)")?.execute(params![run, task, attempt, role, base, now()],
            )
            .map(drop)
        })
    }

    pub fn end_attempt(
        &self,
        run: &str,
        task: &str,
        attempt: u32,
        state: &str,
        reason: Option<&str>,
    ) -> Result<(), JournalError> {
        self.with(|c| {
            c.prepare_cached(
                "UPDATE attempts SET state = ?4, reason = ?5, finished_unix = ?6
                 WHERE run = ?1 AND task = ?2 AND attempt = ?3",
            )?
            .execute(params![run, task, attempt, state, reason, now()])
            .map(drop)
        })
    }

    /// Appends a step; durable when this returns.
    pub fn step(
        &self,
        run: &str,
        task: &str,
        attempt: u32,
        step: u32,
        kind: StepKind,
        body: &serde_json::Value,
    ) -> Result<(), JournalError> {
        let at = StepAt {
            run,
            task,
            attempt,
            step,
        };
        self.with(|c| insert_step(c, at, kind, body))
    }

    /// Every step of `run`, in order.
    pub fn steps(&self, run: &str) -> Result<Vec<StepRow>, JournalError> {
        self.with(|c| {
            let mut q = c.prepare(
                "SELECT task, attempt, step, kind, body FROM steps WHERE run = ?1
                 ORDER BY task, attempt, step",
            )?;
            let rows = q.query_map(params![run], |r| {
                Ok(StepRow {
                    task: r.get(0)?,
                    attempt: r.get(1)?,
                    step: r.get(2)?,
                    kind: r.get(3)?,
                    body: r.get(4)?,
                })
            })?;
            rows.collect()
        })
    }

    /// Every task of `run`, by id.
    pub fn tasks(&self, run: &str) -> Result<Vec<TaskRow>, JournalError> {
        self.with(|c| {
            let mut q =
                c.prepare("SELECT task, state, reason FROM tasks WHERE run = ?1 ORDER BY task")?;
            let rows = q.query_map(params![run], |r| {
                Ok(TaskRow {
                    task: r.get(0)?,
                    state: r.get(1)?,
                    reason: r.get(2)?,
                })
            })?;
            rows.collect()
        })
    }
}
