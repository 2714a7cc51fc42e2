//! `specc build` end to end with scripted workers (the answer book): landing, conflicts
//! re-run on the new head, acceptance → re-plan → failure with dependents skipped, scope
//! refusals, malformed tool calls, the stuck detector and the budget cap. Commands run
//! through the runtime's runner, in temporary directories.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use specc_tests::answers::AnswerBook;

const SPEC: &str =
    "# Pair\n\n## Alpha\n\n- [R-1] Alpha MUST exist.\n\n## Beta\n\n- [R-2] Beta MUST exist.\n";

pub(crate) const TOML: &str = r#"
[providers.scripted]
kind = "replay"
recording = "none.jsonl"

[roles.planner]
provider = "scripted"
model = "planner"

[roles.worker]
provider = "scripted"
model = "worker"
max_tokens = 1000

[limits]
steps = 12
"#;

pub(crate) struct Built {
    pub(crate) code: i32,
    pub(crate) out: String,
    pub(crate) err: String,
    pub(crate) dir: tempfile::TempDir,
    pub(crate) book: Arc<AnswerBook>,
}

impl Built {
    pub(crate) fn file(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.path().join("out").join(path)).ok()
    }

    /// `(task, kind, body)` of every journaled step.
    pub(crate) fn steps(&self) -> Vec<(String, String, String)> {
        let journal =
            specc_state::Journal::open(&self.dir.path().join(".specc/state.db")).expect("journal");
        let runs = run_ids(self.dir.path());
        runs.iter()
            .flat_map(|r| journal.steps(r).expect("steps"))
            .map(|s| (s.task, s.kind, s.body))
            .collect()
    }

    /// The journaled results of `task`'s calls of `tool`, in order.
    pub(crate) fn results_of(&self, task: &str, tool: &str) -> Vec<String> {
        let tag = format!("\"tool\":\"{tool}\"");
        self.steps()
            .into_iter()
            .filter(|(t, k, body)| t == task && k == "tool" && body.contains(&tag))
            .map(|(_, _, body)| body)
            .collect()
    }
}

fn run_ids(dir: &Path) -> Vec<String> {
    let ledger = specc_llm::Ledger::open_existing(&dir.join(".specc/state.db")).expect("ledger");
    let mut runs: Vec<String> = ledger
        .rows()
        .expect("rows")
        .into_iter()
        .map(|r| r.run)
        .collect();
    runs.sort();
    runs.dedup();
    runs
}

pub(crate) fn child(
    key: &str,
    req: &str,
    scope: &str,
    acceptance: &[&str],
    deps: &[&str],
) -> Value {
    json!({"key": key, "kind": "work", "title": format!("make {key}"), "covers_requirements": [req],
           "instructions": format!("write {scope}"), "write_scope": [scope],
           "acceptance": acceptance, "depends_on": deps})
}

pub(crate) fn write(path: &str, content: &str) -> Value {
    json!({"name": "write", "arguments": {"path": path, "content": content}})
}

pub(crate) fn done() -> Value {
    json!({"name": "done", "arguments": {"summary": "did it"}})
}

pub(crate) fn build_with(toml: &str, planner: Value, workers: Value) -> Built {
    build_in(project(toml), planner, workers)
}

/// A directory with the spec and `toml` as specc.toml.
pub(crate) fn project(toml: &str) -> tempfile::TempDir {
    crate::support::project_with(SPEC, toml)
}

/// `specc build` in `dir` with the answer book of `planner` and `workers`.
pub(crate) fn build_in(dir: tempfile::TempDir, planner: Value, workers: Value) -> Built {
    build_book(dir, json!({"planner": planner, "workers": workers}))
}

/// `specc build` in `dir` with a whole answer book.
pub(crate) fn build_book(dir: tempfile::TempDir, book: Value) -> Built {
    let book = Arc::new(AnswerBook::new(book));
    let run = rebuild(dir.path(), &book, &[]);
    Built {
        code: run.code,
        out: run.out,
        err: run.err,
        dir,
        book,
    }
}

/// What one `specc build` said.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) out: String,
    pub(crate) err: String,
}

/// `specc build` (with `extra` arguments) of the spec in `dir`, in-process, with `book`
/// answering and the specc binary as the sandbox's helper.
pub(crate) fn rebuild(dir: &Path, book: &Arc<AnswerBook>, extra: &[&str]) -> Run {
    command(dir, book, "build", extra)
}

/// `specc COMMAND SPEC` (with `extra` arguments) for the spec in `dir`, as [`rebuild`] runs it.
pub(crate) fn command(dir: &Path, book: &Arc<AnswerBook>, command: &str, extra: &[&str]) -> Run {
    let env = specc::Env::plain()
        .with_models(book.clone())
        .with_sandbox_helper(specc_tests::specc_binary());
    let spec = dir.join("spec.md").display().to_string();
    let mut args = vec!["specc", command, spec.as_str()];
    args.extend_from_slice(extra);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = specc::run(args, &env, &mut out, &mut err);
    Run {
        code,
        out: String::from_utf8_lossy(&out).into_owned(),
        err: String::from_utf8_lossy(&err).into_owned(),
    }
}

pub(crate) fn two_leaves(b_deps: &[&str]) -> Value {
    json!({"": {"decisions": [], "children": [
        child("a", "R-1", "a.txt", &["test -f a.txt"], &[]),
        child("b", "R-2", "b.txt", &["grep -q beta b.txt"], b_deps),
    ]}})
}

pub(crate) fn git(dir: &Path, args: &[&str]) -> (bool, String) {
    let o = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

#[test]
fn two_leaves_land_and_out_is_a_clean_git_repository() {
    let b = build_with(
        TOML,
        two_leaves(&[]),
        json!({"a": [[[write("a.txt", "alpha\n")], [done()]]],
               "b": [[[write("b.txt", "beta\n")], [done()]]]}),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    assert!(b.out.contains("2 work tasks: 2 landed"), "{}", b.out);
    assert_eq!(b.file("a.txt").as_deref(), Some("alpha\n"));
    assert_eq!(b.file("b.txt").as_deref(), Some("beta\n"));
    let out = b.dir.path().join("out");
    assert!(git(&out, &["fsck", "--strict"]).0);
    let (_, log) = git(&out, &["log", "--format=%s"]);
    assert!(log.contains("make a") && log.contains("make b"), "{log}");
    // A person's uncommitted change in out/ makes the next build refuse and overwrite nothing.
    std::fs::write(out.join("a.txt"), "mine\n").expect("edit");
    let again = rebuild(b.dir.path(), &b.book, &[]);
    let e = again.err;
    assert_eq!(again.code, 1, "{e}");
    assert!(e.contains("E0403") && e.contains("a.txt"), "{e}");
    assert_eq!(
        std::fs::read_to_string(out.join("a.txt")).expect("kept"),
        "mine\n"
    );
}

#[test]
fn a_conflict_on_a_shared_file_is_resolved_by_running_the_task_again() {
    // Both leaves note under the same section of the field guide at once: their inserts
    // touch, so the second to land conflicts and is re-run on the new head.
    let note = |t: &str| json!({"name": "note", "arguments": {"section": "Notes", "text": t}});
    let b = build_with(
        TOML,
        two_leaves(&[]),
        json!({"a": [[[write("a.txt", "alpha\n"), note("a was here")], [done()]],
                     [[write("a.txt", "alpha\n"), note("a was here")], [done()]]],
               "b": [[[write("b.txt", "beta\n"), note("b was here")], [done()]],
                     [[write("b.txt", "beta\n"), note("b was here")], [done()]]]}),
    );
    // Which of the two lands first is up to the scheduler; each has a second attempt.
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    let guide = b.file("field-guide/index.md").expect("guide");
    assert!(
        guide.contains("- a was here") && guide.contains("- b was here"),
        "{guide}"
    );
    assert!(b.out.contains("conflicts: 1"), "{}", b.out);
    assert!(b.err.contains("conflict"), "{}", b.err);
    let seen = b.book.seen();
    let reruns = seen
        .iter()
        .filter(|s| s.starts_with("a#2.") || s.starts_with("b#2."))
        .count();
    assert_eq!(reruns, 2, "one of the two ran again, two steps: {seen:?}");
}

#[test]
fn acceptance_failure_is_shown_once_then_replanned_then_the_task_fails_and_dependents_skip() {
    let planner = json!({
        "": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &["test -f never.txt"], &[]),
            child("b", "R-2", "b.txt", &[], &["a"]),
        ]},
        "replan:a": {"instructions": "write a.txt, then check again"},
    });
    let attempt = json!([[write("a.txt", "alpha\n")], [done()], [done()]]);
    let b = build_with(TOML, planner, json!({"a": [attempt.clone(), attempt]}));
    assert_eq!(b.code, 1, "{}", b.out);
    assert!(b.out.contains("1 failed, 1 skipped"), "{}", b.out);
    assert!(
        b.err.contains("E0401") && b.err.contains("acceptance failed"),
        "{}",
        b.err
    );
    let seen = b.book.seen();
    assert_eq!(
        seen.iter().filter(|s| s.starts_with("a#")).count(),
        6,
        "two attempts of three calls: {seen:?}"
    );
    assert!(seen.contains(&"plan:replan:a".to_owned()), "{seen:?}");
    // The worker saw the failure once, inside the attempt.
    let steps = b.steps();
    assert!(steps.iter().any(|(t, k, body)| t == "a"
        && k == "tool"
        && body.contains("The acceptance checks failed")));
    assert!(
        steps
            .iter()
            .any(|(t, k, body)| t == "a" && k == "replan" && body.contains("check again"))
    );
    assert!(b.file("a.txt").is_none(), "nothing of a failed task lands");
    // Nothing landed: the export says so plainly, not as a failed git checkout.
    assert!(
        !b.err.contains("E0403") && b.err.contains("W0412") && b.err.contains("no work landed"),
        "{}",
        b.err
    );
}

#[test]
fn writes_outside_the_scope_are_refused_and_malformed_calls_go_back_to_the_model() {
    let b = build_with(
        TOML,
        two_leaves(&[]),
        json!({"a": [[[write("b.txt", "not mine\n")], [write("../escape.txt", "x")],
                      {"malformed": "write"}, [write(".specc/state.db", "x")],
                      [write("a.txt", "alpha\n")], [done()]]],
               "b": [[[write("b.txt", "beta\n")], [done()]]]}),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    let steps = b.steps();
    let tool_texts: Vec<&str> = steps
        .iter()
        .filter(|(t, k, _)| t == "a" && k == "tool")
        .map(|(_, _, body)| body.as_str())
        .collect();
    assert!(
        tool_texts[0].contains("outside your write scope (a.txt)"),
        "{tool_texts:?}"
    );
    assert!(
        tool_texts[1].contains("not a relative path"),
        "{tool_texts:?}"
    );
    assert!(tool_texts[2].contains(".specc/"), "{tool_texts:?}");
    assert!(
        steps
            .iter()
            .any(|(t, k, body)| t == "a" && k == "model_error" && body.contains("malformed"))
    );
    assert_eq!(
        b.file("b.txt").as_deref(),
        Some("beta\n"),
        "a's write to b.txt was refused"
    );
    // `../escape.txt` from the checkout would be beside it, under .specc/work/.
    assert!(!b.dir.path().join(".specc/work/escape.txt").exists());
    assert!(!b.dir.path().join("escape.txt").exists());
}

#[test]
fn the_stuck_detector_ends_an_attempt_that_repeats_itself() {
    let read = json!({"name": "read", "arguments": {"path": "missing.txt"}});
    let looping = json!([
        [read.clone()],
        [read.clone()],
        [read.clone()],
        [read.clone()],
        [read]
    ]);
    let planner = json!({
        "": {"decisions": [], "children": [child("a", "R-1", "a.txt", &[], &[]), child("b", "R-2", "b.txt", &[], &[])]},
        "replan:a": {"instructions": "stop reading missing.txt"},
    });
    let b = build_with(
        TOML,
        planner,
        json!({"a": [looping.clone(), looping],
               "b": [[[write("b.txt", "beta\n")], [done()]]]}),
    );
    assert_eq!(b.code, 1);
    assert!(
        b.out
            .contains("failed a: stuck: the same action failed 3 times"),
        "{}",
        b.out
    );
    assert_eq!(
        b.book
            .seen()
            .iter()
            .filter(|s| s.starts_with("a#1."))
            .count(),
        3
    );
    assert_eq!(
        b.file("b.txt").as_deref(),
        Some("beta\n"),
        "the rest of the build goes on"
    );
}

#[test]
fn the_budget_cap_stops_the_build_cleanly() {
    let toml = format!(
        "{TOML}\n[prices.worker]\ninput = 0.0\noutput = 1000.0\n\n[budget]\ndollars = 1.3\n"
    );
    let step = |f: &str| json!([[write(f, "x\n")], [done()]]);
    let b = build_with(
        &toml,
        json!({"": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &[], &[]),
            child("b", "R-2", "b.txt", &[], &["a"]),
        ]}}),
        json!({"a": [step("a.txt")], "b": [step("b.txt")]}),
    );
    assert_eq!(b.code, 1, "{}", b.out);
    assert!(b.err.contains("E0402"), "{}", b.err);
    assert!(b.out.contains("stopped"), "{}", b.out);
    // Each worker call reserves $1 (1000 output tokens at $1000/M): with what two calls spent, a third does not fit.
    assert_eq!(b.file("a.txt").as_deref(), Some("x\n"));
    assert!(b.file("b.txt").is_none());
    // With a higher cap the same run resumes and finishes, paying nothing twice: a is up to
    // date, and b's calls are its first.
    let raised = toml.replace("dollars = 1.3", "dollars = 10");
    std::fs::write(b.dir.path().join("specc.toml"), raised).expect("toml");
    let resumed = rebuild(b.dir.path(), &b.book, &[]);
    let (o, e) = (resumed.out, resumed.err);
    assert_eq!(resumed.code, 0, "{e}\n{o}");
    assert!(e.contains("resuming build"), "{e}");
    assert!(o.contains("1 landed, 1 up to date"), "{o}");
    assert_eq!(b.file("b.txt").as_deref(), Some("x\n"));
    let seen = b.book.seen();
    assert_eq!(
        seen.iter().filter(|s| s.starts_with("a#")).count(),
        2,
        "{seen:?}"
    );
    assert_eq!(
        seen.iter().filter(|s| s.starts_with("b#")).count(),
        2,
        "{seen:?}"
    );
}

#[test]
fn a_parked_call_requeues_its_task_and_frees_its_slot() {
    // One job slot. a's second call is parked for a second: b runs meanwhile, then a
    // resumes its attempt (its first answer replayed, not asked again) and lands.
    let toml = format!("{TOML}\n[build]\njobs = 1\n");
    let b = build_with(
        &toml,
        two_leaves(&[]),
        json!({"a": [[[write("a.txt", "alpha\n")], {"parked_secs": 1, "then": [done()]}]],
               "b": [[[write("b.txt", "beta\n")], [done()]]]}),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    let parked = b.err.find("parked      a").expect("a was parked");
    let b_landed = b.err.find("landed      b").expect("b landed");
    let a_landed = b.err.find("landed      a").expect("a landed");
    assert!(parked < b_landed && b_landed < a_landed, "{}", b.err);
    let seen = b.book.seen();
    assert_eq!(
        seen.iter().filter(|s| s.starts_with("a#1.0")).count(),
        1,
        "{seen:?}"
    );
    assert_eq!(b.file("a.txt").as_deref(), Some("alpha\n"));
}
