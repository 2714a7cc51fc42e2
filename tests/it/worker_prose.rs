//! What a live model does that a scripted one rarely does (design:
//! runtime.worker-protocol): it answers in prose instead of calling a tool — it is told so,
//! with what it said, and asked again, twice at most before the attempt ends with that
//! reason — and it makes several tool calls in one turn, which run in order. Hand-written
//! answers, standing in for the model's.

use serde_json::json;

use crate::build::{TOML, build_with, child, done, write};

fn tool_and_user_texts(b: &crate::build::Built, task: &str) -> Vec<String> {
    b.steps()
        .into_iter()
        .filter(|(t, _, _)| t == task)
        .map(|(_, k, body)| format!("{k}: {body}"))
        .collect()
}

/// One leaf covering both of the spec's requirements, writing `scope`.
fn one_leaf_of(scope: &str, check: &str) -> serde_json::Value {
    let mut leaf = child("a", "R-1", scope, &[check], &[]);
    leaf["covers_requirements"] = json!(["R-1", "R-2"]);
    json!({"": {"decisions": [], "children": [leaf]}})
}

fn one_leaf() -> serde_json::Value {
    one_leaf_of("a.txt", "test -f a.txt")
}

#[test]
fn a_prose_answer_is_sent_back_and_the_attempt_goes_on() {
    let b = build_with(
        TOML,
        one_leaf(),
        json!({"a": [[{"text": "I will now write a.txt with the word alpha."},
                      {"text": "Done! The file is written."},
                      [write("a.txt", "alpha\n")], [done()]]]}),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    assert_eq!(b.file("a.txt").as_deref(), Some("alpha\n"));
    let seen = b.book.seen();
    assert_eq!(
        seen.iter().filter(|s| s.starts_with("a#")).count(),
        4,
        "{seen:?}"
    );
}

#[test]
fn a_third_prose_answer_in_a_row_ends_the_attempt_with_that_reason() {
    let prose = json!({"text": "Here is the plan: first I read, then I write."});
    let attempt = json!([prose.clone(), prose.clone(), prose.clone()]);
    let b = build_with(TOML, one_leaf(), json!({"a": [attempt.clone(), attempt]}));
    assert_eq!(b.code, 1, "{}", b.out);
    assert!(
        b.out
            .contains("answered in prose instead of calling a tool 3 times in a row"),
        "{}",
        b.out
    );
    assert!(!b.out.contains("stuck"), "{}", b.out);
    let steps = tool_and_user_texts(&b, "a");
    assert_eq!(
        steps.iter().filter(|s| s.starts_with("model: ")).count(),
        6,
        "every answer journaled: {steps:?}"
    );
}

#[test]
fn several_tool_calls_in_one_turn_run_in_order() {
    let run = |c: &str| json!({"name": "run", "arguments": {"command": c}});
    let b = build_with(
        TOML,
        one_leaf_of("*.txt", "grep -q alpha b.txt"),
        json!({"a": [[[write("a.txt", "alpha\n"), run("cp a.txt b.txt"), write("a.txt", "alpha, again\n")],
                      [done()]]]}),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    assert_eq!(
        b.file("b.txt").as_deref(),
        Some("alpha\n"),
        "the copy ran after the first write"
    );
    assert_eq!(
        b.file("a.txt").as_deref(),
        Some("alpha, again\n"),
        "and before the second"
    );
}
