//! What a build shows while it runs and when it ends: the live display on a terminal
//! (`screen`: tasks, running attempts and their steps, dollars against the budget), one
//! plain line per event elsewhere, or one JSON object per event on stdout with
//! `--message-format json`.
//! design: driver.build
//! design: driver.progress

use std::cell::RefCell;
use std::io::Write;
use std::time::Instant;

use specc_runtime::Event;

use super::screen::{Counts, Screen};

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Plain,
    Json,
    Bar,
}

enum Shown {
    Plain,
    Json,
    Bar(Screen),
}

pub(super) struct Progress<'w> {
    shown: Shown,
    started: Instant,
    /// Where plain lines go (stderr) and JSON events (stdout).
    lines: RefCell<&'w mut dyn Write>,
    counts: RefCell<Counts>,
    total: usize,
}

impl<'w> Progress<'w> {
    pub(super) fn new(mode: Mode, total: usize, lines: &'w mut dyn Write) -> Progress<'w> {
        let shown = match mode {
            Mode::Plain => Shown::Plain,
            Mode::Json => Shown::Json,
            Mode::Bar => Shown::Bar(Screen::new(total)),
        };
        Progress {
            shown,
            started: Instant::now(),
            lines: RefCell::new(lines),
            counts: RefCell::default(),
            total,
        }
    }

    /// Shows spending next to the bar; `dollars` is asked only when a bar shows it.
    pub(super) fn spent(&self, dollars: impl FnOnce() -> f64, cap: Option<f64>) {
        if let Shown::Bar(screen) = &self.shown {
            screen.spent(dollars(), cap, &self.counts.borrow());
        }
    }

    pub(super) fn event(&self, e: &Event) {
        {
            let mut c = self.counts.borrow_mut();
            match e {
                Event::AttemptStarted { attempt: 1, .. } => c.running += 1,
                Event::Landed { .. } | Event::Failed { .. } | Event::TaskStopped { .. } => {
                    c.running = c.running.saturating_sub(1);
                    c.done = (c.done + 1).min(self.total);
                    if matches!(e, Event::Failed { .. }) {
                        c.failed += 1;
                    }
                }
                Event::UpToDate { .. } | Event::Skipped { .. } => {
                    c.done = (c.done + 1).min(self.total);
                }
                Event::Parked { .. } => c.running = c.running.saturating_sub(1),
                _ => {}
            }
        }
        let secs = self.started.elapsed().as_secs_f64();
        let step = matches!(e, Event::Step { .. });
        match &self.shown {
            // A step is for the live display only: lines and JSON events keep one per
            // thing that happened to a task.
            Shown::Json | Shown::Plain if step => {}
            Shown::Json => {
                let mut w = self.lines.borrow_mut();
                let _ = writeln!(w, "{}", json(e, secs));
            }
            Shown::Plain => {
                let mut w = self.lines.borrow_mut();
                let _ = writeln!(w, "[{secs:>6.1}s] {}", line(e));
            }
            Shown::Bar(screen) => {
                screen.event(e, &self.counts.borrow());
                if !step {
                    screen.println(&line(e));
                }
            }
        }
    }

    /// A line that is not a scheduler event (an eval point): `text` for people, `json` for
    /// `--message-format json`.
    pub(super) fn note(&self, text: &str, json: serde_json::Value) {
        let secs = self.started.elapsed().as_secs_f64();
        match &self.shown {
            Shown::Json => {
                let mut json = json;
                json["seconds"] = serde_json::json!((secs * 1000.0).round() / 1000.0);
                let _ = writeln!(self.lines.borrow_mut(), "{json}");
            }
            Shown::Plain => {
                let _ = writeln!(self.lines.borrow_mut(), "[{secs:>6.1}s] {text}");
            }
            Shown::Bar(screen) => screen.println(text),
        }
    }

    pub(super) fn finish(&self) {
        if let Shown::Bar(screen) = &self.shown {
            screen.finish();
        }
    }
}

fn short(commit: &Option<String>) -> String {
    commit.as_deref().map_or_else(
        || "no changes".to_owned(),
        |c| format!("commit {}", &c[..c.len().min(12)]),
    )
}

/// One event in words.
pub(super) fn line(e: &Event) -> String {
    match e {
        Event::Seeded { commit } => {
            format!("seeded the repository with the plan ({})", short(commit))
        }
        Event::UpToDate { task } => format!("up to date  {task}"),
        Event::NoLongerPlanned { task } => {
            format!("retired     {task}: no longer in the plan; the code it landed stays")
        }
        Event::Rechecked {
            task, passed: true, ..
        } => format!("re-checked  {task}: its checks pass on the new head; still up to date"),
        Event::Rechecked { task, reason, .. } => format!(
            "re-checked  {task}: {}; it runs again",
            reason.as_deref().unwrap_or("its checks fail")
        ),
        Event::AttemptStarted {
            task,
            attempt,
            role,
        } => {
            format!("started     {task} (attempt {attempt}, {role})")
        }
        Event::AttemptFailed {
            task,
            attempt,
            reason,
        } => format!("attempt {attempt} of {task} failed: {reason}"),
        Event::Step {
            task,
            attempt,
            call,
            doing,
        } => format!("step        {task} (attempt {attempt}) call {call}: {doing}"),
        Event::Replanned {
            task,
            by,
            changed,
            reason,
        } => {
            let what = if changed.is_empty() {
                "its instructions".to_owned()
            } else {
                format!("its instructions and {}", changed.join(" and "))
            };
            let by = if by == "parent" {
                "its parent planner"
            } else {
                "the planner"
            };
            let why = if reason.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", reason.trim())
            };
            format!("re-planned  {task}: {by} changed {what}{why}")
        }
        Event::Conflict { task, path } => {
            format!("conflict    {task} in {path}: re-running it on the new head")
        }
        Event::Merging { task, path } => {
            format!("conflict    {task} in {path}: to the merge agent")
        }
        Event::FollowUp { task, after, why } if after.is_empty() => {
            format!("added       {task}: {why}")
        }
        Event::FollowUp { task, after, why } => {
            format!("follow-up   {task} after {}: {why}", after.join(", "))
        }
        Event::DecisionsMerged { task, a, b } => {
            format!(
                "merged      `{a}` and `{b}`: {task}'s worker found them contradicting; the coordinator merged them"
            )
        }
        Event::Blocked { task, path, split } => {
            format!("blocked     {task}: {path} would pass the line budget; it waits for {split}")
        }
        Event::Merged { task, paths } => {
            format!(
                "merged      {task}: the merge agent resolved {}",
                paths.join(", ")
            )
        }
        Event::MergeSentBack { task, path, reason } => {
            format!("sent back   {task}: the merge agent did not resolve {path} ({reason})")
        }
        Event::Landed {
            task,
            commit,
            merged,
        } => {
            let merged = if merged.is_empty() {
                String::new()
            } else {
                format!(", merged {}", merged.join(", "))
            };
            format!("landed      {task} ({}{merged})", short(commit))
        }
        Event::Failed { task, reason } => format!("FAILED      {task}: {reason}"),
        Event::Skipped { task, because } => format!("skipped     {task}: {because}"),
        Event::TaskStopped { task, reason } => format!("stopped     {task}: {reason}"),
        Event::Parked { task, seconds } => format!(
            "parked      {task}: the provider asked to wait {seconds} s; its slot goes to other work"
        ),
        Event::Stopped { reason } => {
            format!("stopping: {reason}; running attempts end, nothing new starts")
        }
    }
}

fn json(e: &Event, secs: f64) -> serde_json::Value {
    use serde_json::json;
    let (kind, mut v) = match e {
        Event::Seeded { commit } => ("seeded", json!({"commit": commit})),
        Event::UpToDate { task } => ("up_to_date", json!({"task": task})),
        Event::NoLongerPlanned { task } => ("no_longer_planned", json!({"task": task})),
        Event::Rechecked {
            task,
            passed,
            reason,
        } => (
            "rechecked",
            json!({"task": task, "passed": passed, "reason": reason}),
        ),
        Event::AttemptStarted {
            task,
            attempt,
            role,
        } => (
            "attempt_started",
            json!({"task": task, "attempt": attempt, "role": role}),
        ),
        Event::AttemptFailed {
            task,
            attempt,
            reason,
        } => (
            "attempt_failed",
            json!({"task": task, "attempt": attempt, "reason": reason}),
        ),
        Event::Step {
            task,
            attempt,
            call,
            doing,
        } => (
            "step",
            json!({"task": task, "attempt": attempt, "call": call, "doing": doing}),
        ),
        Event::Replanned {
            task,
            by,
            changed,
            reason,
        } => (
            "replanned",
            json!({"task": task, "by": by, "changed": changed, "reason": reason}),
        ),
        Event::Conflict { task, path } => ("conflict", json!({"task": task, "path": path})),
        Event::Merging { task, path } => ("merging", json!({"task": task, "path": path})),
        Event::DecisionsMerged { task, a, b } => {
            ("decisions_merged", json!({"task": task, "a": a, "b": b}))
        }
        Event::Blocked { task, path, split } => (
            "blocked",
            json!({"task": task, "path": path, "split": split}),
        ),
        Event::FollowUp { task, after, why } => (
            "follow_up",
            json!({"task": task, "after": after, "why": why}),
        ),
        Event::Merged { task, paths } => ("merged", json!({"task": task, "paths": paths})),
        Event::MergeSentBack { task, path, reason } => (
            "merge_sent_back",
            json!({"task": task, "path": path, "reason": reason}),
        ),
        Event::Landed {
            task,
            commit,
            merged,
        } => (
            "landed",
            json!({"task": task, "commit": commit, "merged": merged}),
        ),
        Event::Failed { task, reason } => ("failed", json!({"task": task, "reason": reason})),
        Event::Skipped { task, because } => ("skipped", json!({"task": task, "because": because})),
        Event::TaskStopped { task, reason } => {
            ("task_stopped", json!({"task": task, "reason": reason}))
        }
        Event::Parked { task, seconds } => ("parked", json!({"task": task, "seconds": seconds})),
        Event::Stopped { reason } => ("stopped", json!({"reason": reason})),
    };
    v["event"] = json!(kind);
    v["seconds"] = json!((secs * 1000.0).round() / 1000.0);
    v
}
