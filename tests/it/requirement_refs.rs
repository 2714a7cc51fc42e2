//! A task lands a `req:` reference to every requirement it covers (design:
//! runtime.requirement-references): a worker that writes the code without one gets the
//! failure after `done`, adds the comment and lands in the same attempt.

use serde_json::json;

use crate::build::{TOML, build_with, child, done, write};

#[test]
fn a_task_that_lands_no_reference_to_its_requirement_is_told_and_fixes_it() {
    let b = build_with(
        TOML,
        json!({"": {"decisions": [], "children": [
            child("a", "R-1", "alpha.py", &[], &[]),
            child("b", "R-2", "b.txt", &[], &[]),
        ]}}),
        json!({
            "a": [[
                [write("alpha.py", "def alpha():\n    return 1\n")],
                [done()],
                [write("alpha.py", "# req: R-1\ndef alpha():\n    return 1\n")],
                [done()],
            ]],
            // Data only: nothing specc reads comments in, so no reference is asked for.
            "b": [[[write("b.txt", "beta\n")], [done()]]],
        }),
    );
    assert_eq!(b.code, 0, "{}\n{}", b.out, b.err);
    assert!(b.out.contains("2 work tasks: 2 landed"), "{}", b.out);
    let told = b
        .steps()
        .into_iter()
        .find(|(task, kind, body)| {
            task == "a" && kind == "tool" && body.contains("requirement references")
        })
        .expect("the worker was told");
    assert!(told.2.contains("`req: R-1`"), "{}", told.2);
    assert_eq!(
        b.file("alpha.py").as_deref(),
        Some("# req: R-1\ndef alpha():\n    return 1\n")
    );
    // One attempt: the failure went back to the worker, which fixed it.
    assert!(
        b.book.seen().iter().all(|s| !s.starts_with("a#2")),
        "{:?}",
        b.book.seen()
    );
}
