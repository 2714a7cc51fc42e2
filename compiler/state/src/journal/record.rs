//! The journal's writes: runs, tasks (and what landed), attempts, steps, the follow-ups
//! a build added and the texts its seed wrote. Every model response and tool result is
//! written before the next step (WAL, synchronous=NORMAL): what a resumed build replays
//! instead of paying for it again. The journal is the only writer of build state.
//! design: runtime.journal

use std::time::{SystemTime, UNIX_EPOCH};

use super::handle::{Journal, JournalError};
use super::kinds::{StepAt, StepKind, TaskRef, TaskState, step_write};
use crate::args;

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

impl Journal {
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
        let (reason, commit) = (self.screen_text(reason), commit.map(str::to_owned));
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
                "INSERT INTO attempts (run, task, attempt, role, base, state, started_unix,
                     started_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6, ?7)
                 ON CONFLICT (run, task, attempt) DO UPDATE SET role = ?4, base = ?5,
                     state = 'running', reason = NULL, started_unix = ?6, finished_unix = NULL,
                     started_ms = ?7, finished_ms = NULL",
                args![&run, &task, attempt, &role, &base, now(), now_ms()],
            )
            .map(drop)
        })?;
        self.note_attempt(&noted.0, &noted.1);
        Ok(())
    }

    /// What `attempt` was told as it started: its opening messages (a JSON list), as sent.
    /// A resumed attempt, done again, keeps the first record: that is what the model read.
    pub fn attempt_context(
        &self,
        run: &str,
        task: &str,
        attempt: u32,
        messages: &serde_json::Value,
    ) -> Result<(), JournalError> {
        let messages = self.screen_body(messages);
        let (run, task, messages) = (run.to_owned(), task.to_owned(), messages.to_string());
        self.defer(move |c| {
            c.execute(
                "INSERT INTO contexts (run, task, attempt, messages) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (run, task, attempt) DO NOTHING",
                args![&run, &task, attempt, &messages],
            )
            .map(drop)
        })
    }

    /// The opening messages an earlier process journaled for `attempt`, if any: a resumed
    /// attempt sends them again as they were (design: runtime.resume). Reads what is
    /// committed: this process journals each attempt's context once, as it starts.
    pub fn journaled_context(
        &self,
        run: &str,
        task: &str,
        attempt: u32,
    ) -> Result<Option<serde_json::Value>, JournalError> {
        self.read(|c| {
            let rows = c.query(
                "SELECT messages FROM contexts WHERE run = ?1 AND task = ?2 AND attempt = ?3",
                args![run, task, attempt],
            )?;
            Ok(rows
                .first()
                .map(|r| r.text(0))
                .transpose()?
                .and_then(|t| serde_json::from_str(&t).ok()))
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
        let (run, task, state) = (run.to_owned(), task.to_owned(), state.to_owned());
        let reason = self.screen_text(reason);
        self.defer(move |c| {
            c.execute(
                "UPDATE attempts SET state = ?4, reason = ?5, finished_unix = ?6, finished_ms = ?7
                 WHERE run = ?1 AND task = ?2 AND attempt = ?3",
                args![
                    &run,
                    &task,
                    attempt,
                    &state,
                    reason.as_deref(),
                    now(),
                    now_ms()
                ],
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
        let body = self.screen_body(body);
        self.db
            .defer(step_write(
                StepAt {
                    run,
                    task,
                    attempt,
                    step,
                },
                kind,
                &body,
            ))
            .map_err(JournalError::State)
    }

    /// Queues a task the build added while it ran (a reviewer's follow-up), so that a
    /// resumed run schedules it again.
    pub fn add_followup(
        &self,
        run: &str,
        task: &str,
        order: &impl serde::Serialize,
        why: &str,
    ) -> Result<(), JournalError> {
        let value =
            serde_json::to_value(order).map_err(|e| JournalError::Damaged(e.to_string()))?;
        let body = self.screen_body(&value).to_string();
        let (run, task, why) = (run.to_owned(), task.to_owned(), why.to_owned());
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
    pub fn followups<T: serde::de::DeserializeOwned>(
        &self,
        run: &str,
    ) -> Result<Vec<(T, String)>, JournalError> {
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
