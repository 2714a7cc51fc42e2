//! The megafile guard with scripted workers (the answer book): a task whose change would
//! grow a file past the line budget is refused, the build adds a split task for the file,
//! a worker splits it into modules (under the budget, `design:` references kept, the checks
//! of the task that landed the file passing), and the refused task runs again on top of the
//! split and lands. A new file over the budget is refused at the landing and climbs the
//! ladder: re-planned, the next attempt is told the file, its lines and the budget, splits
//! it and lands, and its dependent is not skipped.

use serde_json::json;

use crate::build::{TOML, build_book, child, done, project, write};

/// `n` numbered lines, the first holding a design reference and the requirements' (both
/// tasks write the file).
fn lines(prefix: &str, n: usize) -> String {
    let mut out = format!("// design: store.format ({prefix}) req: R-1, R-2\n");
    for i in 1..n {
        out.push_str(&format!("let {prefix}{i} = {i};\n"));
    }
    out
}

#[test]
fn a_refused_megafile_is_split_and_the_refused_task_lands_on_top() {
    let big = lines("a", 590);
    let grown = format!("{big}{}", "// tail\n".repeat(20)); // 610 lines: over 600
    let head_half = lines("a", 300);
    let part = (300..590)
        .map(|i| format!("let a{i} = {i};\n"))
        .collect::<String>();
    let regrown = format!("{head_half}{}", "// tail\n".repeat(20));
    let decision = json!({"id": "store.format", "decision": "Values are stored as let bindings.",
                          "rationale": "a fixture"});
    let planner = json!({"": {"decisions": [decision], "children": [
        child("a", "R-1", "big.rs", &["test -f big.rs"], &[]),
        child("b", "R-2", "big.rs", &["grep -q tail big.rs"], &["a"]),
    ]}});
    let b = build_book(
        project(TOML),
        json!({
            "planner": planner,
            "workers": {
                "a": [[[write("big.rs", &big)], [done()]]],
                // Told of the budget at `done`, b insists: the file is the head's, so the
                // VCS's refusal schedules its split.
                "b": [[[write("big.rs", &grown)], [done()], [done()]],
                      [[write("big.rs", &regrown)], [done()]]],
                "split-big-rs": [[[write("big.rs", &head_half), write("big/part.rs", &part)],
                                  [done()]]],
            },
        }),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    assert!(
        b.err.contains(
            "blocked     b: big.rs would pass the line budget; it waits for split-big-rs"
        ),
        "{}",
        b.err
    );
    assert!(b.err.contains("added       split-big-rs"), "{}", b.err);
    let told = b.results_of("b", "done");
    assert!(
        told[0].contains("`big.rs` would have 610 lines, over the budget of 600"),
        "{told:?}"
    );
    assert_eq!(b.file("big.rs").as_deref(), Some(regrown.as_str()));
    assert_eq!(b.file("big/part.rs").as_deref(), Some(part.as_str()));
    assert!(b.out.contains("3 landed"), "{}", b.out);
    // b ran twice: refused, then on top of the split (a fresh attempt, not a replay).
    let seen = b.book.seen();
    assert!(seen.contains(&"b#2.0".to_owned()), "{seen:?}");
    assert!(seen.contains(&"split-big-rs#1.0".to_owned()), "{seen:?}");
    // The split's checks: the file's own task's check, the budget, the reference kept.
    let steps = b.steps();
    let accepted = steps
        .iter()
        .filter(|(t, k, _)| t == "split-big-rs" && k == "acceptance")
        .map(|(_, _, body)| body.clone())
        .collect::<Vec<_>>()
        .join("\n");
    for check in [
        "\"acceptance #1\"",
        "big.rs is under 600 lines",
        "every file under big/ is under 600 lines",
        "the `design: store.format` reference is kept",
    ] {
        assert!(accepted.contains(check), "{check}: {accepted}");
    }
}

/// A worker flags a file and lands nothing: the split is still added (the flag reaches the
/// scheduler with the task's end, not only through the VCS's published flags).
#[test]
fn a_file_flagged_by_a_task_that_changes_nothing_gets_its_split() {
    let big = lines("a", 400);
    let head_half = lines("a", 200);
    let part = (200..400)
        .map(|i| format!("let a{i} = {i};\n"))
        .collect::<String>();
    let decision = json!({"id": "store.format", "decision": "Values are stored as let bindings.",
                          "rationale": "a fixture"});
    let planner = json!({"": {"decisions": [decision], "children": [
        child("a", "R-1", "big.rs", &["test -f big.rs"], &[]),
        // No checks: the task ends right after its flag, before the VCS has published it.
        child("b", "R-2", "big.rs", &[], &["a"]),
    ]}});
    let flag = json!({"name": "flag_big_file",
                      "arguments": {"path": "big.rs", "reason": "too long to read"}});
    let b = build_book(
        project(TOML),
        json!({
            "planner": planner,
            "workers": {
                "a": [[[write("big.rs", &big)], [done()]]],
                "b": [[[flag], [done()]]],
                "split-big-rs": [[[write("big.rs", &head_half), write("big/part.rs", &part)],
                                  [done()]]],
            },
        }),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    assert!(b.err.contains("added       split-big-rs"), "{}", b.err);
    assert_eq!(b.file("big/part.rs").as_deref(), Some(part.as_str()));
}

/// What attempt `n` of `task` was told as it started (its opening messages, as JSON).
fn told(dir: &std::path::Path, task: &str, n: u32) -> String {
    let db = rusqlite::Connection::open(dir.join(".specc/state.db")).expect("db");
    db.query_row(
        "SELECT messages FROM contexts WHERE task = ?1 AND attempt = ?2",
        rusqlite::params![task, n],
        |r| r.get(0),
    )
    .expect("context")
}

/// Issue 38: the budget is kept at `done`, while the worker can act on it: told the file,
/// its lines and the budget as `done`'s result, the worker splits it and the task lands in
/// its first attempt.
#[test]
fn a_worker_told_of_the_line_budget_at_done_splits_the_file_and_lands() {
    let planner = json!({"": {"decisions": [], "children": [
        child("a", "R-1", "src", &["test -f src/a.txt"], &[]),
        child("b", "R-2", "b.txt", &["grep -q beta b.txt"], &["a"]),
    ]}});
    let b = build_book(
        project(TOML),
        json!({
            "planner": planner,
            "workers": {
                "a": [[[write("src/a.txt", &"x\n".repeat(700))], [done()],
                       [write("src/a.txt", &"x\n".repeat(400)),
                        write("src/a2.txt", &"x\n".repeat(300))], [done()]]],
                "b": [[[write("b.txt", "beta\n")], [done()]]],
            },
        }),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    assert!(b.out.contains("2 work tasks: 2 landed"), "{}", b.out);
    let told = b.results_of("a", "done");
    assert!(
        told[0].contains("`src/a.txt` would have 700 lines, over the budget of 600")
            && told[0].contains("flag_big_file")
            && told[0].contains("call `done` again"),
        "{told:?}"
    );
    assert!(told[1].contains("passed"), "{told:?}");
    assert_eq!(b.file("src/a2.txt").map(|f| f.lines().count()), Some(300));
    // One attempt: no re-plan was needed.
    assert!(!b.book.seen().contains(&"plan:replan:a".to_owned()));
}

/// A worker that does not split the file when told fails the attempt with its work kept:
/// the ladder climbs (a re-plan), and the next attempt is told the file, its lines and the
/// budget, starts from the refused work, splits it and lands; its dependent is not skipped.
#[test]
fn a_new_file_left_over_the_budget_is_re_planned_and_split_by_the_next_attempt() {
    let big = "x\n".repeat(700);
    let planner = json!({
        "": {"decisions": [], "children": [
            child("a", "R-1", "src", &["test -f src/a.txt"], &[]),
            child("b", "R-2", "b.txt", &["grep -q beta b.txt"], &["a"]),
        ]},
        "replan:a": {"instructions": "write src/a.txt in files of at most 600 lines"},
    });
    let b = build_book(
        project(TOML),
        json!({
            "planner": planner,
            "workers": {
                "a": [[[write("src/a.txt", &big)], [done()], [done()]],
                      [[write("src/a.txt", &"x\n".repeat(400)),
                        write("src/a2.txt", &"x\n".repeat(300))], [done()]]],
                "b": [[[write("b.txt", "beta\n")], [done()]]],
            },
        }),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.err, b.out);
    assert!(b.out.contains("2 work tasks: 2 landed"), "{}", b.out);
    assert_eq!(b.file("src/a2.txt").map(|f| f.lines().count()), Some(300));
    assert!(b.book.seen().contains(&"plan:replan:a".to_owned()));
    // The refusal climbed the ladder: re-planned, and the next attempt was told why (with
    // what to do) and started from the refused work.
    let second = told(b.dir.path(), "a", 2);
    assert!(
        second.contains("`src/a.txt` would have 700 lines, over the budget of 600")
            && second.contains("flag_big_file")
            && second.contains("src/a.txt"),
        "{second}"
    );
    let steps = b.steps();
    assert!(
        steps
            .iter()
            .any(|(t, k, body)| t == "a" && k == "replan" && body.contains("at most 600")),
        "{steps:?}"
    );
}
