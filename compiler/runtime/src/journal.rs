//! The execution journal in `.specc/state.db`: runs, tasks, attempts and their steps. Every
//! model response and tool result is written here (WAL, synchronous=NORMAL) before the next
//! step: what resuming a killed build will replay instead of paying for it again (the next
//! stage; today a killed build re-runs unfinished tasks). The journal is the only writer of
//! build state.
//! design: runtime.journal

use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use specc_llm::args;
use specc_llm::sql::Sql;
use specc_llm::{StateDb, StateError};

pub use crate::journal_read::{StepRow, TaskRow};

/// The journal could not be written or read.
#[derive(Debug, Clone, PartialEq)]
pub enum JournalError {
    /// The state database failed (see [`StateError`]).
    State(StateError),
    /// A journaled value does not decode: the journal is damaged or from another version.
    Damaged(String),
}

impl std::fmt::Display for JournalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JournalError::State(e) => write!(f, "the build journal: {e}"),
            JournalError::Damaged(what) => write!(f, "the build journal is damaged: {what}"),
        }
    }
}

impl std::error::Error for JournalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            JournalError::State(e) => Some(e),
            JournalError::Damaged(_) => None,
        }
    }
}

impl From<StateError> for JournalError {
    fn from(e: StateError) -> JournalError {
        JournalError::State(e)
    }
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
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
    /// The merge agent's work on a conflicted submission, and its outcome.
    Merge,
    /// The reviewers' findings on a landing, and the follow-ups they called for.
    Review,
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
            StepKind::Merge => "merge",
            StepKind::Review => "review",
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

/// The write of a step: queued by the journal, or by the ledger in the transaction that
/// records the call the step answers (`Client::call_journaled`).
pub fn step_write(at: StepAt<'_>, kind: StepKind, body: &serde_json::Value) -> specc_llm::Write {
    let (run, task, attempt, step) = (at.run.to_owned(), at.task.to_owned(), at.attempt, at.step);
    let body = body.to_string();
    Box::new(move |c: &mut dyn Sql| {
        c.execute(
            "INSERT INTO steps (run, task, attempt, step, kind, body)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (run, task, attempt, step) DO UPDATE SET kind = ?5, body = ?6",
            args![&run, &task, attempt, step, kind.as_str(), &body],
        )
        .map(drop)
    })
}

/// The task a record is about.
#[derive(Clone, Copy, Debug)]
pub struct TaskRef<'a> {
    pub id: &'a str,
    pub title: &'a str,
    pub fingerprint: &'a str,
}

pub struct Journal {
    db: Arc<StateDb>,
    /// The tasks with an attempt in one run (`journal_resume`).
    pub(crate) attempted: std::sync::Mutex<Option<crate::journal_resume::Attempted>>,
}

impl Journal {
    /// Opens (creating) the journal's tables in the state database at `path`.
    pub fn open(path: &Path) -> Result<Journal, JournalError> {
        let db = StateDb::open(path).map_err(|e| {
            JournalError::State(StateError::Open(format!("{}: {e}", path.display())))
        })?;
        Journal::on(Arc::new(db))
    }

    /// The journal on a state database another writer shares (the ledger's, so that one
    /// commit takes both).
    pub fn on(db: Arc<StateDb>) -> Result<Journal, JournalError> {
        // The state database's one schema (design: state.backends).
        db.now(specc_llm::schema::migrate)
            .map_err(JournalError::State)?;
        Ok(Journal {
            db,
            attempted: Default::default(),
        })
    }

    /// Runs `f` after committing every queued write (a read that must see them).
    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<T, StateError>,
    ) -> Result<T, JournalError> {
        self.db.now(f).map_err(JournalError::State)
    }

    /// Runs `f` on what is committed (a read of what earlier processes wrote).
    pub(crate) fn read<T>(
        &self,
        f: impl FnOnce(&mut dyn Sql) -> Result<T, StateError>,
    ) -> Result<T, JournalError> {
        self.db.read(f).map_err(JournalError::State)
    }

    /// Queues a write; it is committed with the next batch ([`Journal::durable`]). Refused
    /// once the database lost a batch: the build must stop.
    fn defer(
        &self,
        w: impl FnOnce(&mut dyn Sql) -> Result<(), StateError> + Send + 'static,
    ) -> Result<(), JournalError> {
        self.db.defer(Box::new(w)).map_err(JournalError::State)
    }

    /// Returns once every write queued so far is committed.
    pub async fn durable(&self) -> Result<(), JournalError> {
        self.db.durable().await.map_err(JournalError::State)
    }

    /// Commits every queued write now.
    pub fn commit(&self) -> Result<(), JournalError> {
        self.db.commit().map_err(JournalError::State)
    }

    pub fn start_run(&self, run: &str, spec: &str) -> Result<(), JournalError> {
        let (run, spec) = (run.to_owned(), spec.to_owned());
        self.defer(move |c| {
            c.execute(
                "INSERT INTO runs (run, spec, started_unix, status)
                 VALUES (?1, ?2, ?3, 'running')
                 ON CONFLICT (run) DO UPDATE SET spec = ?2, started_unix = ?3,
                     finished_unix = NULL, status = 'running'",
                args![&run, &spec, now()],
            )
            .map(drop)
        })?;
        self.commit()
    }

    pub fn finish_run(&self, run: &str, status: &str) -> Result<(), JournalError> {
        let (run, status) = (run.to_owned(), status.to_owned());
        self.defer(move |c| {
            c.execute(
                "UPDATE runs SET finished_unix = ?2, status = ?3 WHERE run = ?1",
                args![&run, now(), &status],
            )
            .map(drop)
        })?;
        self.commit()
    }

    /// Queues a task's new state (committed with the next batch).
    pub fn set_task(
        &self,
        run: &str,
        t: TaskRef<'_>,
        state: TaskState,
        reason: Option<&str>,
        commit: Option<&str>,
    ) -> Result<(), JournalError> {
        let (run, task, title, fingerprint) = (
            run.to_owned(),
            t.id.to_owned(),
            t.title.to_owned(),
            t.fingerprint.to_owned(),
        );
        let (reason, commit) = (reason.map(str::to_owned), commit.map(str::to_owned));
        let landed_ms = (state == TaskState::Landed).then(now_ms);
        self.defer(move |c| {
            c.execute(
                "INSERT INTO tasks (run, task, title, fingerprint, state, reason, commit_id,
                     landed_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
                 ON CONFLICT (run, task) DO UPDATE SET state = ?5, reason = ?6,
                     commit_id = COALESCE(?7, tasks.commit_id), fingerprint = ?4,
                     landed_ms = COALESCE(?8, tasks.landed_ms)",
                args![
                    &run,
                    &task,
                    &title,
                    &fingerprint,
                    state.as_str(),
                    reason.as_deref(),
                    commit.as_deref(),
                    landed_ms
                ],
            )?;
            if state == TaskState::Landed {
                c.execute(
                    "INSERT INTO landed (task, fingerprint, commit_id, run)
                     VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT (task) DO UPDATE SET fingerprint = ?2, commit_id = ?3,
                         run = ?4",
                    args![&task, &fingerprint, commit.as_deref(), &run],
                )?;
            }
            Ok(())
        })
    }

    /// [`Journal::set_task`] for many tasks (a build's first states), committed now.
    pub fn set_tasks(
        &self,
        run: &str,
        tasks: &[(TaskRef<'_>, TaskState)],
    ) -> Result<(), JournalError> {
        let run = run.to_owned();
        let rows: Vec<(String, String, String, TaskState)> = tasks
            .iter()
            .map(|(t, st)| {
                (
                    t.id.to_owned(),
                    t.title.to_owned(),
                    t.fingerprint.to_owned(),
                    *st,
                )
            })
            .collect();
        self.defer(move |c| {
            for (task, title, fingerprint, state) in &rows {
                c.execute(
                    "INSERT INTO tasks (run, task, title, fingerprint, state, reason, commit_id)
                     VALUES (?1, ?2, ?3, ?4, ?5, NULL, NULL)
                     ON CONFLICT (run, task) DO UPDATE SET state = ?5, reason = NULL,
                         fingerprint = ?4",
                    args![&run, task, title, fingerprint, state.as_str()],
                )?;
            }
            Ok(())
        })?;
        self.commit()
    }

    /// Every task's last landed fingerprint, in any run.
    pub fn landed_fingerprints(
        &self,
    ) -> Result<std::collections::HashMap<String, String>, JournalError> {
        self.with(|c| {
            c.query("SELECT task, fingerprint FROM landed", &[])?
                .iter()
                .map(|r| Ok((r.text(0)?, r.text(1)?)))
                .collect()
        })
    }

    /// The fingerprint task `task` last landed with, in any run.
    pub fn landed_fingerprint(&self, task: &str) -> Result<Option<String>, JournalError> {
        self.with(|c| {
            c.query_opt(
                "SELECT fingerprint FROM landed WHERE task = ?1",
                args![task],
            )?
            .map(|r| r.text(0))
            .transpose()
        })
    }

    /// Every task that ever landed, by id.
    pub fn landed_tasks(&self) -> Result<Vec<String>, JournalError> {
        self.with(|c| {
            c.query("SELECT task FROM landed ORDER BY task", &[])?
                .iter()
                .map(|r| r.text(0))
                .collect()
        })
    }

    /// Queues an attempt's start (committed with the next batch, which is before its
    /// first model call: the reservation commits the queue).
    pub fn start_attempt(
        &self,
        run: &str,
        task: &str,
        attempt: u32,
        role: &str,
        base: &str,
    ) -> Result<(), JournalError> {
        let (run, task, role, base) = (
            run.to_owned(),
            task.to_owned(),
            role.to_owned(),
            base.to_owned(),
        );
        let noted = (run.clone(), task.clone());
        self.defer(move |c| {
            c.execute(
                "INSERT INTO attempts (run, task, attempt, role, base, state, started_unix)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6)
                 ON CONFLICT (run, task, attempt) DO UPDATE SET role = ?4, base = ?5,
                     state = 'running', reason = NULL, started_unix = ?6, finished_unix = NULL",
                args![&run, &task, attempt, &role, &base, now()],
            )
            .map(drop)
        })?;
        self.note_attempt(&noted.0, &noted.1);
        Ok(())
    }

    pub fn end_attempt(
        &self,
        run: &str,
        task: &str,
        attempt: u32,
        state: &str,
        reason: Option<&str>,
    ) -> Result<(), JournalError> {
        let (run, task, state) = (run.to_owned(), task.to_owned(), state.to_owned());
        let reason = reason.map(str::to_owned);
        self.defer(move |c| {
            c.execute(
                "UPDATE attempts SET state = ?4, reason = ?5, finished_unix = ?6
                 WHERE run = ?1 AND task = ?2 AND attempt = ?3",
                args![&run, &task, attempt, &state, reason.as_deref(), now()],
            )
            .map(drop)
        })
    }

    /// Queues a step. It is committed with the next batch: before the attempt's next model
    /// call, whose reservation commits the queue, and so before anything could be paid for
    /// twice.
    pub fn step(
        &self,
        run: &str,
        task: &str,
        attempt: u32,
        step: u32,
        kind: StepKind,
        body: &serde_json::Value,
    ) -> Result<(), JournalError> {
        self.db
            .defer(step_write(
                StepAt {
                    run,
                    task,
                    attempt,
                    step,
                },
                kind,
                body,
            ))
            .map_err(JournalError::State)
    }

    /// Queues a task the build added while it ran (a reviewer's follow-up), so that a
    /// resumed run schedules it again.
    pub fn add_followup(
        &self,
        run: &str,
        order: &crate::context::WorkOrder,
        why: &str,
    ) -> Result<(), JournalError> {
        let body =
            serde_json::to_string(order).map_err(|e| JournalError::Damaged(e.to_string()))?;
        let (run, task, why) = (run.to_owned(), order.task.id.clone(), why.to_owned());
        self.defer(move |c| {
            c.execute(
                "INSERT INTO followups (run, task, why, work_order, seq)
                 VALUES (?1, ?2, ?3, ?4,
                     (SELECT COALESCE(MAX(seq), 0) + 1 FROM followups WHERE run = ?1))
                 ON CONFLICT (run, task) DO UPDATE SET why = ?3, work_order = ?4,
                     seq = excluded.seq",
                args![&run, &task, &why, &body],
            )
            .map(drop)
        })
    }

    /// The follow-ups `run` added, in the order it added them.
    pub fn followups(
        &self,
        run: &str,
    ) -> Result<Vec<(crate::context::WorkOrder, String)>, JournalError> {
        let rows: Vec<(String, String)> = self.with(|c| {
            c.query(
                "SELECT work_order, why FROM followups WHERE run = ?1 ORDER BY seq, task",
                args![run],
            )?
            .iter()
            .map(|r| Ok((r.text(0)?, r.text(1)?)))
            .collect()
        })?;
        rows.into_iter()
            .map(|(body, why)| {
                serde_json::from_str(&body)
                    .map(|o| (o, why))
                    .map_err(|e| JournalError::Damaged(format!("a journaled follow-up: {e}")))
            })
            .collect()
    }

    /// The text the last seed wrote at `path` (the plan's), if any.
    pub fn seeded(&self, path: &str) -> Result<Option<String>, JournalError> {
        self.with(|c| {
            c.query_opt("SELECT text FROM seeded WHERE path = ?1", args![path])?
                .map(|r| r.text(0))
                .transpose()
        })
    }

    /// Queues the text the seed wrote at `path`.
    pub fn set_seeded(&self, path: &str, text: &str) -> Result<(), JournalError> {
        let (path, text) = (path.to_owned(), text.to_owned());
        self.defer(move |c| {
            c.execute(
                "INSERT INTO seeded (path, text) VALUES (?1, ?2)
                 ON CONFLICT (path) DO UPDATE SET text = ?2",
                args![&path, &text],
            )
            .map(drop)
        })
    }

    /// The ids of every follow-up any run added.
    pub fn followup_ids(&self) -> Result<Vec<String>, JournalError> {
        self.with(|c| {
            c.query("SELECT DISTINCT task FROM followups", &[])?
                .iter()
                .map(|r| r.text(0))
                .collect()
        })
    }
}
