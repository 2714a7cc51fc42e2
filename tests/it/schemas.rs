//! Every parameter of every tool specc offers a model has a description (issue 31: a
//! capable model's first build failed on an `acceptance` array of strings nothing
//! explained). Checked on the tools of every request the recordings hold — the planner's,
//! the amend and coordinator requests, the workers', the merge agent's, the reviewers' and
//! the re-planner's — so a tool added without descriptions fails here once recorded.

use std::collections::BTreeSet;

use serde_json::Value;

/// The paths of properties without a description under `schema`.
fn undescribed(schema: &Value, at: &str, out: &mut Vec<String>) {
    if let Some(props) = schema["properties"].as_object() {
        for (name, p) in props {
            let here = format!("{at}.{name}");
            let described = p["description"]
                .as_str()
                .is_some_and(|d| !d.trim().is_empty());
            if !described {
                out.push(here.clone());
            }
            undescribed(p, &here, out);
        }
    }
    if schema["items"].is_object() {
        undescribed(&schema["items"], &format!("{at}[]"), out);
    }
}

#[test]
fn every_tool_parameter_in_every_recorded_request_has_a_description() {
    let root = crate::support::root();
    let files = [
        "examples/textstats/recording.jsonl",
        "fixtures/build/crash/recording.jsonl",
        "fixtures/build/serve/recording.jsonl",
        "fixtures/capable/basen/recording.jsonl",
        "fixtures/planner/cases/owned-elsewhere-merged/recording.jsonl",
        "fixtures/planner/cases/repaired/recording.jsonl",
        "fixtures/llm/recorded-run/recording.jsonl",
    ];
    let mut tools: BTreeSet<String> = BTreeSet::new();
    let mut missing: BTreeSet<String> = BTreeSet::new();
    for f in files {
        let text = std::fs::read_to_string(root.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let rec: Value = serde_json::from_str(line).expect("a recording line");
            for t in rec["request"]["tools"].as_array().into_iter().flatten() {
                let name = t["name"].as_str().unwrap_or("?").to_owned();
                let mut out = Vec::new();
                undescribed(&t["parameters"], &name, &mut out);
                missing.extend(out);
                tools.insert(name);
            }
        }
    }
    for expected in [
        "submit_plan",
        "read",
        "write",
        "run",
        "done",
        "dispute_check",
        "give_up",
        "submit_resolution",
        "submit_review",
    ] {
        assert!(
            tools.contains(expected),
            "no recorded request offers `{expected}`: {tools:?}"
        );
    }
    assert!(
        missing.is_empty(),
        "parameters without a description: {missing:?}"
    );
}
