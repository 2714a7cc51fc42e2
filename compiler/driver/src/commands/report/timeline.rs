//! The swarm's timeline: one row per job slot, a bar per attempt coloured by how it ended,
//! landings marked above the rows and merges (an attempt whose submission went to the merge
//! agent) at the end of their bar, each with its story on hover. specc does not record
//! which slot ran an attempt, so the rows are the attempts packed as their times allow: an
//! attempt takes the first row free when it starts, as a job does.
//! design: eval.report

use std::fmt::Write as _;

use specc_state::Timeline;

use super::text::escape;

const WIDTH: f64 = 1200.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 76.0;
const ROW: f64 = 16.0;

/// How an attempt ended: its colour and its word in the legend.
const STATES: &[(&str, &str)] = &[
    ("landed", "#2CA02C"),
    ("failed", "#D62728"),
    ("conflict", "#FF7F0E"),
    ("blocked", "#9467BD"),
    ("running", "#7F7F7F"),
];

fn color(state: &str) -> &'static str {
    STATES
        .iter()
        .find(|(s, _)| *s == state)
        .map_or("#BCBD22", |(_, c)| c)
}

/// The attempts' rows: each attempt's row, and how many rows there are.
fn rows(t: &Timeline, end_ms: i64) -> (Vec<usize>, usize) {
    let mut free_at: Vec<i64> = Vec::new();
    let mut of = Vec::new();
    for a in &t.attempts {
        let start = a.started_ms.unwrap_or(end_ms);
        let end = a.finished_ms.unwrap_or(end_ms).max(start);
        let row = match free_at.iter().position(|f| *f <= start) {
            Some(r) => r,
            None => {
                free_at.push(0);
                free_at.len() - 1
            }
        };
        free_at[row] = end;
        of.push(row);
    }
    (of, free_at.len())
}

/// The timeline as SVG, its x axis in seconds since `start_ms` (the build's start); `None`
/// when the run has no attempt with times (a database from before they were recorded).
pub(super) fn svg(t: &Timeline, start_ms: Option<i64>, title: &str) -> Option<String> {
    let starts = t.attempts.iter().filter_map(|a| a.started_ms);
    let first = start_ms.or_else(|| starts.clone().min())?;
    let end_ms = t
        .attempts
        .iter()
        .filter_map(|a| a.finished_ms.or(a.started_ms))
        .chain(t.landed.iter().map(|(_, ms)| *ms))
        .max()?;
    let (row_of, rows) = rows(t, end_ms);
    let span = ((end_ms - first) as f64 / 1000.0).max(0.001) * 1.02;
    let height = TOP + rows as f64 * ROW + 44.0;
    let x = |ms: i64| LEFT + ((ms - first) as f64 / 1000.0) / span * (WIDTH - LEFT - RIGHT);
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" \
         xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\">\
         <rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\
         <text x=\"{}\" y=\"20\" font-size=\"18\" text-anchor=\"middle\">{}</text>",
        WIDTH / 2.0,
        escape(title)
    );
    legend(&mut s);
    axis(&mut s, span, rows, height);
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"end\">landings</text>",
        LEFT - 6.0,
        TOP - 6.0
    );
    for (task, ms) in &t.landed {
        let cx = x(*ms);
        let _ = write!(
            s,
            "<path class=\"landing\" d=\"M{cx:.1} {} l-5 -8 h10 z\" fill=\"#2CA02C\"><title>{} landed at {:.2} s</title></path>",
            TOP - 8.0,
            escape(task),
            (*ms - first) as f64 / 1000.0
        );
    }
    for (a, row) in t.attempts.iter().zip(row_of) {
        let start = a.started_ms.unwrap_or(end_ms);
        let end = a.finished_ms.unwrap_or(end_ms).max(start);
        let (x0, x1) = (x(start), x(end));
        let y = TOP + row as f64 * ROW;
        let seconds = (end - start) as f64 / 1000.0;
        let _ = write!(
            s,
            "<rect class=\"attempt\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" \
             fill=\"{}\" data-state=\"{}\"><title>{} #{} ({}): {} after {seconds:.2} s</title></rect>",
            y + 2.0,
            (x1 - x0).max(2.0),
            ROW - 4.0,
            color(&a.state),
            escape(&a.state),
            escape(&a.task),
            a.attempt,
            escape(&a.role),
            escape(&a.state)
        );
        if a.merged {
            let _ = write!(
                s,
                "<path class=\"merge\" d=\"M{x1:.1} {:.1} l5 6 l-5 6 l-5 -6 z\" fill=\"#1F77B4\" \
                 stroke=\"#fff\"><title>{}: its change went to the merge agent</title></path>",
                y + 2.0,
                escape(&a.task)
            );
        }
    }
    s.push_str("</svg>");
    Some(s)
}

fn legend(s: &mut String) {
    let mut at = LEFT;
    let items =
        STATES
            .iter()
            .map(|(w, c)| (*w, *c, false))
            .chain([("merge agent", "#1F77B4", true)]);
    for (word, c, diamond) in items {
        let shape = if diamond {
            format!(
                "<path d=\"M{} 32 l5 6 l-5 6 l-5 -6 z\" fill=\"{c}\"/>",
                at + 5.0
            )
        } else {
            let mark = if word == "landed" {
                // The landing mark above the rows, beside its bar's colour.
                format!("<path d=\"M{} 44 l-5 -8 h10 z\" fill=\"{c}\"/>", at - 12.0)
            } else {
                String::new()
            };
            format!("{mark}<rect x=\"{at}\" y=\"32\" width=\"12\" height=\"12\" fill=\"{c}\"/>")
        };
        let _ = write!(
            s,
            "{shape}<text x=\"{}\" y=\"42\" font-size=\"12\">{word}</text>",
            at + 16.0
        );
        at += 24.0 + word.len() as f64 * 7.0;
    }
}

fn axis(s: &mut String, span: f64, rows: usize, height: f64) {
    let bottom = TOP + rows as f64 * ROW;
    let _ = write!(
        s,
        "<line x1=\"{LEFT}\" y1=\"{bottom}\" x2=\"{}\" y2=\"{bottom}\" stroke=\"#888\"/>\
         <text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">seconds since the build started</text>\
         <text x=\"14\" y=\"{}\" font-size=\"12\" transform=\"rotate(-90 14 {})\" text-anchor=\"middle\">job slots</text>",
        WIDTH - RIGHT,
        (LEFT + WIDTH - RIGHT) / 2.0,
        height - 6.0,
        (TOP + bottom) / 2.0,
        (TOP + bottom) / 2.0
    );
    for i in 0..=10 {
        let v = span * i as f64 / 10.0;
        let px = LEFT + (WIDTH - LEFT - RIGHT) * i as f64 / 10.0;
        let label = if span >= 20.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.1}")
        };
        let _ = write!(
            s,
            "<line x1=\"{px:.1}\" y1=\"{TOP}\" x2=\"{px:.1}\" y2=\"{bottom}\" stroke=\"#eee\"/>\
             <text x=\"{px:.1}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{label}</text>",
            bottom + 14.0
        );
    }
    for r in 0..rows {
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\" fill=\"#666\">{}</text>",
            LEFT - 6.0,
            TOP + r as f64 * ROW + ROW - 5.0,
            r + 1
        );
    }
}
