//! `[hooks]`: commands of the user's, run on a build's events — a plan awaits approval, a
//! task failed, 80 % of the budget is spent, the build finished — with the event as JSON on
//! standard input. They are the user's own, so they run as the user (not in the sandbox),
//! in the spec's directory, with the environment the build has minus the providers' API
//! keys. Each runs on a thread of its own under a timeout (its process group is killed
//! past it); a hook that fails, hangs or cannot start is reported, and the build goes on.
//! design: project.hooks

use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Value, json};

/// The events a hook can be run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookEvent {
    PlanAwaitingApproval,
    TaskFailed,
    BudgetSpent80,
    BuildFinished,
}

impl HookEvent {
    /// The event's name: its key in `[hooks]` and its `event` in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PlanAwaitingApproval => "plan_awaiting_approval",
            HookEvent::TaskFailed => "task_failed",
            HookEvent::BudgetSpent80 => "budget_spent_80",
            HookEvent::BuildFinished => "build_finished",
        }
    }
}

/// `[hooks]` as specc.toml writes it: each event's command or commands, and the timeout.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HooksTable {
    /// Seconds a hook may run before its processes are killed [default: 10].
    pub timeout_seconds: Option<f64>,
    pub plan_awaiting_approval: Option<Commands>,
    pub task_failed: Option<Commands>,
    pub budget_spent_80: Option<Commands>,
    pub build_finished: Option<Commands>,
}

/// One command, or several.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Commands {
    One(String),
    Many(Vec<String>),
}

impl Commands {
    fn all(&self) -> &[String] {
        match self {
            Commands::One(c) => std::slice::from_ref(c),
            Commands::Many(cs) => cs,
        }
    }
}

/// A hook that did not end well: which, on what event, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct HookFailure {
    pub event: HookEvent,
    pub command: String,
    pub why: HookFailed,
}

/// How a hook did not end well.
#[derive(Clone, Debug, PartialEq)]
pub enum HookFailed {
    /// It could not be started (the shell, the directory).
    NotStarted(String),
    /// It exited with this status (or was killed by a signal: `None`); its stderr's end.
    Exit { code: Option<i32>, stderr: String },
    /// It ran past the timeout and was killed.
    TimedOut(Duration),
}

impl std::fmt::Display for HookFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (event, cmd) = (self.event.name(), &self.command);
        match &self.why {
            HookFailed::NotStarted(e) => write!(f, "the {event} hook `{cmd}` did not start: {e}"),
            HookFailed::Exit { code, stderr } => {
                let status = code.map_or_else(|| "a signal".to_owned(), |c| format!("status {c}"));
                write!(f, "the {event} hook `{cmd}` exited with {status}")?;
                match stderr.trim() {
                    "" => Ok(()),
                    s => write!(f, ": {s}"),
                }
            }
            HookFailed::TimedOut(t) => write!(
                f,
                "the {event} hook `{cmd}` ran past its timeout of {} s and was killed",
                t.as_secs_f64()
            ),
        }
    }
}

/// The variables a hook is started without: specc's own secrets — the providers' API keys,
/// the serve's worker token and the trace collector's headers. The user's other variables
/// pass: a hook is the user's own command and may need its own token.
pub fn hidden(key_vars: &[String]) -> Vec<String> {
    let mut out = key_vars.to_vec();
    out.extend(
        [
            "SPECC_SERVE_TOKEN",
            "SPECC_STATE_URL",
            "OTEL_EXPORTER_OTLP_HEADERS",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        ]
        .map(str::to_owned),
    );
    out
}

/// The hooks of one build: fired as events happen, waited for at its end.
pub struct Hooks {
    table: HooksTable,
    dir: PathBuf,
    /// Variables a hook is started without (the providers' API keys).
    hidden: Vec<String>,
    running: Mutex<Vec<JoinHandle<Option<HookFailure>>>>,
    budget_told: AtomicBool,
}

impl Hooks {
    /// The hooks of `table`, run in `dir` without the variables `hidden`.
    pub fn new(table: HooksTable, dir: &Path, hidden: Vec<String>) -> Hooks {
        Hooks {
            table,
            dir: dir.to_path_buf(),
            hidden,
            running: Mutex::new(Vec::new()),
            budget_told: AtomicBool::new(false),
        }
    }

    fn commands(&self, event: HookEvent) -> &[String] {
        let t = &self.table;
        let of = match event {
            HookEvent::PlanAwaitingApproval => &t.plan_awaiting_approval,
            HookEvent::TaskFailed => &t.task_failed,
            HookEvent::BudgetSpent80 => &t.budget_spent_80,
            HookEvent::BuildFinished => &t.build_finished,
        };
        of.as_ref().map_or(&[], Commands::all)
    }

    /// Whether `event` has a hook (and, for the budget, has not fired yet).
    pub fn wants(&self, event: HookEvent) -> bool {
        let told = event == HookEvent::BudgetSpent80 && self.budget_told.load(Ordering::Relaxed);
        !told && !self.commands(event).is_empty()
    }

    fn timeout(&self) -> Duration {
        let s = self.table.timeout_seconds.unwrap_or(10.0);
        Duration::from_secs_f64(if s.is_finite() && s > 0.0 {
            s.min(3600.0)
        } else {
            10.0
        })
    }

    /// Runs `event`'s hooks with `fields` (and the event's name) as JSON on their stdin.
    pub fn fire(&self, event: HookEvent, fields: Value) {
        let commands = self.commands(event);
        if commands.is_empty() {
            return;
        }
        let mut payload = json!({"event": event.name()});
        if let (Some(p), Value::Object(f)) = (payload.as_object_mut(), fields) {
            p.extend(f);
        }
        let input = payload.to_string();
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        for command in commands {
            let (command, input, dir) = (command.clone(), input.clone(), self.dir.clone());
            let (hidden, timeout) = (self.hidden.clone(), self.timeout());
            running.push(std::thread::spawn(move || {
                let why = run(&command, &input, &dir, &hidden, timeout)?;
                Some(HookFailure {
                    event,
                    command,
                    why,
                })
            }));
        }
    }

    /// Fires `budget_spent_80` once, when `spent` first reaches 80 % of `cap`.
    pub fn spent(&self, run: &str, spent: f64, cap: Option<f64>) {
        let Some(cap) = cap.filter(|c| *c > 0.0) else {
            return;
        };
        if spent >= 0.8 * cap && !self.budget_told.swap(true, Ordering::Relaxed) {
            let fields = json!({"run": run, "spent_dollars": spent, "budget_dollars": cap});
            self.fire(HookEvent::BudgetSpent80, fields);
        }
    }

    /// Waits for every hook fired so far (each is bounded by the timeout) and returns
    /// those that did not end well.
    pub fn finish(&self) -> Vec<HookFailure> {
        let running = std::mem::take(&mut *self.running.lock().unwrap_or_else(|e| e.into_inner()));
        running
            .into_iter()
            .filter_map(|h| h.join().unwrap_or(None))
            .collect()
    }
}

/// Runs one hook: `None` if it exited 0 within the timeout.
fn run(
    command: &str,
    input: &str,
    dir: &Path,
    hidden: &[String],
    timeout: Duration,
) -> Option<HookFailed> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    for k in hidden {
        cmd.env_remove(k);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Some(HookFailed::NotStarted(e.to_string())),
    };
    if let Some(mut stdin) = child.stdin.take() {
        // From a thread: a hook that does not read a large input must not hold this one
        // past its timeout. A hook that does not read its input is not a failure.
        let input = input.to_owned();
        std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
    }
    let stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut s) = stderr {
            let _ = std::io::Read::read_to_string(&mut s, &mut text);
        }
        text
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= timeout => break None,
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Some(HookFailed::NotStarted(e.to_string())),
        }
    };
    // Whatever it left running in its group goes with it: nothing outlives a hook, and
    // nothing holds its stderr open.
    let pgid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::killpg(pgid, nix::sys::signal::Signal::SIGKILL);
    let Some(status) = status else {
        let _ = child.wait();
        return Some(HookFailed::TimedOut(timeout));
    };
    if status.success() {
        return None;
    }
    let text = reader.join().unwrap_or_default();
    let tail: String = text
        .lines()
        .rev()
        .take(3)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect::<Vec<_>>()
        .join(" / ");
    Some(HookFailed::Exit {
        code: status.code(),
        stderr: tail,
    })
}
