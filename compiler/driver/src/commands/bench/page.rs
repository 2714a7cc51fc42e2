//! The bench as one self-contained HTML page, the seed's figure for any suite: the totals
//! per configuration first, then the final score against dollars (a mark per run, a colour
//! per configuration), each case's score over time with a line per configuration, and the
//! dollars by role per configuration.
//! design: project.bench

use std::fmt::Write as _;

use specc_project::bench::{RunResult, Suite, Totals};

use crate::commands::report::charts::{self, Chart, Line, PALETTE, Spec};
use crate::commands::report::text::escape;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:0;padding:18px 24px;color:#222;\
background:#f5f6f8}h1{font-size:22px;margin:0 0 2px}p.sub{color:#555;margin:0 0 14px}\
table{border-collapse:collapse;margin:6px 0 16px;font-size:13px;background:#fff}\
th,td{border:1px solid #ccc;padding:4px 10px;text-align:right}th{background:#f0f1f3}\
td.l,th.l{text-align:left}.grid{display:grid;grid-template-columns:repeat(auto-fill,\
minmax(520px,1fr));gap:12px}figure{margin:0;border:1px solid #dcdfe4;border-radius:6px;\
background:#fff;padding:4px}figure svg{width:100%;height:auto;display:block}\
figure.empty{padding:16px 20px}figure.empty h3{font-size:16px;margin:0 0 8px;font-weight:normal}";

fn percent(v: f64) -> String {
    format!("{v:.0}%")
}

fn figure(h: &mut String, c: &Chart) {
    match &c.nothing {
        Some(words) => {
            let _ = writeln!(
                h,
                "<figure class=\"empty\"><h3>{}</h3><p>{}</p></figure>",
                escape(&c.title),
                escape(words)
            );
        }
        None => {
            let svg = c.svg.find("<svg").map_or(c.svg.as_str(), |i| &c.svg[i..]);
            let _ = writeln!(h, "<figure>{svg}</figure>");
        }
    }
}

pub(super) fn page(suite: &Suite, runs: &[RunResult], totals: &[Totals]) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>specc bench</title>\
         <style>{STYLE}</style></head><body>\n<h1>specc bench</h1><p class=\"sub\">{} case(s) × {} \
         configuration(s); the hidden score each reached and what it cost.</p>\n",
        suite.cases.len(),
        suite.configurations.len()
    );
    h.push_str(
        "<table><tr><th class=\"l\">configuration</th><th class=\"l\">what</th><th>runs</th>\
         <th>fully passing</th><th>mean score</th><th>dollars</th><th>tokens</th></tr>\n",
    );
    for t in totals {
        let _ = writeln!(
            h,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{}</td><td>{}/{}</td><td>{}</td>\
             <td>${:.4}</td><td>{}</td></tr>",
            escape(&t.configuration),
            escape(&t.about),
            t.runs,
            t.fully_passing,
            t.runs,
            t.mean_score
                .map_or("–".to_owned(), |s| format!("{:.1}%", s * 100.0)),
            t.dollars,
            t.tokens
        );
    }
    h.push_str("</table>\n<div class=\"grid\">\n");
    let color = |i: usize| PALETTE[i % PALETTE.len()];
    let by_config = |f: &dyn Fn(&RunResult) -> Vec<(f64, f64)>, case: Option<&str>| -> Vec<Line> {
        suite
            .configurations
            .iter()
            .enumerate()
            .map(|(i, k)| Line {
                name: k.name.clone(),
                color: color(i),
                points: runs
                    .iter()
                    .filter(|r| r.configuration == k.name && case.is_none_or(|c| r.case == c))
                    .flat_map(f)
                    .collect(),
            })
            .collect()
    };
    let scatter = Spec {
        title: "Final hidden score against dollars, a mark per run",
        x_desc: "dollars spent on models",
        y_desc: "hidden tests passing (%)",
        y_format: percent,
        y_floor_max: 100.0,
        integer: false,
        lines: by_config(
            &|r| vec![(r.dollars(), r.score().unwrap_or(0.0) * 100.0)],
            None,
        ),
        nothing: "No run finished yet.",
        zero_is_nothing: false,
        marks_only: true,
    };
    figure(&mut h, &charts::draw(&scatter));
    for case in &suite.cases {
        let title = format!("{}: hidden score over time", case.name);
        let spec = Spec {
            title: &title,
            x_desc: "seconds since the build started",
            y_desc: "hidden tests passing (%)",
            y_format: percent,
            y_floor_max: 100.0,
            integer: false,
            lines: by_config(
                &|r| r.curve.iter().map(|(t, s)| (*t, s * 100.0)).collect(),
                Some(&case.name),
            ),
            nothing: "No evaluation of this case yet.",
            zero_is_nothing: false,
            marks_only: false,
        };
        figure(&mut h, &charts::draw(&spec));
    }
    let _ = writeln!(h, "<figure>{}</figure>", split(totals));
    h.push_str("</div>\n</body></html>\n");
    h
}

/// The dollars by role of each configuration: a bar per configuration, a segment per role.
fn split(totals: &[Totals]) -> String {
    let mut roles: Vec<&str> = totals
        .iter()
        .flat_map(|t| t.dollars_by_role.keys().map(String::as_str))
        .collect();
    roles.sort_unstable();
    roles.dedup();
    let max = totals
        .iter()
        .map(|t| t.dollars)
        .fold(0.0f64, f64::max)
        .max(1e-9);
    let (left, width, row) = (170.0, 500.0, 34.0);
    let height = 70.0 + row * totals.len() as f64 + 30.0;
    let mut s = format!(
        "<svg width=\"720\" height=\"{height}\" viewBox=\"0 0 720 {height}\" \
         xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\">\
         <rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\
         <text x=\"360\" y=\"24\" font-size=\"18\" text-anchor=\"middle\">Dollars by role per configuration</text>"
    );
    for (i, role) in roles.iter().enumerate() {
        let x = left + i as f64 * 110.0;
        let _ = write!(
            s,
            "<rect x=\"{x}\" y=\"40\" width=\"12\" height=\"12\" fill=\"{}\"/>\
             <text x=\"{}\" y=\"50\" font-size=\"12\">{}</text>",
            charts::hex(PALETTE[i % PALETTE.len()]),
            x + 16.0,
            escape(role)
        );
    }
    for (k, t) in totals.iter().enumerate() {
        let y = 70.0 + k as f64 * row;
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>",
            left - 8.0,
            y + 17.0,
            escape(&t.configuration)
        );
        let mut x = left;
        for (i, role) in roles.iter().enumerate() {
            let d = t.dollars_by_role.get(*role).copied().unwrap_or(0.0);
            let w = d / max * width;
            let _ = write!(
                s,
                "<rect x=\"{x:.1}\" y=\"{y}\" width=\"{w:.1}\" height=\"24\" fill=\"{}\">\
                 <title>{}: {} ${d:.4}</title></rect>",
                charts::hex(PALETTE[i % PALETTE.len()]),
                escape(&t.configuration),
                escape(role)
            );
            x += w;
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{}\" font-size=\"12\">${:.4}</text>",
            x + 6.0,
            y + 17.0,
            t.dollars
        );
    }
    s.push_str("</svg>");
    s
}
