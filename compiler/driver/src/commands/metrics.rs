//! A build's counts in Prometheus's text exposition format (version 0.0.4): tasks by state,
//! attempts running, submissions by outcome, model calls and tokens by role, spend against
//! the budget. `specc status --format prometheus` prints it (for a textfile collector);
//! `specc serve` exposes the same text at its metrics endpoint (state.deployment), with
//! its dispatch counters (`dispatch_counters`).
//! Pure: the caller reads the state.
//! design: runtime.metrics

use std::collections::BTreeMap;
use std::fmt::Write as _;

use specc_state::Status;

/// Model calls of one role with one outcome, and their tokens.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Calls {
    pub count: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// What the text shows beside the journal's status.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Spend {
    /// `(role, outcome)` → calls.
    pub calls: BTreeMap<(String, String), Calls>,
    pub dollars: f64,
    pub budget: Option<f64>,
}

impl Spend {
    /// The ledger's rows of a run, summed by role and outcome.
    pub(super) fn of(rows: &[specc_llm::CallRow], budget: Option<f64>) -> Spend {
        let mut spend = Spend {
            budget,
            ..Spend::default()
        };
        for r in rows {
            let c = spend
                .calls
                .entry((r.role.clone(), r.outcome.clone()))
                .or_default();
            c.count += 1;
            c.input_tokens += r.usage.input;
            c.output_tokens += r.usage.output;
            spend.dollars += r.dollars;
        }
        spend
    }
}

/// The metrics text for `status` and `spend`.
pub(super) fn prometheus(status: &Status, spend: &Spend) -> String {
    let mut out = String::new();
    let run = [("run", status.run.run.as_str())];
    family(
        &mut out,
        "specc_build_info",
        "gauge",
        "The latest build: 1, labelled with its run and status.",
    );
    sample(
        &mut out,
        "specc_build_info",
        &[run[0], ("status", &status.run.status)],
        1.0,
    );
    family(
        &mut out,
        "specc_tasks",
        "gauge",
        "Work tasks of the build by state.",
    );
    // Every state, so that a state with no task still has its series (at 0).
    for state in specc_state::TASK_STATES {
        let n = status
            .counts
            .iter()
            .find(|(s, _)| s == state)
            .map_or(0, |(_, n)| *n);
        sample(
            &mut out,
            "specc_tasks",
            &[run[0], ("state", state)],
            n as f64,
        );
    }
    family(
        &mut out,
        "specc_attempts_running",
        "gauge",
        "Attempts in flight.",
    );
    sample(
        &mut out,
        "specc_attempts_running",
        &run,
        status.running.len() as f64,
    );
    let s = &status.submissions;
    family(
        &mut out,
        "specc_submissions_total",
        "counter",
        "Submissions to the VCS by outcome.",
    );
    for (outcome, n) in [
        ("committed", s.committed),
        ("conflict", s.conflicts),
        ("refused", s.refused),
    ] {
        sample(
            &mut out,
            "specc_submissions_total",
            &[run[0], ("outcome", outcome)],
            n as f64,
        );
    }
    family(
        &mut out,
        "specc_model_calls_total",
        "counter",
        "Model calls by role and outcome.",
    );
    for ((role, outcome), c) in &spend.calls {
        let labels = [
            run[0],
            ("role", role.as_str()),
            ("outcome", outcome.as_str()),
        ];
        sample(&mut out, "specc_model_calls_total", &labels, c.count as f64);
    }
    family(
        &mut out,
        "specc_model_tokens_total",
        "counter",
        "Model tokens by role and direction.",
    );
    let mut tokens: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for ((role, _), c) in &spend.calls {
        let t = tokens.entry(role.as_str()).or_default();
        t.0 += c.input_tokens;
        t.1 += c.output_tokens;
    }
    for (role, (input, output)) in tokens {
        for (direction, n) in [("input", input), ("output", output)] {
            let labels = [run[0], ("role", role), ("direction", direction)];
            sample(&mut out, "specc_model_tokens_total", &labels, n as f64);
        }
    }
    family(
        &mut out,
        "specc_spent_dollars_total",
        "counter",
        "Dollars the build's model calls cost.",
    );
    sample(&mut out, "specc_spent_dollars_total", &run, spend.dollars);
    if let Some(cap) = spend.budget {
        family(
            &mut out,
            "specc_budget_dollars",
            "gauge",
            "The budget cap, [budget] dollars.",
        );
        sample(&mut out, "specc_budget_dollars", &run, cap);
    }
    out
}

/// `specc serve`'s counts of remote work: claims, submissions, commits, conflicts, and
/// writes refused because their fencing token no longer held.
pub(super) fn dispatch_counters(c: &specc_runtime::Counters) -> String {
    use std::sync::atomic::Ordering::Relaxed;
    let mut out = String::new();
    for (name, help, value) in [
        (
            "specc_serve_claims_total",
            "Tasks claimed by workers.",
            &c.claims,
        ),
        (
            "specc_serve_submissions_total",
            "Submissions from workers whose token held.",
            &c.submissions,
        ),
        (
            "specc_serve_commits_total",
            "Commits landed for workers.",
            &c.commits,
        ),
        (
            "specc_serve_conflicts_total",
            "Workers' submissions that conflicted.",
            &c.conflicts,
        ),
        (
            "specc_serve_fenced_total",
            "Workers' writes refused: their lease was lost.",
            &c.fenced,
        ),
    ] {
        family(&mut out, name, "counter", help);
        sample(&mut out, name, &[], value.load(Relaxed) as f64);
    }
    // Sums in seconds over the claims counted above: divided by the claims, the mean.
    for (name, help, micros) in [
        (
            "specc_serve_claim_seconds_total",
            "The state store's time in claims that handed out a leaf (lease latency).",
            &c.claim_micros,
        ),
        (
            "specc_serve_ready_seconds_total",
            "Time leaves waited between their offer (or release) and their claim.",
            &c.ready_micros,
        ),
    ] {
        family(&mut out, name, "counter", help);
        sample(&mut out, name, &[], micros.load(Relaxed) as f64 / 1e6);
    }
    out
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
}

fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: f64) {
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            let _ = write!(out, "{k}=\"{}\"", escape(v));
        }
        out.push('}');
    }
    let _ = writeln!(out, " {value}");
}

/// A label value as the format writes it: `\`, `"` and line feeds escaped.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use specc_state::{RunRow, Submissions};

    fn status() -> Status {
        Status {
            run: RunRow {
                run: "build-1".into(),
                spec: "spec.md".into(),
                started_unix: 0,
                finished_unix: None,
                status: "running".into(),
            },
            counts: vec![("landed".into(), 3), ("running".into(), 1)],
            running: Vec::new(),
            merging: Vec::new(),
            landed: Vec::new(),
            failed: Vec::new(),
            submissions: Submissions {
                committed: 3,
                conflicts: 2,
                refused: 0,
            },
        }
    }

    #[test]
    fn every_sample_is_well_formed_and_counts_what_the_state_holds() {
        let mut calls = BTreeMap::new();
        let c = |count, input_tokens, output_tokens| Calls {
            count,
            input_tokens,
            output_tokens,
        };
        calls.insert(("worker".into(), "ok".into()), c(6, 600, 60));
        calls.insert(("worker".into(), "budget".into()), c(1, 0, 0));
        calls.insert(("planner".into(), "ok".into()), c(2, 2000, 300));
        let spend = Spend {
            calls,
            dollars: 0.25,
            budget: Some(5.0),
        };
        let text = prometheus(&status(), &spend);
        let sample = regex::Regex::new(
            r#"^[a-z_]+(\{[a-z_]+="([^"\\\n]|\\.)*"(,[a-z_]+="([^"\\\n]|\\.)*")*\})? -?[0-9.e+]+$"#,
        )
        .expect("regex");
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            assert!(sample.is_match(line), "malformed: {line}");
        }
        for want in [
            "specc_tasks{run=\"build-1\",state=\"landed\"} 3",
            "specc_tasks{run=\"build-1\",state=\"failed\"} 0",
            "specc_submissions_total{run=\"build-1\",outcome=\"conflict\"} 2",
            "specc_model_calls_total{run=\"build-1\",role=\"worker\",outcome=\"ok\"} 6",
            "specc_model_tokens_total{run=\"build-1\",role=\"worker\",direction=\"input\"} 600",
            "specc_spent_dollars_total{run=\"build-1\"} 0.25",
            "specc_budget_dollars{run=\"build-1\"} 5",
            "# TYPE specc_submissions_total counter",
        ] {
            assert!(text.lines().any(|l| l == want), "{want} in\n{text}");
        }
    }

    #[test]
    fn label_values_are_escaped() {
        let mut s = status();
        s.run.run = "a\"b\\c\nd".into();
        let text = prometheus(&s, &Spend::default());
        assert!(
            text.contains(r#"specc_attempts_running{run="a\"b\\c\nd"} 0"#),
            "{text}"
        );
        assert!(!text.contains("specc_budget_dollars"), "no cap, no series");
    }
}
