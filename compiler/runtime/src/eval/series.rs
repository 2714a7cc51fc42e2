//! The eval series in the state database, per run: one point per evaluation with its time
//! since the run started, commit, score, the run's commits and conflicts so far, the tree's
//! measures, and the run's tokens and dollars by role and model so far (from the ledger's
//! `llm_calls`, read when the head was taken). `specc report` draws from it.
//! design: eval.series

use specc_state::schema::{Migration, Tables, has_column, has_table, migrate};
use specc_state::{Row, Sql, StateDb, StateError, args};

use super::evaluator::Evaluation;

/// The eval series' tables (design: state.owners): a run's start, its points, and each
/// point's costs by role and model.
pub const EVAL: Tables = Tables {
    owner: "eval",
    migrations: &[
        Migration {
            version: 1,
            legacy: Some(1),
            sql: "
CREATE TABLE IF NOT EXISTS eval_runs (
    run {text} PRIMARY KEY, started_ms {int} NOT NULL, base_seq {int} NOT NULL);
CREATE TABLE IF NOT EXISTS eval_points (
    run {text} NOT NULL, point {int} NOT NULL, t_ms {int} NOT NULL,
    commit_id {text} NOT NULL, score {real}, passed {int}, failed {int}, total {int},
    commits {int} NOT NULL, conflicts {int} NOT NULL, lines {int} NOT NULL,
    files {int} NOT NULL, packages {int} NOT NULL, hottest_path {text},
    hottest_conflicts {int}, hottest_lines {int}, final {int} NOT NULL,
    PRIMARY KEY (run, point));
CREATE TABLE IF NOT EXISTS eval_costs (
    run {text} NOT NULL, point {int} NOT NULL, role {text} NOT NULL, model {text} NOT NULL,
    input_tokens {int} NOT NULL, output_tokens {int} NOT NULL, dollars {real} NOT NULL,
    PRIMARY KEY (run, point, role, model))",
        },
        Migration {
            version: 2,
            legacy: None,
            // Why an evaluation had no score (its exit and the end of its output), for the
            // report's hover (design: eval.report).
            sql: "ALTER TABLE eval_points ADD COLUMN why {text}",
        },
    ],
};

/// Makes the series' tables, and the ledger's, whose `llm_calls` a point's costs are read
/// from.
pub fn create(db: &StateDb) -> Result<(), StateError> {
    db.now(|c| {
        migrate(c, &specc_llm::LEDGER)?;
        migrate(c, &EVAL)
    })
}

/// One role and model's spending so far.
#[derive(Clone, Debug, PartialEq)]
pub struct Cost {
    pub role: String,
    pub model: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub dollars: f64,
}

/// One point of a run's series.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub point: u32,
    /// Milliseconds since the run started.
    pub t_ms: u64,
    pub commit: String,
    /// Passed over total, 0 to 1; `None`: unknown.
    pub score: Option<f64>,
    pub passed: Option<u64>,
    pub total: Option<u64>,
    pub commits: u64,
    pub conflicts: u64,
    pub lines: u64,
    pub files: u64,
    pub packages: u64,
    pub hottest: Option<(String, u64, u64)>,
    /// The evaluation at the build's end.
    pub last: bool,
    /// Why there is no score (its exit and the end of its output), when there is none.
    pub why: Option<String>,
    pub costs: Vec<Cost>,
}

/// Where a run's series starts: when and at which VCS sequence number. Made on the first
/// call for a run and kept after (a resumed run keeps its start).
pub fn begin(db: &StateDb, run: &str, now_ms: u64, seq: u64) -> Result<(u64, u64), StateError> {
    db.now(|c| {
        c.execute(
            "INSERT INTO eval_runs (run, started_ms, base_seq) VALUES (?1, ?2, ?3)
             ON CONFLICT (run) DO NOTHING",
            args![run, now_ms, seq],
        )?;
        let r = c.query_one(
            "SELECT started_ms, base_seq FROM eval_runs WHERE run = ?1",
            args![run],
        )?;
        Ok((r.u64(0)?, r.u64(1)?))
    })
}

/// What the VCS had to say when the point was taken: the run's commits and conflicts so far.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    pub commits: u64,
    pub conflicts: u64,
}

/// `run`'s tokens and dollars so far, by role and model (every call recorded until now).
pub fn costs(db: &StateDb, run: &str) -> Result<Vec<Cost>, StateError> {
    db.now(|c| {
        // The sums cast: PostgreSQL sums integers as NUMERIC.
        c.query(
            "SELECT role, model, CAST(SUM(input_tokens + cached_input_tokens) AS BIGINT),
                    CAST(SUM(output_tokens) AS BIGINT), SUM(dollars)
             FROM llm_calls WHERE run = ?1 GROUP BY role, model ORDER BY role, model",
            args![run],
        )?
        .iter()
        .map(|r| {
            Ok(Cost {
                role: r.text(0)?,
                model: r.text(1)?,
                input_tokens: r.u64(2)?,
                output_tokens: r.u64(3)?,
                dollars: r.real(4)?,
            })
        })
        .collect()
    })
}

/// Appends `e` to `run`'s series with `counts` and `costs`, taken when the head was (so
/// they describe one moment); returns the point's number.
pub fn record(
    db: &StateDb,
    run: &str,
    t_ms: u64,
    e: &Evaluation,
    (counts, costs): (Counts, &[Cost]),
    last: bool,
) -> Result<u32, StateError> {
    let commit = e.commit.hex();
    let score = e.score.clone();
    let m = e.metrics.clone();
    let why = score.is_none().then(|| why_unscored(e));
    // Its own transaction: a point that cannot be written is reported, and the build's
    // queued journal and ledger writes are not lost with it.
    db.transaction(|tx| {
        let point = tx
            .query_one(
                "SELECT COALESCE(MAX(point) + 1, 0) FROM eval_points WHERE run = ?1",
                args![run],
            )?
            .u32(0)?;
        let (passed, failed, total) = match &score {
            Some(s) => (
                Some(s.passed as i64),
                Some(s.failed as i64),
                Some(s.total() as i64),
            ),
            None => (None, None, None),
        };
        let hot = m.hottest.as_ref();
        tx.execute(
            "INSERT INTO eval_points (run, point, t_ms, commit_id, score, passed, failed,
                 total, commits, conflicts, lines, files, packages, hottest_path,
                 hottest_conflicts, hottest_lines, final, why) VALUES
                 (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                  ?18)",
            args![
                run,
                point,
                t_ms,
                &commit,
                score.as_ref().and_then(|s| s.ratio()),
                passed,
                failed,
                total,
                counts.commits,
                counts.conflicts,
                m.lines,
                m.files,
                m.packages,
                hot.map(|h| h.0.as_str()),
                hot.map(|h| h.1),
                hot.map(|h| h.2),
                last,
                why.as_deref(),
            ],
        )?;
        for c in costs {
            tx.execute(
                "INSERT INTO eval_costs (run, point, role, model, input_tokens, output_tokens,
                     dollars) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                args![
                    run,
                    point,
                    &c.role,
                    &c.model,
                    c.input_tokens,
                    c.output_tokens,
                    c.dollars
                ],
            )?;
        }
        Ok(point)
    })
}

/// The runs that have a series, oldest first.
pub fn runs(c: &mut dyn Sql) -> Result<Vec<String>, StateError> {
    if !has_table(c, "eval_points")? {
        return Ok(Vec::new());
    }
    c.query("SELECT run FROM eval_runs ORDER BY started_ms, run", &[])?
        .iter()
        .map(|r| r.text(0))
        .collect()
}

fn point_of(r: &Row) -> Result<Point, StateError> {
    let hottest = r
        .opt_text(11)?
        .map(|p| -> Result<_, StateError> {
            Ok((
                p,
                r.opt_int(12)?.unwrap_or(0) as u64,
                r.opt_int(13)?.unwrap_or(0) as u64,
            ))
        })
        .transpose()?;
    Ok(Point {
        point: r.u32(0)?,
        t_ms: r.u64(1)?,
        commit: r.text(2)?,
        score: r.opt_real(3)?,
        passed: r.opt_int(4)?.map(|v| v as u64),
        total: r.opt_int(5)?.map(|v| v as u64),
        commits: r.u64(6)?,
        conflicts: r.u64(7)?,
        lines: r.u64(8)?,
        files: r.u64(9)?,
        packages: r.u64(10)?,
        hottest,
        last: r.flag(14)?,
        why: r.opt_text(15)?,
        costs: Vec::new(),
    })
}

/// Why an evaluation has no score: how its command ended and the last lines of its output.
fn why_unscored(e: &Evaluation) -> String {
    use specc_sandbox::Exit;
    let ended = match &e.exit {
        Exit::Code(0) => "exit 0 with no test summary".to_owned(),
        Exit::Code(c) => format!("exit {c}"),
        Exit::Signal(s) => format!("killed by signal {s}"),
        Exit::TimedOut => "timed out".to_owned(),
        Exit::NotStarted(why) => format!("did not start: {why}"),
    };
    let text = std::fs::read_to_string(&e.log).unwrap_or_default();
    let tail: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("---"))
        .collect();
    let tail = tail[tail.len().saturating_sub(2)..].join(" / ");
    let mut why = match tail.is_empty() {
        true => ended,
        false => format!("{ended}: {tail}"),
    };
    if why.len() > 300 {
        let cut = (0..=300)
            .rev()
            .find(|i| why.is_char_boundary(*i))
            .unwrap_or(0);
        why.truncate(cut);
        why.push('…');
    }
    why
}

/// `run`'s series, in order; empty if it has none.
pub fn points(c: &mut dyn Sql, run: &str) -> Result<Vec<Point>, StateError> {
    if !has_table(c, "eval_points")? {
        return Ok(Vec::new());
    }
    // A database read without migrating it may predate `why`.
    let why = match has_column(c, "eval_points", "why")? {
        true => "why",
        false => "NULL",
    };
    let mut points: Vec<Point> = c
        .query(
            &format!(
                "SELECT point, t_ms, commit_id, score, passed, total, commits, conflicts, lines,
                        files, packages, hottest_path, hottest_conflicts, hottest_lines, final,
                        {why}
                 FROM eval_points WHERE run = ?1 ORDER BY point"
            ),
            args![run],
        )?
        .iter()
        .map(point_of)
        .collect::<Result<_, _>>()?;
    let rows = c.query(
        "SELECT point, role, model, input_tokens, output_tokens, dollars FROM eval_costs
         WHERE run = ?1 ORDER BY point, role, model",
        args![run],
    )?;
    for r in rows {
        let point = r.u32(0)?;
        let cost = Cost {
            role: r.text(1)?,
            model: r.text(2)?,
            input_tokens: r.u64(3)?,
            output_tokens: r.u64(4)?,
            dollars: r.real(5)?,
        };
        if let Some(p) = points.iter_mut().find(|p| p.point == point) {
            p.costs.push(cost);
        }
    }
    Ok(points)
}

/// Every run of `c` that has a series, oldest first, with its points.
pub fn all(c: &mut dyn Sql) -> Result<Vec<(String, Vec<Point>)>, StateError> {
    runs(c)?
        .into_iter()
        .map(|run| {
            let points = points(c, &run)?;
            Ok((run, points))
        })
        .collect()
}

/// Every run of the state database at `path` that has a series, oldest first, with its
/// points; read-only (it works while a build writes).
pub fn read(path: &std::path::Path) -> Result<Vec<(String, Vec<Point>)>, StateError> {
    let mut c = specc_state::sqlite::open_read_only(path)?;
    all(&mut c)
}

/// The last point's conflicts of `run`, the base a resumed run counts on from.
pub fn last_conflicts(db: &StateDb, run: &str) -> Result<u64, StateError> {
    db.read(|c| {
        c.query_opt(
            "SELECT conflicts FROM eval_points WHERE run = ?1 ORDER BY point DESC LIMIT 1",
            args![run],
        )?
        .map_or(Ok(0), |r| r.u64(0))
    })
}

/// When `run`'s series started (ms since the epoch), if it has one: the origin of its
/// points' `t_ms`.
pub fn started(c: &mut dyn Sql, run: &str) -> Result<Option<i64>, StateError> {
    if !has_table(c, "eval_runs")? {
        return Ok(None);
    }
    c.query_opt(
        "SELECT started_ms FROM eval_runs WHERE run = ?1",
        args![run],
    )?
    .map(|r| r.int(0))
    .transpose()
}
