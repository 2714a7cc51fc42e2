//! The accepted baseline: `specc-drift.json` beside the spec, a sorted, pretty-printed list
//! of the findings people accepted, meant to be committed and reviewed like code. A finding
//! is accepted while an entry has its subject, kind and path and the file still has the
//! content it had when accepted: edit the file again and the drift is new.
//! design: driver.drift

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::findings::Finding;

pub const FILE: &str = "specc-drift.json";

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    accepted: BTreeSet<Finding>,
}

/// The baseline file exists and cannot be read or parsed.
#[derive(Debug)]
pub struct BadBaseline {
    pub path: PathBuf,
    pub why: String,
}

impl Baseline {
    /// The baseline at `path`; none yet is an empty one.
    pub fn load(path: &Path) -> Result<Baseline, BadBaseline> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Baseline::default()),
            Err(e) => {
                return Err(BadBaseline {
                    path: path.to_owned(),
                    why: e.to_string(),
                });
            }
        };
        serde_json::from_slice(&bytes).map_err(|e| BadBaseline {
            path: path.to_owned(),
            why: e.to_string(),
        })
    }

    pub fn accepts(&self, f: &Finding) -> bool {
        self.accepted.iter().any(|a| same(a, f))
    }

    /// Accepts the findings `ids` name (a requirement or decision id, or a path; all when
    /// empty), and forgets entries that match no finding any more. Returns how many it
    /// accepted now.
    pub fn accept(&mut self, findings: &[Finding], ids: &[String]) -> usize {
        let named =
            |f: &Finding| ids.is_empty() || ids.iter().any(|i| *i == f.subject || *i == f.path);
        self.accepted
            .retain(|a| findings.iter().any(|f| same(a, f)));
        let mut n = 0;
        for f in findings.iter().filter(|f| named(f)) {
            if !self.accepts(f) {
                n += 1;
            }
            self.accepted.insert(f.clone());
        }
        n
    }

    pub fn save(&self, dir: &Path, path: &Path) -> std::io::Result<()> {
        let mut text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        text.push('\n');
        crate::atomic::write(dir, path, text.as_bytes())
    }
}

/// The same drift: subject, kind, path and the file's content (lines move; details are words).
fn same(a: &Finding, f: &Finding) -> bool {
    a.subject == f.subject && a.kind == f.kind && a.path == f.path && a.content == f.content
}
