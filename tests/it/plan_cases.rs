//! One case per plan diagnostic, through `specc plan --emit tasks` as a user runs it.
//! Each case under `fixtures/planner/cases/` holds a spec, a `script.json` of planner answers
//! by intent node id (served in order, the last one repeated; `merge` is the coordinator's),
//! the recording made from that script, `expected.txt` (the exit status, then one line per
//! expected diagnostic: its code and what its text must contain), and optionally a
//! `specc.toml` with `[limits]`. The test replays the recording through the CLI, checks the
//! exit status and codes, and snapshots what the user sees.
//!
//! Regenerate the recordings after changing a script or the planner protocol:
//! `cargo test -p specc-tests -- --ignored write_planner_case_recordings`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use specc_llm::{BoxFuture, LlmError, Provider, Request, Response, Scripted, ToolCall, Usage};
use specc_runtime::plan_tree::{Cache, Limits, plan_tree};
use specc_runtime::{coordinator, planner};

use crate::support::{root, specc};

fn cases() -> Vec<PathBuf> {
    let dir = root().join("fixtures/planner/cases");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("cases")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    cases
}

#[test]
fn every_plan_diagnostic_has_a_case() {
    let cases = cases();
    let mut seen = Vec::new();
    for case in &cases {
        let name = case
            .file_name()
            .expect("name")
            .to_string_lossy()
            .into_owned();
        let dir = tempfile::tempdir().expect("dir");
        for f in ["spec.md", "specc.toml"] {
            if case.join(f).exists() {
                std::fs::copy(case.join(f), dir.path().join(f)).expect("copy");
            }
        }
        let spec = dir.path().join("spec.md").display().to_string();
        let rec = case.join("recording.jsonl").display().to_string();
        let out = specc(&[
            "plan",
            &spec,
            "--emit",
            "tasks",
            "--provider",
            "replay",
            "--recording",
            &rec,
        ]);
        let expected = std::fs::read_to_string(case.join("expected.txt")).expect("expected");
        let mut lines = expected.lines();
        let exit: i32 = lines
            .next()
            .and_then(|l| l.strip_prefix("exit "))
            .and_then(|n| n.parse().ok())
            .expect("`exit N` first");
        assert_eq!(out.code, exit, "{name}: {}", out.stderr);
        for line in lines.filter(|l| !l.trim().is_empty()) {
            let (code, text) = line.split_once(' ').unwrap_or((line, ""));
            assert!(
                // Rendered as a diagnostic of its own: the code heads it on its own line.
                out.stderr.lines().any(|l| l.trim() == code),
                "{name}: no {code}:\n{}",
                out.stderr
            );
            // Messages wrap at the terminal's width: compare words.
            let words = |s: &str| {
                s.split_whitespace()
                    .filter(|w| *w != "|")
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            assert!(
                words(&out.stderr).contains(&words(text)),
                "{name}: no `{text}`:\n{}",
                out.stderr
            );
            seen.push(code.to_owned());
        }
        let temp = format!("{}/", dir.path().display());
        let shown = format!("{}\n---\n{}", out.stdout, out.stderr).replace(&temp, "");
        insta::assert_snapshot!(format!("plan-case-{name}"), shown);
    }
    for code in [
        "E0301", "E0302", "W0303", "E0304", "E0305", "E0306", "E0307", "E0308", "W0310", "E0312",
    ] {
        // E0301 is seen by the planner (quoted in its repairs) and then resolved by the
        // coordinator, whose W0310 the user sees.
        let shown = if code == "E0301" { "W0310" } else { code };
        assert!(seen.iter().any(|c| c == shown), "no case for {code}");
    }
    let merged = std::fs::read_to_string(
        root().join("fixtures/planner/cases/owned-elsewhere-merged/recording.jsonl"),
    )
    .expect("recording");
    assert!(
        merged.contains("E0301"),
        "the repairs quote the ownership error"
    );
}

/// Serves `script.json`: answers by intent node id, in order, the last one repeated.
struct ScriptedPlanner {
    by_node: HashMap<String, Vec<serde_json::Value>>,
    merge: Option<serde_json::Value>,
    asked: Mutex<HashMap<String, usize>>,
}

fn tool_call(tool: &str, arguments: serde_json::Value) -> Response {
    let mut r = Scripted::text(
        "",
        Usage {
            input: 400,
            cached_input: 0,
            output: 120,
        },
    );
    r.tool_calls = vec![ToolCall {
        id: "call".into(),
        name: tool.into(),
        arguments,
    }];
    r
}

impl Provider for ScriptedPlanner {
    fn name(&self) -> &str {
        "script"
    }

    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, LlmError>> {
        let user: serde_json::Value =
            serde_json::from_str(&request.messages[1].text).unwrap_or_default();
        let answer = if request
            .tools
            .first()
            .is_some_and(|t| t.name == coordinator::TOOL)
        {
            self.merge.clone().map(|m| tool_call(coordinator::TOOL, m))
        } else {
            let id = user["node"]["id"].as_str().unwrap_or_default().to_owned();
            let mut asked = self.asked.lock().expect("lock");
            let n = asked.entry(id.clone()).or_default();
            *n += 1;
            self.by_node
                .get(&id)
                .and_then(|list| list.get(*n - 1).or(list.last()))
                .map(|a| tool_call(planner::TOOL, a.clone()))
        };
        Box::pin(async move {
            answer.ok_or_else(|| LlmError::Protocol("the script has no answer for this".into()))
        })
    }
}

/// Writes each case's `recording.jsonl` by planning with its script, exactly as the CLI
/// plans with `--provider replay` (the planner role's model `planner`, 8192 tokens).
#[test]
#[ignore = "writes fixtures/planner/cases/*/recording.jsonl"]
fn write_planner_case_recordings() {
    for case in cases() {
        let script: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(case.join("script.json")).expect("script"),
        )
        .expect("script JSON");
        let mut by_node = HashMap::new();
        for (k, v) in script.as_object().expect("object") {
            if k != "merge" {
                by_node.insert(k.clone(), v.as_array().cloned().unwrap_or_default());
            }
        }
        let fake = Arc::new(ScriptedPlanner {
            by_node,
            merge: script.get("merge").cloned(),
            asked: Mutex::new(HashMap::new()),
        });
        let rec = case.join("recording.jsonl");
        let _ = std::fs::remove_file(&rec);
        let recorder = Arc::new(specc_llm::Recorder::new(fake, &rec));
        let config = specc_llm::LlmConfig::parse(
            "[providers.p]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n[roles.planner]\nprovider = \"p\"\nmodel = \"planner\"\nmax_tokens = 8192\n",
        )
        .expect("config");
        let client =
            specc_llm::Client::from_config(config, &|_| None, None).with_provider("p", recorder, 1);
        let limits = match std::fs::read_to_string(case.join("specc.toml")) {
            Ok(text) => Limits::from_toml(&text).expect("limits"),
            Err(_) => Limits::default(),
        };
        let text = std::fs::read_to_string(case.join("spec.md")).expect("spec");
        let tree = specc_passes::parse_spec(specc_ir::FileId(0), &text).tree;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let _ = runtime.block_on(plan_tree(&client, &tree, limits, "", &mut Cache::new()));
        assert!(
            Path::new(&rec).exists(),
            "{} recorded nothing",
            case.display()
        );
    }
}
