//! What a build logs through tracing carries the task it is about: every event inside a
//! task's work (here the model client's `model call` events, at INFO) is in a span naming
//! the task and the attempt.

use std::sync::{Arc, Mutex};

use serde_json::json;

use crate::build::{TOML, build_in, child, done, project, write};

/// A writer into a shared buffer, for the subscriber.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut b) = self.0.lock() {
            b.extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_tasks_events_name_the_task_and_its_attempt() {
    let logs = Captured::default();
    let sink = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || sink.clone())
        .with_max_level(tracing::Level::INFO)
        .with_ansi(false)
        .finish();
    let b = tracing::subscriber::with_default(subscriber, || {
        // Other tests' threads may have cached a callsite's interest while no subscriber of
        // theirs wanted it: ask every callsite again now that this one is registered.
        tracing::callsite::rebuild_interest_cache();
        build_in(
            project(TOML),
            json!({"": {"decisions": [], "children": [
                child("a", "R-1", "a.txt", &[], &[]),
                child("b", "R-2", "b.txt", &[], &[]),
            ]}}),
            json!({"a": [[[write("a.txt", "alpha\n")], [done()]]],
                   "b": [[[write("b.txt", "beta\n")], [done()]]]}),
        )
    });
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    let logged = String::from_utf8_lossy(&logs.0.lock().expect("lock")).into_owned();
    let worker_calls: Vec<&str> = logged
        .lines()
        .filter(|l| l.contains("model call") && l.contains("role=\"worker\""))
        .collect();
    assert_eq!(worker_calls.len(), 4, "{logged}");
    for task in ["a", "b"] {
        let of_task = worker_calls
            .iter()
            .filter(|l| {
                l.contains(&format!(
                    "task{{task={task}}}:attempt{{n=1 role=\"worker\"}}"
                ))
            })
            .count();
        assert_eq!(of_task, 2, "task {task}'s calls in its spans: {logged}");
    }
}
