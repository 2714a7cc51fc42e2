//! specc checks itself: its design-docs/ are in the format it reads, no decision conflicts,
//! and every `design: <id>` in its code names one of them. CI runs the same check with the
//! binary (`specc check .`).

use crate::support::{root, specc};

#[test]
fn specc_check_passes_on_this_repository() {
    let out = specc(&[
        "check",
        &root().display().to_string(),
        "--message-format",
        "json",
    ]);
    assert_eq!(out.stderr, "", "nothing for people");
    assert_eq!(
        crate::support::json_diagnostics(&out.stdout),
        Vec::<serde_json::Value>::new(),
        "no diagnostics"
    );
    assert_eq!(out.code, 0);
    let summary: serde_json::Value = serde_json::from_str(out.stdout.trim()).expect("JSON summary");
    let count = |k: &str| summary[k].as_u64().unwrap_or(0);
    assert!(count("decisions") >= 30, "{summary}");
    assert!(count("references") >= 30, "{summary}");
    assert!(count("sources") >= 60, "{summary}");
}
