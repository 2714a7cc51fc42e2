//! `specc show`'s text: the task's headline and cost, then each attempt — what it was told,
//! and each step in order, long texts capped (`--full` shows them whole; the full output of
//! every command is in the log file each check names).
//! design: driver.show

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::Value;
use specc_state::{AttemptStory, Story, StoryStep};

use super::cost::RoleCost;

/// Lines of one text shown before the rest is left out (without `--full`).
const LINES: usize = 24;
/// Characters of one argument shown before the rest is left out.
const ARGUMENT: usize = 160;

pub(super) fn story(
    out: &mut dyn Write,
    s: &Story,
    costs: &BTreeMap<String, RoleCost>,
    diff: Option<&str>,
    full: bool,
) -> std::io::Result<()> {
    let state = match (&s.commit, &s.reason) {
        (Some(c), _) => format!("{}, commit {}", s.state, short(c)),
        (None, Some(r)) => format!("{}: {r}", s.state),
        (None, None) => s.state.clone(),
    };
    writeln!(out, "task {} \"{}\" in {}: {state}", s.task, s.title, s.run)?;
    if costs.is_empty() {
        writeln!(out, "cost: no model calls")?;
    }
    for (role, c) in costs {
        writeln!(
            out,
            "cost: {role} {} call{}, {} in, {} out, ${:.4}",
            c.calls,
            if c.calls == 1 { "" } else { "s" },
            c.input,
            c.output,
            c.dollars
        )?;
    }
    if let Some(line) = redacted(s) {
        writeln!(out, "{line}")?;
    }
    for a in &s.attempts {
        attempt(out, a, full)?;
    }
    if s.attempts.is_empty() {
        writeln!(
            out,
            "\nno attempt in this run (up to date, skipped, or not started)"
        )?;
    }
    match diff {
        Some(d) => {
            writeln!(out, "\n── landed")?;
            writeln!(out, "{}", indent(&cap(d.trim_end(), LINES * 4, full), "  "))?;
        }
        None if s.commit.is_some() => {
            writeln!(
                out,
                "\n── landed: not in out/ yet (it is exported when the build ends)"
            )?;
        }
        None => {}
    }
    Ok(())
}

/// What the journal of the task holds in place of secrets (design: secrets.redaction):
/// `redacted: 2 placeholders (aws-access-key 1, …)`, or `None`.
fn redacted(s: &Story) -> Option<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for a in &s.attempts {
        let texts = a
            .context
            .iter()
            .map(Value::to_string)
            .chain(a.steps.iter().map(|st| st.body.to_string()));
        for t in texts {
            for (k, n) in specc_passes::secrets::placeholders(&t) {
                *counts.entry(k).or_default() += n;
            }
        }
    }
    let total: usize = counts.values().sum();
    (total > 0).then(|| {
        let kinds: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
        format!(
            "redacted: {total} secret{} in what it was told and did, replaced by placeholders ({})",
            if total == 1 { "" } else { "s" },
            kinds.join(", ")
        )
    })
}

fn attempt(out: &mut dyn Write, a: &AttemptStory, full: bool) -> std::io::Result<()> {
    let how = match &a.reason {
        Some(r) => format!("{}: {}", a.state, first_line(r)),
        None => a.state.clone(),
    };
    writeln!(
        out,
        "\n── attempt {} ({}, from {}): {how}",
        a.attempt,
        a.role,
        short(&a.base)
    )?;
    // Step 0 (a re-plan, the work kept) comes before what the attempt was told.
    for st in a.steps.iter().filter(|st| st.step == 0) {
        step(out, st, full)?;
    }
    if let Some(Value::Array(messages)) = &a.context {
        for m in messages {
            let text = m["text"].as_str().unwrap_or_default();
            let who = m["author"].as_str().unwrap_or("?").to_lowercase();
            if who == "system" && !full {
                let n = text.lines().count();
                writeln!(
                    out,
                    "  told [system]: the worker's charter ({n} line{}; --full shows it)",
                    if n == 1 { "" } else { "s" }
                )?;
            } else {
                writeln!(out, "  told [{who}]:")?;
                writeln!(out, "{}", indent(&cap(text, LINES * 2, full), "    "))?;
            }
        }
    }
    for st in a.steps.iter().filter(|st| st.step > 0) {
        step(out, st, full)?;
    }
    Ok(())
}

fn step(out: &mut dyn Write, st: &StoryStep, full: bool) -> std::io::Result<()> {
    let b = &st.body;
    let head = format!("  {:>3} {:<10}", st.step, st.kind);
    match st.kind.as_str() {
        "model" => {
            let u = &b["usage"];
            let tokens = u["input"].as_u64().unwrap_or(0) + u["cached_input"].as_u64().unwrap_or(0);
            writeln!(
                out,
                "{head} {tokens} in, {} out",
                u["output"].as_u64().unwrap_or(0)
            )?;
            if let Some(text) = b["text"].as_str().filter(|t| !t.trim().is_empty()) {
                writeln!(
                    out,
                    "{}",
                    indent(&cap(text.trim(), LINES / 2, full), "                 ")
                )?;
            }
            for c in b["tool_calls"].as_array().into_iter().flatten() {
                let name = c["name"].as_str().unwrap_or("?");
                writeln!(
                    out,
                    "                 → {name} {}",
                    arguments(&c["arguments"], full)
                )?;
            }
        }
        "tool" => {
            let failed = if b["failed"].as_bool() == Some(true) {
                " (failed)"
            } else {
                ""
            };
            writeln!(out, "{head} {}{failed}", b["tool"].as_str().unwrap_or("?"))?;
            let text = b["text"].as_str().unwrap_or_default();
            writeln!(
                out,
                "{}",
                indent(&cap(text.trim_end(), LINES, full), "                 ")
            )?;
        }
        "acceptance" => acceptance(out, &head, b, full)?,
        "submit" => {
            let list = |v: &Value| {
                v.as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(", ")
                    })
                    .unwrap_or_default()
            };
            writeln!(
                out,
                "{head} {} → {}",
                list(&b["paths"]),
                outcome(&b["outcome"])
            )?;
            for (key, what) in [
                ("left_out", "left out (outside the scope)"),
                ("generated", "generated, not landed"),
            ] {
                if !list(&b[key]).is_empty() {
                    writeln!(out, "                 {what}: {}", list(&b[key]))?;
                }
            }
        }
        "replan" => replan(out, &head, b, full)?,
        "carry" => {
            let paths: Vec<&str> = b["carried"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["path"].as_str())
                .collect();
            writeln!(
                out,
                "{head} starts from the last attempt's work: {}",
                paths.join(", ")
            )?;
        }
        "merge" => {
            writeln!(
                out,
                "{head} conflict in {} → {}",
                b["conflict"].as_str().unwrap_or("?"),
                outcome(&b["outcome"])
            )?;
        }
        "review" => {
            for f in b["findings"].as_array().into_iter().flatten() {
                writeln!(
                    out,
                    "{head} {} {}:{}: {}",
                    f["severity"].as_str().unwrap_or("?"),
                    f["file"].as_str().unwrap_or("?"),
                    f["line"],
                    first_line(f["finding"].as_str().unwrap_or_default())
                )?;
            }
            if let Some(ids) = b["followups"].as_array().filter(|a| !a.is_empty()) {
                let ids: Vec<&str> = ids.iter().filter_map(Value::as_str).collect();
                writeln!(out, "                 follow-ups: {}", ids.join(", "))?;
            }
        }
        _ => {
            let text = serde_json::to_string(b).unwrap_or_default();
            writeln!(out, "{head} {}", cap(&text, LINES, full))?;
        }
    }
    Ok(())
}

fn acceptance(out: &mut dyn Write, head: &str, b: &Value, full: bool) -> std::io::Result<()> {
    let results = b["results"].as_array().cloned().unwrap_or_default();
    let unreferenced: Vec<&str> = b["references"]["missing"]
        .as_array()
        .map(|m| m.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let weakened: Vec<&str> = b["weakened"]
        .as_array()
        .map(|w| w.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let passed = unreferenced.is_empty()
        && weakened.is_empty()
        && results.iter().all(|r| {
            serde_json::from_value::<specc_sandbox::CommandResult>(r["result"].clone())
                .is_ok_and(|c| c.success())
        });
    writeln!(out, "{head} {}", if passed { "passed" } else { "failed" })?;
    for w in &weakened {
        writeln!(out, "                 checks weakened: {w}")?;
    }
    if let Some(restored) = b["restored"].as_array().filter(|r| !r.is_empty()) {
        let paths: Vec<&str> = restored.iter().filter_map(Value::as_str).collect();
        writeln!(
            out,
            "                 undone outside the scope: {}",
            paths.join(", ")
        )?;
    }
    for r in &results {
        let result: Option<specc_sandbox::CommandResult> =
            serde_json::from_value(r["result"].clone()).ok();
        let name = r["name"].as_str().unwrap_or("?");
        match result {
            Some(c) => {
                let report = c.report();
                let (how, rest) = report.split_once('\n').unwrap_or((report.as_str(), ""));
                writeln!(
                    out,
                    "                 {name}: {how} (log {})",
                    c.log.display()
                )?;
                if !c.success() && !rest.is_empty() {
                    writeln!(
                        out,
                        "{}",
                        indent(&cap(rest, LINES, full), "                   ")
                    )?;
                }
            }
            None => writeln!(out, "                 {name}: {}", r["result"])?,
        }
    }
    if !unreferenced.is_empty() {
        writeln!(
            out,
            "                 requirement references: no `req:` comment in the write scope names {}",
            unreferenced.join(", ")
        )?;
    }
    Ok(())
}

fn replan(out: &mut dyn Write, head: &str, b: &Value, full: bool) -> std::io::Result<()> {
    let by = if b["by"] == "parent" {
        "its parent planner"
    } else {
        "the planner"
    };
    writeln!(out, "{head} by {by}")?;
    let pad = "                 ";
    if let Some(d) = b["dispute"].as_object() {
        writeln!(
            out,
            "{pad}disputed {}: {}",
            d.get("check").and_then(Value::as_str).unwrap_or("?"),
            cap(
                d.get("evidence")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                LINES / 2,
                full
            )
        )?;
    } else if let Some(after) = b["after"].as_str() {
        writeln!(out, "{pad}after: {}", cap(after, LINES / 2, full))?;
    }
    let r = &b["replan"];
    if let Some(reason) = r["reason"].as_str().filter(|t| !t.trim().is_empty()) {
        writeln!(out, "{pad}reason: {}", reason.trim())?;
    }
    for (key, what) in [
        ("acceptance", "acceptance now"),
        ("write_scope", "write scope now"),
    ] {
        if let Some(list) = r[key].as_array() {
            let items: Vec<&str> = list.iter().filter_map(Value::as_str).collect();
            writeln!(out, "{pad}{what}: {}", items.join("; "))?;
        }
    }
    let instructions = b["replanned"].as_str().unwrap_or_default();
    writeln!(out, "{pad}instructions:")?;
    writeln!(
        out,
        "{}",
        indent(
            &cap(instructions.trim(), LINES / 2, full),
            "                   "
        )
    )?;
    let kept: Vec<&str> = b["carried"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["path"].as_str())
        .collect();
    if !kept.is_empty() {
        writeln!(
            out,
            "{pad}the next attempt starts from the last one's work: {}",
            kept.join(", ")
        )?;
    }
    Ok(())
}

/// A submission's or a merge's outcome in words.
fn outcome(o: &Value) -> String {
    if let Some(id) = o["committed"].as_str() {
        return format!("committed {}", short(id));
    }
    if let Some(p) = o["conflict"].as_str() {
        return format!("conflict in {p}");
    }
    if let Some(r) = o["refused"].as_str() {
        return format!("refused: {r}");
    }
    if let Some(p) = o["sent_back"].as_str() {
        return format!(
            "sent back ({p}): {}",
            o["reason"].as_str().unwrap_or_default()
        );
    }
    serde_json::to_string(o).unwrap_or_default()
}

/// A tool call's arguments, long strings summarised unless `full`.
fn arguments(v: &Value, full: bool) -> String {
    if full {
        return v.to_string();
    }
    let Some(map) = v.as_object() else {
        return v.to_string();
    };
    let parts: Vec<String> = map
        .iter()
        .map(|(k, v)| match v.as_str() {
            Some(s) if s.contains('\n') || s.chars().count() > ARGUMENT => {
                format!("{k}: <{} lines, {} bytes>", s.lines().count(), s.len())
            }
            _ => format!("{k}: {v}"),
        })
        .collect();
    parts.join(", ")
}

/// `text` with at most `lines` lines unless `full`: the first and last lines, and a line
/// saying how many were left out.
fn cap(text: &str, lines: usize, full: bool) -> String {
    let all: Vec<&str> = text.lines().collect();
    if full || all.len() <= lines {
        return text.to_owned();
    }
    let tail = lines / 3;
    let head = lines - tail;
    let mut kept: Vec<String> = all[..head].iter().map(|l| (*l).to_owned()).collect();
    kept.push(format!(
        "[… {} lines left out; --full shows them]",
        all.len() - head - tail
    ));
    kept.extend(all[all.len() - tail..].iter().map(|l| (*l).to_owned()));
    kept.join("\n")
}

fn indent(text: &str, pad: &str) -> String {
    text.lines()
        .map(|l| format!("{pad}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default()
}

fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}
