//! What the planner protocol teaches a model that gets it wrong, against a scripted
//! provider: an acceptance entry written as prose and a requirement id that does not exist
//! are repairs at plan time (E0317, E0318), each naming what would be right; a sub-planner
//! sees the decisions of the sibling it depends on; a parent sees its children's titles and
//! requirement ids.

use std::sync::Arc;

use specc_ir::FileId;
use specc_llm::{Client, LlmConfig, Response, Scripted, ToolCall, Usage};
use specc_passes::plan::Commands;
use specc_plan::{Cache, Limits, plan_tree};

fn tool_answer(args: serde_json::Value) -> Result<Response, specc_llm::LlmError> {
    let mut r = Scripted::text("", Usage::default());
    r.tool_calls = vec![ToolCall {
        id: "call-1".into(),
        name: specc_plan::planner::TOOL.into(),
        arguments: args,
    }];
    Ok(r)
}

const SPEC: &str = "# semver\n\nA version tool.\n\n## Library\n\nParsing and ordering versions.\n\n- [R-1] The library MUST parse `MAJOR.MINOR.PATCH`.\n\n## Command line\n\nA thin wrapper.\n\n- [R-2] The tool MUST print the greater of two versions.\n";

fn root(acceptance: &str, cli_covers: &[&str]) -> serde_json::Value {
    serde_json::json!({
        "decisions": [],
        "children": [
            {"key": "lib", "kind": "plan", "title": "Library", "instructions": "Plan the library.",
             "covers_nodes": ["library"], "write_scope": ["src/lib.rs", "src/version/**"],
             "acceptance": [acceptance]},
            {"key": "cli", "kind": "plan", "title": "CLI", "instructions": "Plan the CLI.",
             "covers_nodes": ["command-line"], "covers_requirements": cli_covers,
             "write_scope": ["src/main.rs"], "depends_on": ["lib"]}
        ]
    })
}

#[tokio::test]
async fn prose_acceptance_and_unknown_ids_are_repaired_and_a_dependent_sees_its_siblings_decision()
{
    let script = vec![
        // The root, as a capable model first answered: English criteria and a guessed id.
        tool_answer(root(
            "The crate builds and all tests succeed",
            &["library-interface#R-1"],
        )),
        // Repaired.
        tool_answer(root("cargo test --offline", &[])),
        // The library's planner decides the API.
        tool_answer(serde_json::json!({
            "decisions": [{"id": "library.api", "decision": "`parse(&str) -> Result<Version, Error>`", "rationale": "r"}],
            "children": [{"key": "parse", "kind": "work", "title": "Parse", "instructions": "Write the parser.",
                          "covers_requirements": ["R-1"], "write_scope": ["src/version/**"],
                          "acceptance": ["cargo test --offline version"]}]
        })),
        // The CLI's planner, which depends on the library.
        tool_answer(serde_json::json!({
            "decisions": [],
            "children": [{"key": "main", "kind": "work", "title": "Main", "instructions": "Call library.api.",
                          "covers_requirements": ["R-2"], "write_scope": ["src/main.rs"],
                          "acceptance": ["test -f src/main.rs"]}]
        })),
    ];
    let config = LlmConfig::parse(
        "[providers.p]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n[roles.planner]\nprovider = \"p\"\nmodel = \"m\"\n",
    )
    .expect("config");
    let scripted = Arc::new(Scripted::new("p", script));
    let client =
        Client::from_config(config, &|_| None, None).with_provider("p", scripted.clone(), 1);
    let tree = specc_passes::parse_spec(FileId(0), SPEC).tree;
    let commands = Commands::new(["cargo", "test"].map(str::to_owned));
    let planned = plan_tree(
        &client,
        &tree,
        Limits::default(),
        "",
        &commands,
        &mut Cache::new(),
    )
    .await
    .expect("planned");
    assert_eq!(planned.calls, 4, "one repair, then one call per plan child");
    let sent = scripted.requests();
    let text = |i: usize, m: usize| sent[i].messages[m].text.clone();

    // The parent saw its subtree's sections as written, and every requirement of it with
    // its id, level, text and section (design: spec.node-text).
    let user: serde_json::Value = serde_json::from_str(&text(0, 1)).expect("json");
    let sections = &user["node"]["sections"];
    assert_eq!(sections[1]["id"], "library");
    assert_eq!(sections[1]["title"], "Library");
    assert_eq!(sections[1]["parent"], "");
    assert_eq!(
        sections[1]["text"],
        "## Library\n\nParsing and ordering versions.\n\n- [R-1] The library MUST parse `MAJOR.MINOR.PATCH`."
    );
    let requirements = &user["node"]["requirements"];
    assert_eq!(requirements[0]["id"], "R-1");
    assert_eq!(requirements[0]["level"], "MUST");
    assert_eq!(requirements[0]["section"], "library");
    assert_eq!(
        requirements[0]["text"],
        "[R-1] The library MUST parse MAJOR.MINOR.PATCH."
    );
    assert_eq!(user["task"]["area"], "semver", "the root's area: {user}");

    // The repair names both problems and what would be right.
    let repair = sent[1].messages.last().expect("repair").text.clone();
    assert!(repair.contains("E0317"), "{repair}");
    assert!(
        repair.contains("starts with `The`, which is neither a shell builtin nor a command"),
        "says why: {repair}"
    );
    assert!(
        repair.contains("cargo test --lib"),
        "gives an example: {repair}"
    );
    assert!(repair.contains("E0318"), "{repair}");
    assert!(
        repair.contains("library-interface#R-1")
            && repair.contains("`R-1`")
            && repair.contains("`R-2`"),
        "lists the valid ids: {repair}"
    );

    // The CLI's planner saw the library's decision; the library's planner saw none.
    let lib: serde_json::Value = serde_json::from_str(&text(2, 1)).expect("json");
    assert!(lib.get("sibling_decisions").is_none(), "{lib}");
    let cli: serde_json::Value = serde_json::from_str(&text(3, 1)).expect("json");
    assert_eq!(cli["sibling_decisions"][0]["id"], "library.api", "{cli}");

    // And the CLI's work leaf reads it.
    let tasks = specc_passes::plan::lower(
        &planned.answers,
        &[],
        &specc_passes::plan::LowerOptions {
            planner_model: "m".into(),
            worker_model: "w".into(),
            planner_budget: 1,
            worker_budget: 1,
        },
    );
    let main = tasks.iter().find(|t| t.id == "cli/main").expect("cli/main");
    assert!(
        main.decisions_to_read.contains(&"library.api".to_owned()),
        "{:?}",
        main.decisions_to_read
    );
}
