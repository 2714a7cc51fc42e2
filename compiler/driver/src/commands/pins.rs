//! `specc check` and `specc pin` for the runtime: what a deliberate break's revisits and the
//! `pin` tool run on a worker's checkout, in process.
//! design: runtime.deliberate-breaking

use std::path::Path;

use specc_ir::codes;
use specc_runtime::{PinError, Pins, StaleRef};

use crate::check::{CheckOptions, CheckSession};
use crate::db::Database;
use crate::source::Files;

pub(crate) struct DriverPins;

impl Pins for DriverPins {
    fn stale(&self, root: &Path) -> Vec<StaleRef> {
        let options = CheckOptions {
            unreferenced: false,
        };
        let Ok(mut session) = CheckSession::open(Database::default(), root, None, options) else {
            return Vec::new();
        };
        let report = session.check();
        let files = session.files();
        let prefix = format!("{}/", root.display().to_string().trim_end_matches('/'));
        report
            .diagnostics
            .iter()
            .filter(|d| d.code == codes::STALE_PIN || d.code == codes::SUPERSEDED_REFERENCE)
            .filter_map(|d| {
                let label = d.primary.as_ref()?;
                let shown = files.name(label.span.file);
                let path = shown.strip_prefix(&prefix).unwrap_or(shown).to_owned();
                let line = files.line_col(label.span.file, label.span.start).line as usize;
                let decision = d.message.split('`').nth(1)?.to_owned();
                Some(StaleRef {
                    path,
                    line,
                    decision,
                    message: d.message.clone(),
                })
            })
            .collect()
    }

    fn pin(&self, root: &Path, path: &str, line: usize) -> Result<String, PinError> {
        let mut files = Files::default();
        let mut out = Vec::new();
        let target = format!("{}:{line}", root.join(path).display());
        match super::pin::pin(&target, Some(root), &mut files, &mut out) {
            Ok(problems) if problems.is_empty() => {
                let said =
                    String::from_utf8_lossy(&out).replace(&format!("{}/", root.display()), "");
                Ok(said.trim().to_owned())
            }
            Ok(problems) => Err(PinError { problems }),
            Err(d) => Err(PinError { problems: vec![*d] }),
        }
    }
}
