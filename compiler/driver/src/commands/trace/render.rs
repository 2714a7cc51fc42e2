//! `specc trace`'s three renderings: text for people, Markdown for a pull request or a
//! report, JSON for tools.
//! design: driver.trace

use std::io::Write;
use std::path::Path;

use super::rows::{Row, Summary};
use specc_project::trace::TestStatus;

/// A text cut to `n` characters.
fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

fn status_word(s: &TestStatus) -> &'static str {
    match s {
        TestStatus::Passed(_) => "passed",
        TestStatus::Failed(_) => "failed",
        TestStatus::NotRun(_) => "not run",
    }
}

/// A percentage that never shows 100 unless it is: 249 of 250 is 99.6%, not 100%.
fn shown_pct(p: f64) -> String {
    if p >= 100.0 {
        "100%".to_owned()
    } else {
        format!("{:.1}%", (p * 10.0).floor() / 10.0)
    }
}

fn summary_line(s: &Summary) -> String {
    let waived = if s.waived == 0 {
        String::new()
    } else {
        format!(" ({} more waived as needing no code)", s.waived)
    };
    format!(
        "MUST requirements: {}{waived}; covered by a task {} ({}), by code {} ({}), by a passing test {} ({})",
        s.binding,
        s.by_task,
        shown_pct(s.pct(s.by_task)),
        s.by_code,
        shown_pct(s.pct(s.by_code)),
        s.by_passing_test,
        shown_pct(s.pct(s.by_passing_test))
    )
}

pub(super) fn text(
    rows: &[Row],
    summary: &Summary,
    tree: &Path,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(out, "code: {}", tree.display())?;
    for r in rows {
        writeln!(out)?;
        writeln!(
            out,
            "{} {}  {}  {}",
            r.id,
            r.level,
            cut(&r.text, 60),
            r.place
        )?;
        let tasks: Vec<String> = r
            .tasks
            .iter()
            .map(|t| format!("{}{}", t.id, if t.landed { "" } else { " (not landed)" }))
            .collect();
        writeln!(
            out,
            "  tasks: {}",
            if tasks.is_empty() {
                "none".to_owned()
            } else {
                tasks.join(", ")
            }
        )?;
        if let Some(why) = &r.waived {
            writeln!(out, "  waived: needs no code ({why})")?;
        }
        let code: Vec<String> = r
            .code
            .iter()
            .map(|c| format!("{}:{}", c.path, c.line))
            .collect();
        writeln!(
            out,
            "  code:  {}",
            if code.is_empty() {
                "none".to_owned()
            } else {
                code.join(", ")
            }
        )?;
        if r.tests.is_empty() {
            writeln!(out, "  tests: none")?;
        }
        for t in &r.tests {
            let what = if t.spec_check {
                " (the spec's test block)"
            } else {
                ""
            };
            writeln!(
                out,
                "  test:  {}:{}{what} {}",
                t.path,
                t.line,
                status_word(&t.status)
            )?;
        }
    }
    writeln!(out)?;
    writeln!(out, "{}", summary_line(summary))
}

pub(super) fn markdown(
    rows: &[Row],
    summary: &Summary,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(out, "| requirement | level | tasks | code | tests |")?;
    writeln!(out, "| --- | --- | --- | --- | --- |")?;
    let cell = |items: Vec<String>| {
        if items.is_empty() {
            "—".to_owned()
        } else {
            items.join("<br>").replace('|', "\\|")
        }
    };
    for r in rows {
        writeln!(
            out,
            "| {} {} | {} | {} | {} | {} |",
            r.id,
            cut(&r.text, 50).replace('|', "\\|"),
            r.level,
            cell(r.tasks.iter().map(|t| t.id.clone()).collect()),
            cell(
                r.code
                    .iter()
                    .map(|c| format!("`{}:{}`", c.path, c.line))
                    .collect()
            ),
            cell(
                r.tests
                    .iter()
                    .map(|t| format!("`{}:{}` {}", t.path, t.line, status_word(&t.status)))
                    .collect()
            ),
        )?;
    }
    writeln!(out)?;
    writeln!(out, "{}", summary_line(summary))
}

pub(super) fn json(
    rows: &[Row],
    summary: &Summary,
    tree: &Path,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let v = serde_json::json!({
        "tree": tree.display().to_string(),
        "requirements": rows,
        "summary": {
            "binding": summary.binding,
            "waived": summary.waived,
            "by_task": summary.by_task,
            "by_code": summary.by_code,
            "by_passing_test": summary.by_passing_test,
            "by_task_pct": summary.pct(summary.by_task),
            "by_code_pct": summary.pct(summary.by_code),
            "by_passing_test_pct": summary.pct(summary.by_passing_test),
        },
    });
    serde_json::to_writer_pretty(&mut *out, &v)?;
    writeln!(out)
}
