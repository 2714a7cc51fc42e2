//! `specc adopt --prose`: the planner model of the specc.toml adopt writes is asked, once, to
//! describe each section in a few sentences from what the scan found (names, signatures,
//! manifests). Its words may not hold an RFC 2119 keyword in capitals — they would become
//! requirements nobody asked for — and may name only the sections it was shown; an answer
//! that breaks either is sent back to it (the planner's repair budget). The call is paid
//! for and recorded in `.specc/state.db` like any other (run `adopt`).
//! design: driver.adopt

use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use specc_ir::{Diagnostic, codes};
use specc_llm::{LlmConfig, Role, Tool};
use specc_plan::ForcedCall;

use super::scan::Package;
use super::spec::{Prose, module_id, unique_package_id};
use crate::Models;

#[derive(Deserialize)]
struct Answer {
    sections: Vec<Section>,
}

#[derive(Deserialize)]
struct Section {
    id: String,
    prose: String,
}

const SYSTEM: &str = "You describe an existing code base for the first version of its specification. You are shown its sections: the project, each package (its manifest and test command) and each module (its public items' signatures). For each section id, write one to three plain sentences saying what that code is for, judging only from what you are shown. Do not invent behaviour you cannot see. Do not write MUST, SHALL, SHOULD, MAY, REQUIRED, RECOMMENDED or OPTIONAL in capitals: in this spec those words make requirements, and the requirements are already listed. Answer with describe_sections.";

/// The sections' prose and the model that wrote it.
pub fn ask(
    title: &str,
    packages: &[Package],
    config: &str,
    dir: &Path,
    models: Option<&Models>,
) -> Result<(Prose, String), Box<Diagnostic>> {
    let bad = |m: String, help: &str| {
        Box::new(Diagnostic::new(codes::INVALID_CONFIG, m).with_help(help.to_owned()))
    };
    let llm =
        LlmConfig::parse(config).map_err(|e| bad(e.to_string(), "fix the provider choice"))?;
    let model = llm
        .role(Role::Planner)
        .map(|r| r.model.clone())
        .ok_or_else(|| {
            bad(
                "the configuration has no planner role".to_owned(),
                "use --provider",
            )
        })?;
    let client = client(&llm, config, dir, models);
    let sections = sections(title, packages);
    let ids: Vec<String> = sections
        .iter()
        .filter_map(|s| s["id"].as_str().map(str::to_owned))
        .collect();
    let user = serde_json::json!({"task": {"id": "adopt"}, "sections": sections});
    let tool = tool();
    let max_tokens = llm.role(Role::Planner).map_or(4096, |r| r.max_tokens);
    let request = specc_plan::ask::request(SYSTEM, &user, tool, max_tokens);
    let check = |a: &Answer| problems(a, &ids);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| bad(e.to_string(), "specc could not start its async runtime"))?;
    let asked = rt
        .block_on(
            ForcedCall::<Answer>::new(Role::Planner, "adopt", request, "describe_sections")
                .check(&check)
                .ask(&client),
        )
        .map_err(|e| {
            Box::new(
                Diagnostic::new(
                    codes::PLANNER_CALL_FAILED,
                    format!("the planner could not describe the sections: {e}"),
                )
                .with_help(
                    "adopt offline (without --prose): the spec is complete without the prose",
                ),
            )
        })?;
    let prose = asked
        .answer
        .sections
        .into_iter()
        .filter(|s| ids.contains(&s.id) && problems_in(&s.prose).is_none())
        .map(|s| (s.id, plain(&s.prose)))
        .collect();
    Ok((prose, model))
}

/// The planner's client: screened for secrets (design: secrets.redaction), its calls in
/// the project's ledger when `.specc/` can hold one.
fn client(llm: &LlmConfig, config: &str, dir: &Path, models: Option<&Models>) -> specc_llm::Client {
    let secrets = crate::secrets::redactor(&crate::secrets::allow_list(config));
    let client = crate::client::build(llm, None, models)
        .with_redactor(std::sync::Arc::new(crate::secrets::Secrets(secrets)));
    match std::fs::create_dir_all(dir.join(".specc"))
        .map_err(|e| e.to_string())
        .and_then(|()| {
            specc_llm::Ledger::open(&dir.join(".specc/state.db")).map_err(|e| e.to_string())
        }) {
        Ok(ledger) => client.with_ledger(Arc::new(ledger), "adopt"),
        Err(_) => client,
    }
}

/// The sections shown to the planner: the project, each package, each module with at most
/// 30 of its public items' signatures.
fn sections(title: &str, packages: &[Package]) -> Vec<serde_json::Value> {
    let mut sections = vec![serde_json::json!({"id": "", "title": title})];
    let mut used = std::collections::HashSet::new();
    for p in packages {
        let pid = unique_package_id(p, &mut used);
        sections.push(serde_json::json!({
            "id": pid, "title": p.name, "language": p.language, "manifest": p.manifest,
            "description": p.description, "test_command": p.test_command, "tests": p.tests.len(),
        }));
        for m in &p.modules {
            let items: Vec<&str> = m
                .items
                .iter()
                .take(30)
                .map(|i| i.signature.as_str())
                .collect();
            sections.push(serde_json::json!({"id": module_id(&pid, &m.path), "title": m.path, "public_items": items}));
        }
    }
    sections
}

/// The tool the planner answers with (its schema as data).
fn tool() -> Tool {
    Tool {
        name: "describe_sections".to_owned(),
        description: "Give each section of the existing code base a short description.".to_owned(),
        parameters: serde_json::json!({
            "type": "object", "required": ["sections"], "additionalProperties": false,
            "properties": {"sections": {"type": "array", "description": "One entry per section shown.",
                "items": {"type": "object", "required": ["id", "prose"], "additionalProperties": false,
                    "properties": {
                        "id": {"type": "string", "description": "The section's id, as shown."},
                        "prose": {"type": "string", "description": "One to three plain sentences, no RFC 2119 keywords in capitals."}}}}}
        }),
    }
}

/// A model's prose as one plain paragraph: no line breaks (so no heading, list item, tag
/// line or fenced block of its own), no leading Markdown markers, no backticks.
fn plain(text: &str) -> String {
    let one = text.split_whitespace().collect::<Vec<_>>().join(" ");
    one.trim_start_matches(['#', '-', '*', '>', '`', '+', ' ', '['])
        .replace('`', "'")
        .chars()
        .take(600)
        .collect()
}

/// What is wrong with an answer, as repairs the model is sent back.
fn problems(a: &Answer, ids: &[String]) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for s in &a.sections {
        if !ids.contains(&s.id) {
            out.push(Diagnostic::new(
                codes::ADOPT_PROSE_INVALID,
                format!(
                    "`{}` is not one of the sections shown: {}",
                    s.id,
                    ids.join(", ")
                ),
            ));
        }
        if let Some(word) = problems_in(&s.prose) {
            out.push(Diagnostic::new(codes::ADOPT_PROSE_INVALID, format!("the prose of `{}` holds `{word}` in capitals, which would make a requirement: reword it", s.id)));
        }
    }
    out
}

/// The first RFC 2119 keyword in capitals in `text`, if any.
fn problems_in(text: &str) -> Option<String> {
    specc_passes::front_end::find_keyword(text).and_then(|(_, at)| text.get(at).map(str::to_owned))
}
