//! Tokens and dollars by role and by model, with each one's share of the total.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::ledger::CallRow;

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Line {
    pub name: String,
    /// Calls that succeeded (`ok`, or `ok_estimated_usage` when the provider reported no
    /// usage and the tokens are estimated from the text).
    pub calls: u64,
    /// Attempts, retries and failures included.
    pub attempts: u64,
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    pub output_tokens: u64,
    pub dollars: f64,
    /// This line's share of all dollars (of all tokens when nothing was priced), 0 to 1.
    pub share: f64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    pub by_role: Vec<Line>,
    pub by_model: Vec<Line>,
    pub total: Line,
}

pub fn summarize(rows: &[CallRow]) -> Summary {
    let mut roles: BTreeMap<String, Line> = BTreeMap::new();
    let mut models: BTreeMap<String, Line> = BTreeMap::new();
    let mut total = Line {
        name: "total".to_owned(),
        ..Line::default()
    };
    for r in rows {
        for line in [
            roles.entry(r.role.clone()).or_default(),
            models.entry(r.model.clone()).or_default(),
            &mut total,
        ] {
            line.attempts += 1;
            line.calls += u64::from(r.outcome.starts_with("ok"));
            line.input_tokens += r.usage.input;
            line.cached_input_tokens += r.usage.cached_input;
            line.output_tokens += r.usage.output;
            line.dollars += r.dollars;
        }
    }
    let tokens = |l: &Line| (l.input_tokens + l.cached_input_tokens + l.output_tokens) as f64;
    let share = |l: &Line| {
        if total.dollars > 0.0 {
            l.dollars / total.dollars
        } else if tokens(&total) > 0.0 {
            tokens(l) / tokens(&total)
        } else {
            0.0
        }
    };
    let finish = |map: BTreeMap<String, Line>| -> Vec<Line> {
        let mut lines: Vec<Line> = map
            .into_iter()
            .map(|(name, mut l)| {
                l.name = name;
                l.share = share(&l);
                l
            })
            .collect();
        lines.sort_by(|a, b| b.dollars.total_cmp(&a.dollars).then(a.name.cmp(&b.name)));
        lines
    };
    let by_role = finish(roles);
    let by_model = finish(models);
    total.share = if rows.is_empty() { 0.0 } else { 1.0 };
    Summary {
        by_role,
        by_model,
        total,
    }
}
