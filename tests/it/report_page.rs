//! `specc report`'s page, as a person sees it (design: eval.report): the summary cards first,
//! then the swarm's timeline and the charts in a grid, an evaluation that could not run drawn
//! at 0 with its reason on hover, and words where a chart has nothing to show. The state is
//! written here with fixed times, so the page is the same every run: an HTML snapshot.
//! `scripts/report-screenshot.sh` renders it (the page in the note of issue 42).

use rusqlite::params;

const RUN: &str = "build-1000";

/// A state database with one run: four evaluations (the first two could not run: the code
/// did not compile yet), seven attempts on two job slots (one failed, one merged), their
/// landings and the spending by role.
fn state(db: &std::path::Path) {
    drop(specc_state::Journal::open(db).expect("journal"));
    let sdb = specc_state::StateDb::open(db).expect("state db");
    specc_runtime::eval::series::create(&sdb).expect("series");
    drop(sdb);
    let c = rusqlite::Connection::open(db).expect("db");
    let start: i64 = 1_700_000_000_000;
    c.execute(
        "INSERT INTO eval_runs (run, started_ms, base_seq) VALUES (?1, ?2, 0)",
        params![RUN, start],
    )
    .expect("eval run");
    let why = "exit 101: error[E0425]: cannot find function `parse` in this scope";
    // (t, score, passed, commits, conflicts, lines, why)
    type Row<'a> = (
        i64,
        Option<f64>,
        Option<i64>,
        i64,
        i64,
        i64,
        Option<&'a str>,
    );
    let points: [Row<'_>; 4] = [
        (4_000, None, None, 2, 0, 80, Some(why)),
        (9_000, None, None, 3, 0, 140, Some(why)),
        (15_000, Some(0.5), Some(7), 5, 1, 230, None),
        (21_000, Some(1.0), Some(14), 8, 1, 310, None),
    ];
    for (i, (t, score, passed, commits, conflicts, lines, why)) in points.iter().enumerate() {
        c.execute(
            "INSERT INTO eval_points (run, point, t_ms, commit_id, score, passed, failed, total,
                 commits, conflicts, lines, files, packages, hottest_path, hottest_conflicts,
                 hottest_lines, final, why)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 6, 1, ?12, ?13, ?14, ?15, ?16)",
            params![
                RUN,
                i as i64,
                t,
                format!("{:040x}", i + 1),
                score,
                passed,
                passed.map(|p| 14 - p),
                passed.map(|_| 14),
                commits,
                conflicts,
                lines,
                (*conflicts > 0).then_some("src/lib.rs"),
                (*conflicts > 0).then_some(1),
                (*conflicts > 0).then_some(40),
                i == 3,
                why,
            ],
        )
        .expect("point");
        for (role, model, tokens, dollars) in [
            ("planner", "planner-large", 3_000, 0.014),
            (
                "worker",
                "worker-small",
                12_000 * (i as i64 + 1),
                0.004 * (i as f64 + 1.0),
            ),
        ] {
            c.execute(
                "INSERT INTO eval_costs (run, point, role, model, input_tokens, output_tokens,
                     dollars) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![RUN, i as i64, role, model, tokens, tokens / 10, dollars],
            )
            .expect("cost");
        }
    }
    // (task, attempt, state, start s, end s, merged)
    let attempts = [
        ("scaffold", 1, "landed", 0.5, 3.5, false),
        ("parse", 1, "failed", 3.8, 8.0, false),
        ("count", 1, "landed", 3.9, 7.5, false),
        ("parse", 2, "landed", 8.2, 12.9, false),
        ("render", 1, "landed", 8.0, 14.0, true),
        ("cli", 1, "landed", 13.2, 18.4, false),
        ("docs", 1, "landed", 14.5, 19.8, false),
    ];
    for (task, attempt, state, s, e, merged) in attempts {
        let ms = |x: f64| start + (x * 1000.0) as i64;
        c.execute(
            "INSERT INTO attempts (run, task, attempt, role, base, state, started_unix,
                 finished_unix, started_ms, finished_ms)
             VALUES (?1, ?2, ?3, 'worker', 'base', ?4, 0, 0, ?5, ?6)",
            params![RUN, task, attempt, state, ms(s), ms(e)],
        )
        .expect("attempt");
        if merged {
            c.execute(
                "INSERT INTO steps (run, task, attempt, step, kind, body)
                 VALUES (?1, ?2, ?3, 9, 'merge', '{}')",
                params![RUN, task, attempt],
            )
            .expect("merge step");
        }
        if state == "landed" {
            c.execute(
                "INSERT INTO tasks (run, task, title, fingerprint, state, commit_id, landed_ms)
                 VALUES (?1, ?2, ?2, 'f', 'landed', 'c', ?3)",
                params![RUN, task, ms(e)],
            )
            .expect("task");
        }
    }
}

#[test]
fn the_report_page_puts_the_summary_first_and_draws_the_swarm() {
    let dir = tempfile::tempdir().expect("dir");
    let db = dir.path().join("state.db");
    state(&db);
    let page = dir.path().join("report.html");
    let out = crate::support::specc(&[
        "report",
        "--state",
        &db.display().to_string(),
        "--out",
        &page.display().to_string(),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let html = std::fs::read_to_string(&page).expect("page");
    // The summary comes first; the could-not-run evaluations are at 0 with their reason.
    let cards = html.find("class=\"cards\"").expect("cards");
    assert!(cards < html.find("class=\"grid\"").expect("grid"));
    assert!(html.contains("<b>14/14</b><span>hidden tests passing at the end"));
    assert_eq!(html.matches("class=\"unscored\"").count(), 2);
    assert!(html.contains("cannot find function `parse`"));
    // The timeline: a bar per attempt, a landing mark per landed task, one merge.
    assert_eq!(html.matches("class=\"attempt\"").count(), 7);
    assert_eq!(html.matches("class=\"landing\"").count(), 6);
    assert_eq!(html.matches("class=\"merge\"").count(), 1);
    insta::assert_snapshot!("report-page", html);
}
