//! Reviewers with scripted verdicts (the answer book): two lenses look at each landed task;
//! a finding at the configured severity, seen through both, becomes one follow-up task under
//! the same parent, which runs like any leaf and lands. Follow-ups are not reviewed again.

use serde_json::json;

use crate::build::{TOML, build_book, done, project, two_leaves, write};

#[test]
fn a_reviewer_finding_becomes_a_follow_up_task_that_lands() {
    let toml = format!(
        "{TOML}\n[roles.reviewer]\nprovider = \"scripted\"\nmodel = \"reviewer\"\n\
         [review]\nlenses = [\"diff\", \"codebase\"]\nseverity = \"major\"\n"
    );
    let finding = |severity: &str| {
        json!({"findings": [{"file": "a.txt", "line": 1, "severity": severity,
            "category": "spec", "concerns": "R-1",
            "finding": "a.txt says alpha; R-1 wants it in capitals",
            "fix": "write ALPHA"}]})
    };
    let b = build_book(
        project(&toml),
        json!({
            "planner": two_leaves(&[]),
            "workers": {
                "a": [[[write("a.txt", "alpha\n")], [done()]]],
                "b": [[[write("b.txt", "beta\n")], [done()]]],
                "a-review-1": [[[write("a.txt", "ALPHA\n")], [done()]]],
            },
            "reviewer": {"a": {"diff": finding("major"), "codebase": finding("minor")}},
        }),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    assert_eq!(
        b.file("a.txt").as_deref(),
        Some("ALPHA\n"),
        "the follow-up landed"
    );
    assert!(
        b.err
            .contains("follow-up   a-review-1 after a: a.txt says alpha; R-1 wants it in capitals"),
        "{}",
        b.err
    );
    assert!(b.out.contains("3 landed"), "{}", b.out);
    let seen = b.book.seen();
    assert!(seen.contains(&"a-review-1#1.0".to_owned()), "{seen:?}");
    // Two lenses on a and on b; the follow-up is not reviewed.
    let reviews: Vec<&String> = seen.iter().filter(|s| s.starts_with("review:")).collect();
    assert_eq!(reviews.len(), 4, "{reviews:?}");
    let ledger =
        specc_llm::Ledger::open_existing(&b.dir.path().join(".specc/state.db")).expect("ledger");
    let rows = ledger.rows().expect("rows");
    assert_eq!(rows.iter().filter(|r| r.role == "reviewer").count(), 4);
    // One finding, seen through both lenses, at the higher severity.
    let steps = b.steps();
    let review = steps
        .iter()
        .find(|(t, k, _)| t == "a" && k == "review")
        .expect("the review is journaled");
    let body: serde_json::Value = serde_json::from_str(&review.2).expect("json");
    assert_eq!(body["findings"].as_array().map(Vec::len), Some(1), "{body}");
    assert_eq!(body["findings"][0]["severity"], "major");
    assert_eq!(body["findings"][0]["lenses"], json!(["diff", "codebase"]));
    assert_eq!(body["followups"], json!(["a-review-1"]));
    // A second build: everything is up to date, the follow-up included, and it is not
    // reported as a task that left the plan.
    let again = crate::build::rebuild(b.dir.path(), &b.book, &[]);
    assert_eq!(again.code, 0, "{}", again.err);
    assert!(!again.err.contains("retired"), "{}", again.err);
}
