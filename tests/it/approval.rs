//! Plan approval and decisions edited by hand (design: driver.approval, driver.plan-edits):
//! under `[build] approve = "plan"` a build stops after planning with the preview and the
//! plan saved; `--approve` runs exactly that plan, asking the planner nothing; a decision a
//! person edits in `design-docs/planned-*.md` is the plan's from then on, survives a rebuild
//! of an unrelated section, and is reported at stake (W0411) when its own section changes.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use specc_tests::answers::AnswerBook;

use crate::build::{TOML, done, project, rebuild, write};

fn plan_child(key: &str, req: &str) -> Value {
    json!({"key": key, "kind": "plan", "title": format!("plan {key}"), "covers_nodes": [key],
           "covers_requirements": [req], "instructions": format!("plan {key}")})
}

fn leaf(key: &str, req: &str, file: &str) -> Value {
    json!({"key": key, "kind": "work", "title": format!("make {key}"), "covers_requirements": [req],
           "instructions": format!("write {file}"), "write_scope": [file],
           "acceptance": [format!("test -f {file}")]})
}

fn decided(id: &str, text: &str, leaf: Value) -> Value {
    json!({"decisions": [{"id": id, "decision": text, "rationale": "as the section asks"}],
           "children": [leaf]})
}

fn planner_calls(book: &AnswerBook) -> Vec<String> {
    book.seen()
        .into_iter()
        .filter(|s| s.starts_with("plan:"))
        .collect()
}

fn worker_attempts(book: &AnswerBook, task: &str) -> usize {
    book.seen()
        .iter()
        .filter(|s| s.starts_with(&format!("{task}#")) && s.ends_with(".0"))
        .count()
}

/// `specc approve SPEC`: the same as `specc build SPEC --approve`.
fn approve(dir: &Path, book: &Arc<AnswerBook>) -> crate::build::Run {
    crate::build::command(dir, book, "approve", &[])
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).expect("read");
    assert!(text.contains(from), "{from} in {}:\n{text}", path.display());
    std::fs::write(path, text.replace(from, to)).expect("write");
}

#[test]
fn an_approved_plan_runs_as_saved_and_a_hand_edit_survives_until_its_section_changes() {
    let dir = project(&format!("{TOML}\n[build]\napprove = \"plan\"\n"));
    let d = dir.path();
    let attempt = |f: &str| json!([[write(f, "x\n")], [done()]]);
    let book = Arc::new(AnswerBook::new(json!({
        "planner": {
            "": {"decisions": [], "children": [plan_child("alpha", "R-1"), plan_child("beta", "R-2")]},
            "alpha": [
                decided("alpha.words", "Alpha writes lower case.", leaf("a", "R-1", "a.txt")),
                decided("alpha.words", "Alpha writes title case.", leaf("a", "R-1", "a.txt")),
            ],
            "beta": decided("beta.words", "Beta writes lower case.", leaf("b", "R-2", "b.txt")),
        },
        "workers": {"alpha/a": [attempt("a.txt"), attempt("a.txt")],
                    "beta/b": [attempt("b.txt"), attempt("b.txt")]},
    })));
    let alpha_doc = d.join("design-docs/planned-alpha.md");

    // 1. The build stops after planning: the preview, the plan saved, no worker, no out/.
    let first = rebuild(d, &book, &[]);
    assert_eq!(first.code, 0, "{}\n{}", first.err, first.out);
    assert!(first.out.contains("estimate"), "the preview: {}", first.out);
    assert!(
        first.err.contains("plan saved for approval"),
        "{}",
        first.err
    );
    assert_eq!(planner_calls(&book), ["plan:", "plan:alpha", "plan:beta"]);
    assert_eq!(worker_attempts(&book, "alpha/a"), 0);
    assert!(!d.join("out").exists());
    assert!(d.join(".specc/approved-plan.json").is_file());

    // 2. A person fixes a decision by hand; the approved build takes it as the plan.
    edit(
        &alpha_doc,
        "Alpha writes lower case.",
        "Alpha writes UPPER CASE.",
    );
    // A free preview (the outline planner) neither applies nor overwrites the edit.
    let spec = d.join("spec.md").display().to_string();
    let free = crate::support::specc(&["build", &spec, "--dry-run", "--provider", "outline"]);
    assert_eq!(free.code, 0, "{}", free.stderr);
    let beside = std::fs::read_to_string(&alpha_doc).expect("doc");
    assert!(beside.contains("Alpha writes UPPER CASE."), "{beside}");
    let run = rebuild(d, &book, &["--approve"]);
    assert_eq!(run.code, 0, "{}\n{}", run.err, run.out);
    assert_eq!(
        planner_calls(&book).len(),
        3,
        "the planner is asked nothing"
    );
    assert!(
        run.err
            .contains("decision `alpha.words` as edited by hand in design-docs/planned-alpha.md"),
        "{}",
        run.err
    );
    assert_eq!(worker_attempts(&book, "alpha/a"), 1);
    let landed = std::fs::read_to_string(d.join("out/design-docs/planned-alpha.md")).expect("doc");
    assert!(landed.contains("Alpha writes UPPER CASE."), "{landed}");
    let story = crate::support::specc(&["show", "alpha/a", &spec, "--full"]);
    assert!(
        story.stdout.contains("Alpha writes UPPER CASE."),
        "the worker was told the edited decision: {}",
        story.stdout
    );

    // 3. An edit to an unrelated section: `--approve` refuses a plan nobody approved, and
    // asks the planner nothing.
    edit(
        &d.join("spec.md"),
        "Beta MUST exist.",
        "Beta MUST exist and stay.",
    );
    let refused = rebuild(d, &book, &["--approve"]);
    assert_eq!(refused.code, 2, "{}", refused.err);
    assert!(refused.err.contains("E0410"), "{}", refused.err);
    assert_eq!(planner_calls(&book).len(), 3);

    // 4. Approved again: only the edited section is planned again, the hand edit holds, and
    // only beta's task runs.
    let again = rebuild(d, &book, &[]);
    assert_eq!(again.code, 0, "{}", again.err);
    assert_eq!(planner_calls(&book)[3..], ["plan:", "plan:beta"]);
    let run = approve(d, &book);
    assert_eq!(run.code, 0, "{}\n{}", run.err, run.out);
    assert!(!run.err.contains("resuming"), "{}", run.err);
    assert_eq!(worker_attempts(&book, "beta/b"), 2);
    assert_eq!(worker_attempts(&book, "alpha/a"), 1, "alpha is up to date");
    let landed = std::fs::read_to_string(d.join("out/design-docs/planned-alpha.md")).expect("doc");
    assert!(landed.contains("Alpha writes UPPER CASE."), "{landed}");
    let beside = std::fs::read_to_string(&alpha_doc).expect("doc");
    assert!(beside.contains("Alpha writes UPPER CASE."), "{beside}");

    // 5. The section above the edit changes: its planner decides anew, and the person is told
    // which edit is at stake, with their text.
    edit(
        &d.join("spec.md"),
        "Alpha MUST exist.",
        "Alpha MUST exist and shine.",
    );
    let replanned = rebuild(d, &book, &[]);
    assert_eq!(replanned.code, 0, "{}", replanned.err);
    assert!(replanned.err.contains("W0411"), "{}", replanned.err);
    assert!(
        replanned.err.contains("`alpha.words`")
            && replanned.err.contains("Alpha writes UPPER CASE."),
        "{}",
        replanned.err
    );
    let beside = std::fs::read_to_string(&alpha_doc).expect("doc");
    assert!(beside.contains("Alpha writes title case."), "{beside}");
}
