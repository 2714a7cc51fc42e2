//! The `[review]` table of specc.toml: which lenses review a landed task, on what share of
//! tasks, from what severity a finding becomes a follow-up task, and a model per lens.
//! Unknown keys, lenses and severities are refused, so a typo is not silently "no review".
//! design: runtime.reviewers

use std::collections::BTreeMap;

use serde::Deserialize;

/// What a reviewer looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lens {
    /// The worker's whole journal of the attempt that landed.
    Transcript,
    /// The landed diff only.
    Diff,
    /// The touched files as the head has them, and their neighbours; no diff.
    Codebase,
}

impl Lens {
    pub fn as_str(self) -> &'static str {
        match self {
            Lens::Transcript => "transcript",
            Lens::Diff => "diff",
            Lens::Codebase => "codebase",
        }
    }
}

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Minor,
    Major,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Minor => "minor",
            Severity::Major => "major",
            Severity::Critical => "critical",
        }
    }
}

/// How landed tasks are reviewed. No lenses: no review.
#[derive(Clone, Debug, PartialEq)]
pub struct ReviewConfig {
    pub lenses: Vec<Lens>,
    /// The share of landed tasks reviewed, 0 to 1 (chosen by task id, the same every run).
    pub sample: f64,
    /// Findings at or above it become follow-up tasks.
    pub severity: Severity,
    /// A model of the reviewer role's provider per lens; the role's model otherwise.
    pub models: BTreeMap<Lens, String>,
}

impl Default for ReviewConfig {
    fn default() -> ReviewConfig {
        ReviewConfig {
            lenses: Vec::new(),
            sample: 1.0,
            severity: Severity::Major,
            models: BTreeMap::new(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    #[serde(default)]
    lenses: Vec<Lens>,
    sample: Option<f64>,
    severity: Option<Severity>,
    #[serde(default)]
    models: BTreeMap<Lens, String>,
}

#[derive(Deserialize)]
struct File {
    review: Option<Table>,
}

/// Why `[review]` was refused.
#[derive(Clone, Debug, PartialEq)]
pub enum ReviewConfigError {
    /// Not TOML, or a key, lens or severity `[review]` does not have (the parser's message).
    Toml(String),
    /// A sample that is not a share.
    Sample(f64),
}

impl std::fmt::Display for ReviewConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReviewConfigError::Toml(why) => write!(f, "[review]: {why}"),
            ReviewConfigError::Sample(s) => {
                write!(f, "[review] sample = {s}: it is a share, from 0 to 1")
            }
        }
    }
}

impl std::error::Error for ReviewConfigError {}

impl ReviewConfig {
    /// Reads `[review]` from the text of specc.toml; other tables are not this reader's.
    pub fn parse(text: &str) -> Result<ReviewConfig, ReviewConfigError> {
        let file: File =
            toml::from_str(text).map_err(|e| ReviewConfigError::Toml(e.to_string()))?;
        let Some(t) = file.review else {
            return Ok(ReviewConfig::default());
        };
        let sample = t.sample.unwrap_or(1.0);
        if !(0.0..=1.0).contains(&sample) {
            return Err(ReviewConfigError::Sample(sample));
        }
        let mut lenses = t.lenses;
        lenses.dedup();
        Ok(ReviewConfig {
            lenses,
            sample,
            severity: t.severity.unwrap_or(Severity::Major),
            models: t.models,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_and_its_refusals() {
        assert_eq!(
            ReviewConfig::parse("").expect("empty"),
            ReviewConfig::default()
        );
        let c = ReviewConfig::parse(
            "[review]\nlenses = [\"diff\", \"codebase\"]\nsample = 0.5\nseverity = \"minor\"\n\
             [review.models]\ncodebase = \"big\"\n",
        )
        .expect("parses");
        assert_eq!(c.lenses, [Lens::Diff, Lens::Codebase]);
        assert_eq!(c.severity, Severity::Minor);
        assert_eq!(c.models[&Lens::Codebase], "big");
        for bad in [
            "[review]\nlense = [\"diff\"]\n",
            "[review]\nlenses = [\"vibes\"]\n",
            "[review]\nseverity = \"huge\"\n",
            "[review]\nsample = 2.0\n",
        ] {
            assert!(ReviewConfig::parse(bad).is_err(), "{bad}");
        }
    }
}
