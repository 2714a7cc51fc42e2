//! The eval series in the state database, per run: one point per evaluation with its time
//! since the run started, commit, score, the run's commits and conflicts so far, the tree's
//! measures, and the run's tokens and dollars by role and model so far (from the ledger's
//! `llm_calls`, read when the head was taken). `specc report` draws from it.
//! design: eval.series

use rusqlite::{Connection, OptionalExtension, params};
use specc_llm::{StateDb, StateError};

use super::Evaluation;

/// Makes the series' tables (the ledger's `llm_calls` must exist: the ledger opened first).
pub fn create(db: &StateDb) -> Result<(), StateError> {
    // The state database's one schema (design: state.backends).
    db.now(|c| specc_llm::schema::migrate_sqlite(c))
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
    pub costs: Vec<Cost>,
}

/// Where a run's series starts: when and at which VCS sequence number. Made on the first
/// call for a run and kept after (a resumed run keeps its start).
pub fn begin(db: &StateDb, run: &str, now_ms: u64, seq: u64) -> Result<(u64, u64), StateError> {
    db.now(|c| {
        c.execute(
            "INSERT OR IGNORE INTO eval_runs (run, started_ms, base_seq) VALUES (?1, ?2, ?3)",
            params![run, now_ms as i64, seq as i64],
        )?;
        c.query_row(
            "SELECT started_ms, base_seq FROM eval_runs WHERE run = ?1",
            [run],
            |r| Ok((r.get::<_, i64>(0)? as u64, r.get::<_, i64>(1)? as u64)),
        )
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
        let mut s = c.prepare(
            "SELECT role, model, SUM(input_tokens + cached_input_tokens), SUM(output_tokens),
                    SUM(dollars)
             FROM llm_calls WHERE run = ?1 GROUP BY role, model ORDER BY role, model",
        )?;
        s.query_map([run], |r| {
            Ok(Cost {
                role: r.get(0)?,
                model: r.get(1)?,
                input_tokens: r.get::<_, i64>(2)? as u64,
                output_tokens: r.get::<_, i64>(3)? as u64,
                dollars: r.get(4)?,
            })
        })?
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
    db.now(|c| {
        let tx = c.transaction()?;
        let point: u32 = tx.query_row(
            "SELECT COALESCE(MAX(point) + 1, 0) FROM eval_points WHERE run = ?1",
            [run],
            |r| r.get(0),
        )?;
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
            "INSERT INTO eval_points VALUES
                 (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
            params![
                run,
                point,
                t_ms as i64,
                commit,
                score.as_ref().and_then(|s| s.ratio()),
                passed,
                failed,
                total,
                counts.commits as i64,
                counts.conflicts as i64,
                m.lines as i64,
                m.files as i64,
                m.packages as i64,
                hot.map(|h| h.0.clone()),
                hot.map(|h| h.1 as i64),
                hot.map(|h| h.2 as i64),
                last,
            ],
        )?;
        for c in costs {
            tx.execute(
                "INSERT INTO eval_costs VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    run,
                    point,
                    c.role,
                    c.model,
                    c.input_tokens as i64,
                    c.output_tokens as i64,
                    c.dollars
                ],
            )?;
        }
        tx.commit()?;
        Ok(point)
    })
}

/// The runs that have a series, oldest first.
pub fn runs(c: &Connection) -> rusqlite::Result<Vec<String>> {
    if !has_series(c)? {
        return Ok(Vec::new());
    }
    let mut s = c.prepare("SELECT run FROM eval_runs ORDER BY started_ms, run")?;
    s.query_map([], |r| r.get(0))?.collect()
}

fn has_series(c: &Connection) -> rusqlite::Result<bool> {
    c.query_row(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'eval_points'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// `run`'s series, in order; empty if it has none.
pub fn points(c: &Connection, run: &str) -> rusqlite::Result<Vec<Point>> {
    if !has_series(c)? {
        return Ok(Vec::new());
    }
    let mut s = c.prepare(
        "SELECT point, t_ms, commit_id, score, passed, total, commits, conflicts, lines, files,
                packages, hottest_path, hottest_conflicts, hottest_lines, final
         FROM eval_points WHERE run = ?1 ORDER BY point",
    )?;
    let mut points: Vec<Point> = s
        .query_map([run], |r| {
            let hottest = r
                .get::<_, Option<String>>(11)?
                .map(|p| -> rusqlite::Result<_> {
                    Ok((
                        p,
                        r.get::<_, Option<i64>>(12)?.unwrap_or(0) as u64,
                        r.get::<_, Option<i64>>(13)?.unwrap_or(0) as u64,
                    ))
                })
                .transpose()?;
            Ok(Point {
                point: r.get(0)?,
                t_ms: r.get::<_, i64>(1)? as u64,
                commit: r.get(2)?,
                score: r.get(3)?,
                passed: r.get::<_, Option<i64>>(4)?.map(|v| v as u64),
                total: r.get::<_, Option<i64>>(5)?.map(|v| v as u64),
                commits: r.get::<_, i64>(6)? as u64,
                conflicts: r.get::<_, i64>(7)? as u64,
                lines: r.get::<_, i64>(8)? as u64,
                files: r.get::<_, i64>(9)? as u64,
                packages: r.get::<_, i64>(10)? as u64,
                hottest,
                last: r.get(14)?,
                costs: Vec::new(),
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut s = c.prepare(
        "SELECT point, role, model, input_tokens, output_tokens, dollars FROM eval_costs
         WHERE run = ?1 ORDER BY point, role, model",
    )?;
    let rows = s.query_map([run], |r| {
        Ok((
            r.get::<_, u32>(0)?,
            Cost {
                role: r.get(1)?,
                model: r.get(2)?,
                input_tokens: r.get::<_, i64>(3)? as u64,
                output_tokens: r.get::<_, i64>(4)? as u64,
                dollars: r.get(5)?,
            },
        ))
    })?;
    for row in rows {
        let (point, cost) = row?;
        if let Some(p) = points.iter_mut().find(|p| p.point == point) {
            p.costs.push(cost);
        }
    }
    Ok(points)
}

/// Every run of the state database at `path` that has a series, oldest first, with its
/// points; read-only (it works while a build writes).
pub fn read(path: &std::path::Path) -> Result<Vec<(String, Vec<Point>)>, String> {
    use rusqlite::OpenFlags;
    let c = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let read = || -> rusqlite::Result<Vec<(String, Vec<Point>)>> {
        runs(&c)?
            .into_iter()
            .map(|run| {
                let points = points(&c, &run)?;
                Ok((run, points))
            })
            .collect()
    };
    read().map_err(|e| format!("{}: {e}", path.display()))
}

/// The last point's conflicts of `run`, the base a resumed run counts on from.
pub fn last_conflicts(db: &StateDb, run: &str) -> Result<u64, StateError> {
    db.read(|c| {
        c.query_row(
            "SELECT conflicts FROM eval_points WHERE run = ?1 ORDER BY point DESC LIMIT 1",
            [run],
            |r| r.get::<_, i64>(0),
        )
        .optional()
        .map(|v| v.unwrap_or(0) as u64)
    })
}
