//! The `[limits]` table of specc.toml that planning reads: the tree's depth and width, and
//! the field guide's line budget. Unknown keys are refused, so a typo is not silently a
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
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_depth: 6,
            max_width: 24,
            max_tokens: 8192,
            field_guide_lines: 200,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    depth: Option<usize>,
    width: Option<usize>,
    field_guide_lines: Option<usize>,
}

#[derive(Deserialize)]
struct File {
    limits: Option<Table>,
}

impl Limits {
    /// The defaults overridden by the `[limits]` table of specc.toml's text.
    pub fn from_toml(text: &str) -> Result<Limits, String> {
        let file: File = toml::from_str(text).map_err(|e| format!("[limits]: {e}"))?;
        let mut limits = Limits::default();
        if let Some(t) = file.limits {
            let positive = |v: Option<usize>, key: &str, default: usize| match v {
                Some(0) => Err(format!("[limits] {key} must be at least 1")),
                Some(v) => Ok(v),
                None => Ok(default),
            };
            limits.max_depth = positive(t.depth, "depth", limits.max_depth)?;
            limits.max_width = positive(t.width, "width", limits.max_width)?;
            limits.field_guide_lines = t.field_guide_lines.unwrap_or(limits.field_guide_lines);
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
        assert!(typo.contains("depht"), "{typo}");
        assert!(Limits::from_toml("[limits]\nwidth = 0\n").is_err());
    }
}
