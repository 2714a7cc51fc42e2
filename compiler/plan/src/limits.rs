//! The `[limits]` table of specc.toml that planning reads: the tree's depth and width, the
//! planner calls of one plan, and the field guide's line budget. Unknown keys are refused, so a typo is not silently a
//! default.
//! design: runtime.limits

use serde::Deserialize;

/// Limits of a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_depth: usize,
    pub max_width: usize,
    /// Output tokens for one planner answer.
    pub max_tokens: u32,
    /// Lines of the field guide given to each agent.
    pub field_guide_lines: usize,
    /// Model calls one work attempt may make.
    pub steps: u32,
    /// Input and output tokens one work attempt may use.
    pub attempt_tokens: u64,
    /// Wall-clock seconds of one work attempt.
    pub attempt_seconds: u64,
    /// Seconds one command (`run`, an acceptance check) may take.
    pub command_seconds: u64,
    /// Bytes of a command's output a model sees (head and tail).
    pub output_bytes: usize,
    /// Model calls planning one spec may make (repairs and merges included).
    pub planner_calls: usize,
    /// Tokens of the spec's text one planner request shows before the rest of its subtree
    /// becomes an outline read with `read_spec` (design: spec.node-text).
    pub planner_spec_tokens: usize,
    /// Lines a file may have: the VCS refuses a landing that grows one past it (its
    /// `Options::line_budget`, the same figure: specc-project's tests hold them equal).
    /// Planners are told it, so that they give code that may outgrow it room for several
    /// files (design: runtime.landing-refusals).
    pub line_budget: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_depth: 6,
            max_width: 24,
            max_tokens: 8192,
            field_guide_lines: 200,
            steps: 40,
            attempt_tokens: 400_000,
            attempt_seconds: 900,
            command_seconds: 300,
            output_bytes: 16 << 10,
            planner_calls: 2000,
            planner_spec_tokens: 24_000,
            line_budget: 600,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    depth: Option<usize>,
    width: Option<usize>,
    field_guide_lines: Option<usize>,
    steps: Option<u32>,
    attempt_tokens: Option<u64>,
    attempt_seconds: Option<u64>,
    command_seconds: Option<u64>,
    output_bytes: Option<usize>,
    planner_calls: Option<usize>,
    planner_spec_tokens: Option<usize>,
}

#[derive(Deserialize)]
struct File {
    limits: Option<Table>,
}

/// Why `[limits]` was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitsError {
    /// Not TOML, or a key `[limits]` does not have (the parser's message).
    Toml(String),
    /// A limit of 0 for `key`.
    Zero { key: &'static str },
    /// `planner_calls` below a call and its two repairs.
    TooFewPlannerCalls,
}

impl std::fmt::Display for LimitsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LimitsError::Toml(why) => write!(f, "[limits]: {why}"),
            LimitsError::Zero { key } => write!(f, "[limits] {key} must be at least 1"),
            LimitsError::TooFewPlannerCalls => write!(
                f,
                "[limits] planner_calls must be at least 3: a call and its two repairs"
            ),
        }
    }
}

impl std::error::Error for LimitsError {}

/// `v`, or `default` when absent; zero is refused.
fn positive<T: PartialEq + Default>(
    v: Option<T>,
    key: &'static str,
    default: T,
) -> Result<T, LimitsError> {
    match v {
        Some(v) if v == T::default() => Err(LimitsError::Zero { key }),
        Some(v) => Ok(v),
        None => Ok(default),
    }
}

impl Limits {
    /// The defaults overridden by the `[limits]` table of specc.toml's text.
    pub fn from_toml(text: &str) -> Result<Limits, LimitsError> {
        let file: File = toml::from_str(text).map_err(|e| LimitsError::Toml(e.to_string()))?;
        let mut limits = Limits::default();
        if let Some(t) = file.limits {
            limits.max_depth = positive(t.depth, "depth", limits.max_depth)?;
            limits.max_width = positive(t.width, "width", limits.max_width)?;
            limits.field_guide_lines = t.field_guide_lines.unwrap_or(limits.field_guide_lines);
            limits.steps = positive(t.steps, "steps", limits.steps)?;
            limits.attempt_tokens =
                positive(t.attempt_tokens, "attempt_tokens", limits.attempt_tokens)?;
            limits.attempt_seconds =
                positive(t.attempt_seconds, "attempt_seconds", limits.attempt_seconds)?;
            limits.command_seconds =
                positive(t.command_seconds, "command_seconds", limits.command_seconds)?;
            limits.output_bytes = positive(t.output_bytes, "output_bytes", limits.output_bytes)?;
            limits.planner_calls =
                positive(t.planner_calls, "planner_calls", limits.planner_calls)?;
            limits.planner_spec_tokens = positive(
                t.planner_spec_tokens,
                "planner_spec_tokens",
                limits.planner_spec_tokens,
            )?;
            if limits.planner_calls < 3 {
                return Err(LimitsError::TooFewPlannerCalls);
            }
        }
        Ok(limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_overrides_defaults_and_refuses_typos() {
        let l = Limits::from_toml("[limits]\ndepth = 3\n[roles.planner]\nprovider = \"p\"\n")
            .expect("parses");
        assert_eq!((l.max_depth, l.max_width), (3, 24));
        assert_eq!(Limits::from_toml("").expect("empty"), Limits::default());
        let typo = Limits::from_toml("[limits]\ndepht = 3\n").expect_err("typo");
        assert!(typo.to_string().contains("depht"), "{typo}");
        assert!(Limits::from_toml("[limits]\nwidth = 0\n").is_err());
    }
}
