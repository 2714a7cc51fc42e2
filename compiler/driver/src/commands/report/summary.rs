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
