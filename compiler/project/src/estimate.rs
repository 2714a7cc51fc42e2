//! What a build will spend, before it runs: per work task, a low, middle and high count of
//! worker, reviewer and merge-agent tokens and their dollars. Without an earlier build here
//! the counts come from a model of an attempt — every call sends the task's opening
//! messages and the tools' schemas plus the conversation so far — with the ranges below;
//! with one, from this project's own ledger: the worker's and reviewers' tokens per task
//! (10th percentile, median, 90th) and the share of tasks that needed a merge.
//! design: driver.preview

use std::collections::{BTreeMap, HashMap};

use specc_llm::{CallRow, Price};
use specc_runtime::WorkOrder;

/// Model calls per attempt (low, middle, high; the high one is capped by `[limits] steps`).
/// The middle figures are calibrated on the capable model's recorded builds (3 to 4 calls a
/// task: `fixtures/capable/basen`, and the semver builds of issue 31).
const CALLS: [f64; 3] = [2.0, 4.0, 12.0];
/// Tokens the conversation grows by per call: a tool call and its result.
const GROWTH: [f64; 3] = [100.0, 300.0, 800.0];
/// Output tokens per call.
const OUTPUT: [f64; 3] = [50.0, 300.0, 800.0];
/// Attempts per task (a failure's re-plan and retry, a dispute, a conflict's re-run).
const ATTEMPTS: [f64; 3] = [1.0, 1.1, 2.0];
/// One review of one landed task through one lens: input and output tokens.
const REVIEW: [(f64, f64); 3] = [(800.0, 60.0), (2500.0, 300.0), (8000.0, 1000.0)];
/// The share of tasks whose submission needs the merge agent, and one merge's tokens.
const MERGE_SHARE: [f64; 3] = [0.0, 0.05, 0.3];
const MERGE: [(f64, f64); 3] = [(1000.0, 100.0), (3000.0, 800.0), (8000.0, 2000.0)];
/// Earlier tasks the ledger must hold before its figures replace the model.
const HISTORY_MIN: usize = 3;
/// Characters a token, as the providers count English and code.
const CHARS_PER_TOKEN: f64 = 4.0;

/// Low, middle and high.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Range {
    pub low: f64,
    pub mid: f64,
    pub high: f64,
}

impl Range {
    fn of(f: impl Fn(usize) -> f64) -> Range {
        Range {
            low: f(0),
            mid: f(1),
            high: f(2),
        }
    }

    fn add(&mut self, o: Range) {
        self.low += o.low;
        self.mid += o.mid;
        self.high += o.high;
    }
}

/// One role's spend on one task, or in total.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Spend {
    pub input: Range,
    pub output: Range,
    pub dollars: Range,
}

impl Spend {
    fn priced(input: Range, output: Range, p: Price) -> Spend {
        let dollars = Range::of(|i| {
            let (inp, out) = (
                [input.low, input.mid, input.high][i],
                [output.low, output.mid, output.high][i],
            );
            (inp * p.input + out * p.output) / 1e6
        });
        Spend {
            input,
            output,
            dollars,
        }
    }

    fn add(&mut self, o: &Spend) {
        self.input.add(o.input);
        self.output.add(o.output);
        self.dollars.add(o.dollars);
    }

    /// Input and output together.
    pub fn tokens(&self) -> Range {
        let mut t = self.input;
        t.add(self.output);
        t
    }
}

/// One work task's preview.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TaskEstimate {
    pub id: String,
    pub title: String,
    pub instructions_chars: usize,
    pub write_scope: Vec<String>,
    pub checks: usize,
    /// Landed before with this fingerprint: a build does not run it (it is re-checked only
    /// if something it depends on lands again).
    pub up_to_date: bool,
    /// Tokens every call of an attempt sends before the conversation grows.
    pub context_tokens: u64,
    /// By role: `worker`, `reviewer`, `merger`.
    pub spend: BTreeMap<String, Spend>,
}

/// The whole preview's estimate.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Estimate {
    pub tasks: Vec<TaskEstimate>,
    pub totals: BTreeMap<String, Spend>,
    pub total_dollars: Range,
    /// How it was made, in words.
    pub method: Vec<String>,
}

/// What the estimate needs.
pub struct Inputs<'a> {
    pub orders: &'a [WorkOrder],
    pub field_guide: &'a str,
    /// Task id → the fingerprint it last landed with.
    pub landed: &'a HashMap<String, String>,
    /// The price of each role's model (absent: the role is not configured).
    pub prices: BTreeMap<&'static str, Price>,
    pub lenses: usize,
    pub steps: u32,
    /// This project's ledger: earlier builds' calls.
    pub history: &'a [CallRow],
}

/// Per-task figures an earlier build's ledger gives for one role: (input, output) at the
/// 10th percentile, the median and the 90th, and how many tasks they come from.
fn history_of(rows: &[CallRow], role: &str) -> Option<([(f64, f64); 3], usize)> {
    let mut per: HashMap<(&str, &str), (f64, f64)> = HashMap::new();
    for r in rows.iter().filter(|r| r.role == role && r.run != "plan") {
        // The merge agent's and reviewers' calls name the task after a `:`.
        let task = r.task.rsplit(':').next().unwrap_or(&r.task);
        let e = per.entry((r.run.as_str(), task)).or_default();
        e.0 += (r.usage.input + r.usage.cached_input) as f64;
        e.1 += r.usage.output as f64;
    }
    if per.len() < HISTORY_MIN {
        return None;
    }
    let mut v: Vec<(f64, f64)> = per.into_values().collect();
    v.sort_by(|a, b| (a.0 + a.1).total_cmp(&(b.0 + b.1)));
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    Some(([at(0.1), at(0.5), at(0.9)], v.len()))
}

pub fn estimate(x: &Inputs<'_>) -> Estimate {
    let schema = specc_runtime::tool_schema_chars() as f64 / CHARS_PER_TOKEN;
    let worker_history = history_of(x.history, "worker");
    let review_history = history_of(x.history, "reviewer");
    let calls_high = CALLS[2].min(f64::from(x.steps.max(1)));
    let calls = [CALLS[0], CALLS[1].min(calls_high), calls_high];
    let mut tasks = Vec::new();
    let mut totals: BTreeMap<String, Spend> = BTreeMap::new();
    for o in x.orders {
        let context = specc_runtime::opening_chars(
            o,
            x.field_guide,
            specc_vcs::Options::default().line_budget,
        ) as f64
            / CHARS_PER_TOKEN;
        let up_to_date = x.landed.get(&o.task.id) == Some(&o.fingerprint);
        let mut spend: BTreeMap<String, Spend> = BTreeMap::new();
        if !up_to_date {
            if let Some(p) = x.prices.get("worker") {
                let (input, output) = match &worker_history {
                    Some((h, _)) => (Range::of(|i| h[i].0), Range::of(|i| h[i].1)),
                    None => (
                        Range::of(|i| {
                            let (k, g) = (calls[i], GROWTH[i]);
                            ATTEMPTS[i] * (k * (context + schema) + g * k * (k - 1.0) / 2.0)
                        }),
                        Range::of(|i| ATTEMPTS[i] * calls[i] * OUTPUT[i]),
                    ),
                };
                spend.insert("worker".into(), Spend::priced(input, output, *p));
            }
            if let (Some(p), true) = (x.prices.get("reviewer"), x.lenses > 0) {
                let lenses = x.lenses as f64;
                let (input, output) = match &review_history {
                    Some((h, _)) => (Range::of(|i| h[i].0), Range::of(|i| h[i].1)),
                    None => (
                        Range::of(|i| lenses * REVIEW[i].0),
                        Range::of(|i| lenses * REVIEW[i].1),
                    ),
                };
                spend.insert("reviewer".into(), Spend::priced(input, output, *p));
            }
            if let Some(p) = x.prices.get("merger") {
                let input = Range::of(|i| MERGE_SHARE[i] * MERGE[i].0);
                let output = Range::of(|i| MERGE_SHARE[i] * MERGE[i].1);
                spend.insert("merger".into(), Spend::priced(input, output, *p));
            }
        }
        for (role, s) in &spend {
            totals.entry(role.clone()).or_default().add(s);
        }
        tasks.push(TaskEstimate {
            id: o.task.id.clone(),
            title: o.task.title.clone(),
            instructions_chars: o.task.instructions.chars().count(),
            write_scope: o.task.write_scope.clone(),
            checks: o.checks.len(),
            up_to_date,
            context_tokens: context as u64,
            spend,
        });
    }
    let mut total_dollars = Range::default();
    for s in totals.values() {
        total_dollars.add(s.dollars);
    }
    Estimate {
        tasks,
        totals,
        total_dollars,
        method: method(&worker_history, &review_history, schema, calls),
    }
}

/// How the estimate was made, in sentences.
fn method(
    worker: &Option<([(f64, f64); 3], usize)>,
    review: &Option<([(f64, f64); 3], usize)>,
    schema: f64,
    calls: [f64; 3],
) -> Vec<String> {
    let mut m = Vec::new();
    match worker {
        Some((_, n)) => m.push(format!(
            "worker: this project's ledger, {n} earlier tasks: the 10th percentile, median and 90th of their tokens per task"
        )),
        None => m.push(format!(
            "worker: no earlier build here, so a model of an attempt: {}–{} model calls (middle {}), each sending the task's opening messages (its context, below) and the tools' schemas ({} tokens) plus the conversation so far, growing {}–{} tokens a call, answering {}–{} tokens; {}–{} attempts a task (middle {})",
            calls[0], calls[2], calls[1], schema.round(), GROWTH[0], GROWTH[2], OUTPUT[0], OUTPUT[2], ATTEMPTS[0], ATTEMPTS[2], ATTEMPTS[1]
        )),
    }
    match review {
        Some((_, n)) => m.push(format!(
            "reviewer: this project's ledger, {n} earlier reviewed tasks"
        )),
        None => m.push(format!(
            "reviewer: {}–{} tokens in and {}–{} out per landed task and lens",
            REVIEW[0].0, REVIEW[2].0, REVIEW[0].1, REVIEW[2].1
        )),
    }
    m.push(format!(
        "merger: {}–{}% of tasks need a merge of {}–{} tokens",
        MERGE_SHARE[0] * 100.0,
        MERGE_SHARE[2] * 100.0,
        MERGE[0].0 + MERGE[0].1,
        MERGE[2].0 + MERGE[2].1
    ));
    m.push("tokens are counted as characters / 4; dollars at specc.toml's prices (an unpriced model costs nothing); up-to-date tasks cost nothing".to_owned());
    m
}
