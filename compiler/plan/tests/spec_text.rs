//! A spec over the planner's budget (design: spec.node-text): the root planner is shown its
//! own text and what fits, the rest as an outline, and `read_spec` returns an outlined
//! section's text as written; a read is not a repair, and the plan that follows is taken.

use std::sync::Arc;

use specc_ir::FileId;
use specc_llm::{Client, LlmConfig, Response, Scripted, ToolCall, ToolChoice, Usage};
use specc_plan::{Cache, Limits, plan_tree};

fn call(name: &str, args: serde_json::Value) -> Result<Response, specc_llm::LlmError> {
    let mut r = Scripted::text("", Usage::default());
    r.tool_calls = vec![ToolCall {
        id: format!("call-{name}"),
        name: name.into(),
        arguments: args,
    }];
    Ok(r)
}

#[tokio::test]
async fn over_the_budget_the_rest_is_an_outline_that_read_spec_returns_whole() {
    let long = "The gauge reads in tenths of a knot. ".repeat(40);
    let spec = format!(
        "# Tides\n\nA tide log.\n\n## Units {{#units}}\n\n{long}\n\n- [R-1] Units MUST be tenths.\n\n## Output {{#output}}\n\nAs under Units, one line per reading.\n\n- [R-2] Output MUST be one line per reading.\n"
    );
    let tree = specc_passes::parse_spec(FileId(0), &spec).tree;
    let answer = serde_json::json!({"decisions": [], "children": [
        {"key": "units", "kind": "work", "title": "Units", "instructions": "Tenths.",
         "covers_requirements": ["R-1"], "write_scope": ["units.txt"], "acceptance": ["test -f units.txt"]},
        {"key": "output", "kind": "work", "title": "Output", "instructions": "Lines.",
         "covers_requirements": ["R-2"], "write_scope": ["out.txt"], "acceptance": ["test -f out.txt"]}]});
    let scripted = Arc::new(Scripted::new(
        "p",
        vec![
            call("read_spec", serde_json::json!({"id": "units"})),
            call(specc_plan::planner::TOOL, answer),
        ],
    ));
    let config = LlmConfig::parse(
        "[providers.p]\nkind = \"replay\"\nrecording = \"/nonexistent/none.jsonl\"\n[roles.planner]\nprovider = \"p\"\nmodel = \"m\"\n",
    )
    .expect("config");
    let client =
        Client::from_config(config, &|_| None, None).with_provider("p", scripted.clone(), 1);
    // 100 tokens: the root's own text and nothing of Units (over 1,400 characters).
    let limits = Limits {
        planner_spec_tokens: 100,
        ..Limits::default()
    };
    let planned = plan_tree(
        &client,
        &tree,
        limits,
        "",
        &specc_passes::plan::Commands::new(["test"].map(str::to_owned)),
        &mut Cache::new(),
    )
    .await
    .expect("planned");
    assert_eq!(
        planned.calls, 2,
        "a read is a call paid for, like the answer"
    );
    let sent = scripted.requests();
    assert_eq!(sent.len(), 2);
    let user: serde_json::Value = serde_json::from_str(&sent[0].messages[1].text).expect("json");
    let outline = &user["node"]["outline"];
    assert_eq!(outline[0]["id"], "units", "{user}");
    assert_eq!(outline[0]["requirements"][0], "R-1 (MUST)");
    assert_eq!(outline[1]["id"], "output");
    assert!(
        !user.to_string().contains("tenths of a knot"),
        "cut: {user}"
    );
    // An outlined section's requirements by id and level: its text is read_spec's.
    assert_eq!(outline[1]["requirements"][0], "R-2 (MUST)");
    assert_eq!(user["node"]["requirements"], serde_json::json!([]));
    // The planner could read: the answer tool required, not forced, and read_spec offered.
    assert_eq!(sent[0].tool_choice, ToolChoice::Required);
    assert!(sent[0].tools.iter().any(|t| t.name == "read_spec"));
    // The read returned the section as written.
    let read = &sent[1].messages.last().expect("the read's result").text;
    assert!(read.starts_with("## Units {#units}"), "{read}");
    assert!(read.contains(&long.trim_end()[..200]), "{read}");
    // With the ids its answer cites for them.
    assert!(read.ends_with("(requirements: R-1)"), "{read}");
}

#[tokio::test]
async fn a_section_named_elsewhere_is_a_reference_the_planner_may_read() {
    let spec = "# Tides\n\n## Units {#units}\n\nTenths of a knot.\n\n## Output {#output}\n\nAs under Units, one line per reading.\n\n- [R-2] Output MUST be one line per reading.\n";
    let tree = specc_passes::parse_spec(FileId(0), spec).tree;
    let output = tree.node("output").expect("output");
    let shown = specc_plan::spec_text::shown(&tree, output, 10_000);
    assert_eq!(
        shown.references,
        [serde_json::json!({"id": "units", "title": "Units"})]
    );
    assert!(shown.needs_reading());
}
