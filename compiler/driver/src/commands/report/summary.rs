//! The report's summary in the terminal: per run, the score it reached, its commits and
//! conflicts, the hottest file, and what each role spent.
//! design: eval.report

use std::collections::BTreeMap;
use std::io::Write;

use super::runs::Run;

pub(super) fn write(runs: &[Run], out: &mut dyn Write) -> std::io::Result<()> {
    for r in runs {
        let (Some(first), Some(last)) = (r.points.first(), r.points.last()) else {
            writeln!(out, "{}: no points yet", r.label)?;
            continue;
        };
        writeln!(
            out,
            "{}: {} point{} over {:.1} min",
            r.label,
            r.points.len(),
            if r.points.len() == 1 { "" } else { "s" },
            last.t_ms as f64 / 60_000.0
        )?;
        let score = |p: &specc_runtime::eval::series::Point| match (p.score, p.passed, p.total) {
            (Some(s), Some(passed), Some(total)) => {
                format!("{passed}/{total} ({:.1}%)", s * 100.0)
            }
            _ => "unknown".to_owned(),
        };
        writeln!(
            out,
            "  score     {} at the end (commit {}), {} at the first point",
            score(last),
            last.commit.chars().take(12).collect::<String>(),
            score(first)
        )?;
        let hottest = last
            .hottest
            .as_ref()
            .map_or(String::new(), |(path, n, lines)| {
                format!("; most conflicted: {path} ({n}, {lines} lines)")
            });
        writeln!(
            out,
            "  swarm     {} commits, {} conflict{}{hottest}",
            last.commits,
            last.conflicts,
            if last.conflicts == 1 { "" } else { "s" }
        )?;
        writeln!(
            out,
            "  tree      {} files, {} lines, {} packages",
            last.files, last.lines, last.packages
        )?;
        let mut roles: BTreeMap<&str, (u64, f64)> = BTreeMap::new();
        for c in &last.costs {
            let e = roles.entry(c.role.as_str()).or_default();
            e.0 += c.input_tokens + c.output_tokens;
            e.1 += c.dollars;
        }
        let spent: Vec<String> = roles
            .iter()
            .map(|(role, (t, d))| format!("{role} ${d:.4} ({t} tokens)"))
            .collect();
        writeln!(
            out,
            "  spent     {}",
            if spent.is_empty() {
                "nothing".to_owned()
            } else {
                spent.join(", ")
            }
        )?;
    }
    Ok(())
}

/// The run's summary at the top of the page: a card per figure a reader looks for first
/// (the final score, time, dollars, tokens, tasks landed and failed, commits, conflicts).
pub(super) fn cards(h: &mut String, r: &Run, named: bool) {
    use std::fmt::Write as _;
    let last = r.points.last();
    let (tokens, dollars) = r.spent();
    let (score, class) = match last.map(|p| (p.score, p.passed, p.total)) {
        Some((Some(s), Some(passed), Some(total))) => (
            format!("{passed}/{total}"),
            if s >= 1.0 { "good" } else { "" },
        ),
        Some(_) => ("could not score".to_owned(), "bad"),
        None => ("–".to_owned(), ""),
    };
    let attempts = &r.timeline.attempts;
    let landed = r.timeline.landed.len();
    let failed = r.timeline.failed.len();
    if named {
        let _ = writeln!(
            h,
            "<h2 class=\"run\">{}</h2>",
            super::text::escape(&r.label)
        );
    }
    h.push_str("<div class=\"cards\">");
    let mut card = |value: String, what: &str, class: &str| {
        let _ = write!(
            h,
            "<div class=\"card {class}\"><b>{}</b><span>{what}</span></div>",
            super::text::escape(&value)
        );
    };
    card(score, "hidden tests passing at the end", class);
    card(
        last.map_or("–".to_owned(), |p| super::text::duration(p.t_ms)),
        "build time",
        "",
    );
    card(format!("${dollars:.4}"), "spent on models", "");
    card(super::text::tokens(tokens as f64), "tokens", "");
    card(landed.to_string(), "tasks landed", "");
    card(
        failed.to_string(),
        "tasks failed",
        if failed > 0 { "bad" } else { "" },
    );
    card(attempts.len().to_string(), "attempts", "");
    card(
        last.map_or("–".to_owned(), |p| p.commits.to_string()),
        "commits",
        "",
    );
    card(
        last.map_or("–".to_owned(), |p| p.conflicts.to_string()),
        "conflicts",
        "",
    );
    h.push_str("</div>\n");
}
