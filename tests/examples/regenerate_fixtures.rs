//! Regenerates the recorded fixtures the tests replay; `scripts/regenerate-fixtures.sh` runs
//! it. Each recording is made from hand-written answers or from specc's deterministic outline
//! planner, never from a real model:
//!
//! * `recorded-run`: `fixtures/llm/recorded-run/recording.jsonl`, the calls of
//!   `specc_tests::recorded_run` (the ledger and `specc cost` tests);
//! * `planner-cases`: `fixtures/planner/cases/*/recording.jsonl`, each case's `script.json`
//!   of planner answers served by intent node id (the plan-diagnostic cases);
//! * `planner-outline`: `fixtures/planner/{kvstore,twenty-sections,job-queue}.jsonl`, the
//!   outline planner's answers recorded through `specc plan --emit tasks --record`.
//!
//! ```sh
//! cargo run -p specc-tests --example regenerate-fixtures -- [recorded-run|planner-cases|planner-outline]…
//! ```
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use specc_llm::{
    BoxFuture, LlmError, Provider, Recorder, Request, Response, Scripted, ToolCall, Usage,
};
use specc_plan::{Cache, Limits, coordinator, plan_tree, planner};
use specc_tests::recorded_run::{CALLS, request};
use specc_tests::root;

fn main() {
    let mut which: Vec<String> = std::env::args().skip(1).collect();
    if which.is_empty() {
        which = vec![
            "recorded-run".into(),
            "planner-cases".into(),
            "planner-outline".into(),
        ];
    }
    for w in which {
        match w.as_str() {
            "recorded-run" => recorded_run(),
            "planner-cases" => planner_cases(),
            "planner-outline" => planner_outline(),
            other => {
                eprintln!(
                    "unknown fixture set `{other}`: recorded-run, planner-cases or planner-outline"
                );
                std::process::exit(2);
            }
        }
    }
}

/// The recorded run: each call answered by `Scripted` with its answer and usage, through
/// `Recorder`.
fn recorded_run() {
    let path = root().join("fixtures/llm/recorded-run/recording.jsonl");
    let _ = std::fs::remove_file(&path);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    for c in CALLS {
        let scripted = Arc::new(Scripted::new(
            "recorded",
            vec![Ok(Scripted::text(c.answer, c.usage))],
        ));
        let recorder = Recorder::new(scripted, &path);
        runtime
            .block_on(Provider::complete(&recorder, &request(c.role, c.prompt)))
            .expect("recorded");
    }
    println!("wrote {}", path.display());
}

/// The outline planner's answers for three fixture specs, recorded by the CLI.
fn planner_outline() {
    for name in ["kvstore", "twenty-sections", "job-queue"] {
        let dir = tempfile::tempdir().expect("dir");
        let spec = dir.path().join(format!("{name}.md"));
        std::fs::copy(
            root().join(format!("fixtures/specs/valid/{name}.md")),
            &spec,
        )
        .expect("copy");
        let rec = root().join(format!("fixtures/planner/{name}.jsonl"));
        let _ = std::fs::remove_file(&rec);
        let args = [
            "specc".to_owned(),
            "plan".into(),
            spec.display().to_string(),
            "--emit".into(),
            "tasks".into(),
            "--provider".into(),
            "outline".into(),
            "--record".into(),
            rec.display().to_string(),
        ];
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = specc::run(args, &specc::Env::default(), &mut out, &mut err);
        assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
        println!("wrote {}", rec.display());
    }
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
/// plans with `--provider replay` (the planner role's model `planner`, the default
/// `max_tokens`).
fn planner_cases() {
    for case in specc_tests::planner_cases() {
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
            "[providers.p]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n[roles.planner]\nprovider = \"p\"\nmodel = \"planner\"\n",
        )
        .expect("config");
        let client =
            specc_llm::Client::from_config(config, &|_| None, None).with_provider("p", recorder, 1);
        let mut limits = match std::fs::read_to_string(case.join("specc.toml")) {
            Ok(text) => Limits::from_toml(&text).expect("limits"),
            Err(_) => Limits::default(),
        };
        limits.max_tokens = specc_llm::config::DEFAULT_MAX_TOKENS;
        let text = std::fs::read_to_string(case.join("spec.md")).expect("spec");
        let tree = specc_passes::parse_spec(specc_ir::FileId(0), &text).tree;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let _ = runtime.block_on(plan_tree(
            &client,
            &tree,
            limits,
            "",
            &specc_passes::plan::Commands::default(),
            &mut Cache::new(),
        ));
        assert!(
            Path::new(&rec).exists(),
            "{} recorded nothing",
            case.display()
        );
        println!("wrote {}", rec.display());
    }
}
