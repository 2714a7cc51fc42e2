//! The builds `specc mcp` started: each runs `specc build` (or `approve`) in-process on a
//! thread of its own, and what it prints to standard error (its progress lines, its
//! diagnostics) is kept line by line for whoever follows it. One build of a spec at a
//! time: a second is refused while the first runs (and the build's own lock refuses one
//! another process started).
//! design: driver.mcp

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use crate::Env;

/// One started build.
pub(super) struct Build {
    pub(super) id: String,
    pub(super) spec: PathBuf,
    state: Mutex<Progress>,
    /// Woken on every new line and at the end.
    changed: Notify,
}

/// What a build printed so far, and how it ended.
#[derive(Default, Clone)]
pub(super) struct Progress {
    pub(super) lines: Vec<String>,
    /// The exit status, once it ended.
    pub(super) exit: Option<i32>,
    /// What it printed on standard output (its summary), once it ended.
    pub(super) out: String,
}

impl Build {
    pub(super) fn progress(&self) -> Progress {
        self.state.lock().map(|p| p.clone()).unwrap_or_default()
    }

    /// Waits until the build printed more than `seen` lines or ended.
    pub(super) async fn changed_since(&self, seen: usize) {
        let notified = self.changed.notified();
        let p = self.progress();
        if p.lines.len() > seen || p.exit.is_some() {
            return;
        }
        notified.await;
    }

    fn line(&self, line: String) {
        if let Ok(mut p) = self.state.lock() {
            p.lines.push(line);
        }
        self.changed.notify_waiters();
    }

    fn end(&self, exit: i32, out: String) {
        if let Ok(mut p) = self.state.lock() {
            p.exit = Some(exit);
            p.out = out;
        }
        self.changed.notify_waiters();
    }
}

/// The builds this server started.
#[derive(Default)]
pub(super) struct Builds {
    all: Mutex<BTreeMap<String, Arc<Build>>>,
}

impl Builds {
    pub(super) fn get(&self, id: &str) -> Option<Arc<Build>> {
        self.all.lock().ok()?.get(id).cloned()
    }

    /// Starts `argv` for `spec`, unless a build of it runs: then that build.
    pub(super) fn start(
        &self,
        argv: Vec<OsString>,
        spec: PathBuf,
        env: &Env,
    ) -> Result<Arc<Build>, Arc<Build>> {
        // A poisoned registry is still the registry: nothing in it is left half-written.
        let mut all = self.all.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(running) = all
            .values()
            .find(|b| b.spec == spec && b.progress().exit.is_none())
        {
            return Err(running.clone());
        }
        let build = Arc::new(Build {
            id: format!("b{}", all.len() + 1),
            spec,
            state: Mutex::new(Progress::default()),
            changed: Notify::new(),
        });
        all.insert(build.id.clone(), build.clone());
        let (b, env) = (build.clone(), env.clone());
        std::thread::spawn(move || {
            let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut out = Vec::new();
                let mut err = Lines {
                    build: &b,
                    pending: Vec::new(),
                };
                let exit = crate::run(argv, &env, &mut out, &mut err);
                err.flush_pending();
                (exit, out)
            }));
            // A build that panicked (a bug) still ends: its spec is not held for good.
            match ran {
                Ok((exit, out)) => b.end(exit, String::from_utf8_lossy(&out).into_owned()),
                Err(_) => {
                    b.line("specc: the build panicked (a bug in specc; its state is kept)".into());
                    b.end(crate::exit::USAGE, String::new());
                }
            }
        });
        Ok(build)
    }
}

/// Standard error of a build, kept a line at a time.
struct Lines<'a> {
    build: &'a Build,
    pending: Vec<u8>,
}

impl Lines<'_> {
    fn flush_pending(&mut self) {
        if !self.pending.is_empty() {
            let line = String::from_utf8_lossy(&self.pending).into_owned();
            self.pending.clear();
            self.build.line(line);
        }
    }
}

impl std::io::Write for Lines<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        for &b in buf {
            if b == b'\n' {
                self.flush_pending();
            } else if b != b'\r' {
                self.pending.push(b);
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
