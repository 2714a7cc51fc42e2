//! `specc report` on builds with `[eval]`: every chart's drawn lines mapped back to data
//! (through the ranges and plot box each figure carries) and compared with the database, runs
//! from two state databases on one chart, and empty, unknown and one-point series.

use serde_json::json;

use crate::build::{TOML, build_in, child, done, project, write};
use crate::eval::{built, eval_toml, plain_a, plan, points, specc, with_suite};

/// `(x, y)` pairs of a polyline's `points` attribute.
fn polyline_points(attrs: &str) -> Vec<(f64, f64)> {
    let start = attrs.find("points=\"").expect("points") + 8;
    let end = start + attrs[start..].find('"').expect("end");
    attrs[start..end]
        .split_whitespace()
        .map(|p| {
            let (x, y) = p.split_once(',').expect("x,y");
            (x.parse().expect("x"), y.parse().expect("y"))
        })
        .collect()
}

fn attr<'a>(tag: &'a str, name: &str) -> &'a str {
    let key = format!("{name}=\"");
    let start = tag.find(&key).expect(name) + key.len();
    &tag[start..start + tag[start..].find('"').expect("end")]
}

fn pair(s: &str) -> (f64, f64) {
    let (a, b) = s.split_once(',').expect("pair");
    (a.parse().expect("a"), b.parse().expect("b"))
}

/// The figure `id` of the page: its data ranges and plot box mapped back, the data of each
/// polyline of `color`.
fn drawn(html: &str, id: &str, color: &str) -> Vec<Vec<(f64, f64)>> {
    let start = html
        .find(&format!("<figure class=\"chart\" id=\"{id}\""))
        .expect(id);
    let figure = &html[start..start + html[start..].find("</figure>").expect("end")];
    let tag = &figure[..figure.find('>').expect("tag")];
    assert_eq!(
        attr(tag, "data-x-unit"),
        "seconds",
        "a build under two minutes"
    );
    let (x0, x1) = pair(attr(tag, "data-x"));
    let (y0, y1) = pair(attr(tag, "data-y"));
    let plot: Vec<f64> = attr(tag, "data-plot")
        .split(',')
        .map(|v| v.parse().expect("px"))
        .collect();
    let (left, top, right, bottom) = (plot[0], plot[1], plot[2], plot[3]);
    figure
        .split("<polyline")
        .skip(1)
        .filter(|p| p.contains(&format!("stroke=\"{color}\"")))
        .map(|p| {
            polyline_points(&p[..p.find("/>").expect("close")])
                .into_iter()
                .map(|(px, py)| {
                    (
                        x0 + (px - left) / (right - left) * (x1 - x0),
                        y0 + (bottom - py) / (bottom - top) * (y1 - y0),
                    )
                })
                .collect()
        })
        .collect()
}

#[test]
fn the_report_draws_every_series_of_the_database() {
    let b = built(plain_a());
    let dir = b.dir.path();
    let html_path = dir.join("report.html");
    let html_arg = html_path.display().to_string();
    let (code, out, err) = specc(dir, &["report", "SPEC", "--out", &html_arg]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("score     2/2 (100.0%) at the end"), "{out}");
    let html = std::fs::read_to_string(&html_path).expect("page");
    assert!(
        !html.contains("<script") && !html.contains(" src=") && !html.contains("href=\"http"),
        "self-contained: nothing fetched"
    );
    for id in [
        "score",
        "commits",
        "conflicts",
        "hottest",
        "packages",
        "lines",
        "tokens",
        "dollars",
    ] {
        assert!(html.contains(&format!("id=\"{id}\"")), "chart {id}");
    }
    // Every chart has axis titles with units and a legend naming the run.
    assert!(html.contains("seconds since the build started") && html.contains("tests passing (%)"));
    let c = rusqlite::Connection::open(dir.join(".specc/state.db")).expect("db");
    let run: String = c
        .query_row("SELECT run FROM eval_runs", [], |r| r.get(0))
        .expect("run");
    assert!(html.contains(&run), "legend names the run");
    let series = |sql: &str| -> Vec<(f64, f64)> {
        let mut s = c.prepare(sql).expect("query");
        s.query_map([&run], |r| {
            Ok((r.get::<_, i64>(0)? as f64 / 1000.0, r.get::<_, f64>(1)?))
        })
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("series")
    };
    let color = "#1F77B4"; // the first run's
    for (id, sql) in [
        (
            "score",
            "SELECT t_ms, score * 100 FROM eval_points WHERE run = ?1 AND score IS NOT NULL ORDER BY point",
        ),
        (
            "commits",
            "SELECT t_ms, commits FROM eval_points WHERE run = ?1 ORDER BY point",
        ),
        (
            "lines",
            "SELECT t_ms, lines FROM eval_points WHERE run = ?1 ORDER BY point",
        ),
    ] {
        let want = series(sql);
        let lines = drawn(&html, id, color);
        let matches = |line: &Vec<(f64, f64)>| {
            line.len() == want.len()
                && line.iter().zip(&want).all(|(got, w)| {
                    (got.0 - w.0).abs() <= 0.02 * want.last().map_or(1.0, |l| l.0.max(0.01))
                        && (got.1 - w.1).abs() <= 0.01 * w.1.abs().max(1.0) + 0.5
                })
        };
        assert!(
            lines.iter().any(matches),
            "{id}: drawn {lines:?}, stored {want:?}"
        );
    }
    // A tree without a package manifest: the packages chart says so in words instead of
    // drawing a flat line at zero.
    assert!(
        series("SELECT t_ms, packages FROM eval_points WHERE run = ?1 ORDER BY point")
            .iter()
            .all(|(_, n)| *n == 0.0)
    );
    let packages = figure(&html, "packages");
    assert!(
        packages.starts_with("<figure class=\"chart empty\"")
            && packages.contains("No package manifest in the tree"),
        "{packages}"
    );
    // Tokens by role: the worker's line is the ledger's worker tokens at each point.
    let legend = attr(
        &html[html.find("id=\"tokens\"").expect("tokens") - 30..],
        "data-series",
    )
    .replace("&quot;", "\"");
    let legend: Vec<(String, String)> = serde_json::from_str(&legend).expect("legend");
    let worker = legend
        .iter()
        .find(|(n, _)| n == "worker")
        .expect("a worker line");
    let want = series(
        "SELECT p.t_ms, COALESCE(SUM(c.input_tokens + c.output_tokens), 0) * 1.0 FROM eval_points p
         LEFT JOIN eval_costs c ON c.run = p.run AND c.point = p.point AND c.role = 'worker'
         WHERE p.run = ?1 GROUP BY p.point ORDER BY p.point",
    );
    let lines = drawn(&html, "tokens", &worker.1);
    assert!(
        lines.iter().any(|l| l.len() == want.len()
            && l.iter()
                .zip(&want)
                .all(|(g, w)| (g.1 - w.1).abs() <= 0.01 * w.1.max(1.0) + 0.5)),
        "tokens: drawn {lines:?}, stored {want:?}"
    );
}

#[test]
fn a_report_of_a_state_without_a_series_says_so() {
    let dir = project(TOML);
    let b = build_in(
        dir,
        plan(),
        json!({"a": [plain_a()], "b": [[[write("b.txt", "beta\n")], [done()]]]}),
    );
    let (code, _, err) = specc(b.dir.path(), &["report", "SPEC", "--out", "/dev/null"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("E0502") && err.contains("has an eval series"),
        "{err}"
    );
}

#[test]
fn runs_from_two_state_databases_share_each_chart_with_a_legend() {
    let (one, two) = (built(plain_a()), built(plain_a()));
    let html_path = one.dir.path().join("both.html");
    let html_arg = html_path.display().to_string();
    let dbs: Vec<String> = [&one, &two]
        .iter()
        .map(|b| b.dir.path().join(".specc/state.db").display().to_string())
        .collect();
    let (code, out, err) = specc(
        one.dir.path(),
        &[
            "report", "--state", &dbs[0], "--state", &dbs[1], "--out", &html_arg,
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 runs"), "{out}");
    let html = std::fs::read_to_string(&html_path).expect("page");
    let start = html.find("id=\"score\"").expect("score chart");
    let legend = attr(&html[start - 30..], "data-series").replace("&quot;", "\"");
    let legend: Vec<(String, String)> = serde_json::from_str(&legend).expect("legend");
    assert_eq!(legend.len(), 2, "{legend:?}");
    assert_ne!(legend[0].1, legend[1].1, "each run its own colour");
    for ((name, color), b) in legend.iter().zip([&one, &two]) {
        let want: Vec<f64> = points(b.dir.path())
            .iter()
            .filter_map(|p| p.0.map(|s| s * 100.0))
            .collect();
        let lines = drawn(&html, "score", color);
        assert!(
            lines.iter().any(|l| l.len() == want.len()
                && l.iter().zip(&want).all(|(g, w)| (g.1 - w).abs() <= 1.0)),
            "{name}: drawn {lines:?}, stored {want:?}"
        );
        assert!(
            html.contains(&format!(">\n{name}\n</text>")),
            "{name} drawn in the legend"
        );
    }
}

/// The figure `id` of the report at `html`.
fn figure<'a>(html: &'a str, id: &str) -> &'a str {
    // A chart, or (class `chart empty`) a chart with nothing to draw, said in words.
    let at = html.find(&format!(" id=\"{id}\"")).expect(id);
    let start = html[..at].rfind("<figure").expect("figure");
    &html[start..start + html[start..].find("</figure>").expect("end")]
}

#[test]
fn an_unknown_score_and_a_one_point_series_still_draw_sensibly() {
    // Only the final evaluation (a hundred landings never come), of a suite whose output is
    // cut: one point, its score unknown.
    let toml = eval_toml("").replace("every = { merges = 1 }", "every = { merges = 100 }");
    let b = crate::eval::built_with_a_cut_suite(&toml);
    assert_eq!(b.code, 0, "{}", b.err);
    assert_eq!(points(b.dir.path()).len(), 1);
    let html_path = b.dir.path().join("one.html");
    let html_arg = html_path.display().to_string();
    let (code, out, err) = specc(b.dir.path(), &["report", "SPEC", "--out", &html_arg]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("score     unknown at the end"), "{out}");
    let html = std::fs::read_to_string(&html_path).expect("page");
    // An evaluation whose output could not be read counts as 0, with a mark that says why
    // on hover.
    let score = figure(&html, "score");
    assert!(!score.contains("no points yet"), "{score}");
    assert!(
        score.contains("class=\"unscored\"")
            && score.contains("could not score at point 0")
            && score.contains("<title>"),
        "{score}"
    );
    let drawn_score = drawn(&html, "score", "#1F77B4");
    // (The legend's sample line is drawn in the same colour, above the plot's data.)
    assert!(
        drawn_score
            .iter()
            .any(|l| l.len() == 1 && l[0].1.abs() < 0.5),
        "the unknown score is drawn at 0: {drawn_score:?}"
    );
    // The one point of every other series is a visible mark inside the plot.
    for id in ["commits", "lines", "tokens"] {
        let f = figure(&html, id);
        assert!(f.contains("<circle"), "{id}: one point is marked");
        assert!(!f.contains("no points yet"), "{id}");
    }
}

#[test]
fn conflicts_the_hottest_file_and_dollars_are_drawn_as_stored() {
    // Both leaves note under one section of the field guide at once: the second to land
    // conflicts and runs again. Workers are priced, so dollars are not zero.
    let toml = eval_toml("\n[prices.worker]\ninput = 2.0\noutput = 8.0\n");
    let note = |t: &str| json!({"name": "note", "arguments": {"section": "Notes", "text": t}});
    let a = json!([[write("a.txt", "alpha\n"), note("a was here")], [done()]]);
    let bb = json!([[write("b.txt", "beta\n"), note("b was here")], [done()]]);
    let b = build_in(
        with_suite(&toml),
        json!({"": {"decisions": [], "children": [
            child("a", "R-1", "a.txt", &["test -f a.txt"], &[]),
            child("b", "R-2", "b.txt", &["grep -q beta b.txt"], &[]),
        ]}}),
        json!({"a": [a.clone(), a], "b": [bb.clone(), bb]}),
    );
    assert_eq!(b.code, 0, "{}", b.err);
    let dir = b.dir.path();
    let c = rusqlite::Connection::open(dir.join(".specc/state.db")).expect("db");
    let (conflicts, path, lines): (i64, String, i64) = c
        .query_row(
            "SELECT conflicts, hottest_path, hottest_lines FROM eval_points WHERE final = 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("final point");
    assert_eq!((conflicts, path.as_str()), (1, "field-guide/index.md"));
    let guide = std::fs::read_to_string(dir.join("out/field-guide/index.md")).expect("guide");
    assert_eq!(lines as usize, guide.lines().count());
    let html_path = dir.join("report.html");
    let html_arg = html_path.display().to_string();
    let (code, out, err) = specc(dir, &["report", "SPEC", "--out", &html_arg]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("most conflicted: field-guide/index.md (1,"),
        "{out}"
    );
    let html = std::fs::read_to_string(&html_path).expect("page");
    let series = |sql: &str| -> Vec<(f64, f64)> {
        let mut s = c.prepare(sql).expect("query");
        s.query_map([], |r| {
            Ok((r.get::<_, i64>(0)? as f64 / 1000.0, r.get::<_, f64>(1)?))
        })
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("series")
    };
    let legend_color = |id: &str, name: &str| -> String {
        let f = figure(&html, id);
        let legend = attr(f, "data-series").replace("&quot;", "\"");
        let legend: Vec<(String, String)> = serde_json::from_str(&legend).expect("legend");
        legend.into_iter().find(|(n, _)| n == name).expect(name).1
    };
    let run: String = c
        .query_row("SELECT run FROM eval_runs", [], |r| r.get(0))
        .expect("run");
    for (id, name, sql) in [
        (
            "conflicts",
            run.as_str(),
            "SELECT t_ms, conflicts * 1.0 FROM eval_points ORDER BY point",
        ),
        (
            "hottest",
            run.as_str(),
            "SELECT t_ms, hottest_lines * 1.0 FROM eval_points WHERE hottest_path IS NOT NULL ORDER BY point",
        ),
        (
            "dollars",
            "worker",
            "SELECT p.t_ms, COALESCE(SUM(c.dollars), 0.0) FROM eval_points p
              LEFT JOIN eval_costs c ON c.run = p.run AND c.point = p.point AND c.role = 'worker'
              GROUP BY p.point ORDER BY p.point",
        ),
    ] {
        let want = series(sql);
        assert!(!want.is_empty(), "{id}");
        let lines = drawn(&html, id, &legend_color(id, name));
        let top = want.iter().map(|w| w.1).fold(0.0f64, f64::max).max(1e-9);
        assert!(
            lines.iter().any(|l| l.len() == want.len()
                && l.iter()
                    .zip(&want)
                    .all(|(g, w)| (g.1 - w.1).abs() <= 0.02 * top)),
            "{id}: drawn {lines:?}, stored {want:?}"
        );
    }
}
