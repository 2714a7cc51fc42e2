//! The field guide: `field-guide/index.md` in the target repository, the agents' shared
//! notes, given to every planner (and later every worker) under a line budget.
//! design: runtime.field-guide

use std::path::Path;

use specc_ir::{Diagnostic, codes};

/// Where the guide lives, relative to the target repository.
pub const PATH: &str = "field-guide/index.md";

/// The guide's text as agents get it, and a warning when it could not be given in full.
#[derive(Debug, Default)]
pub struct FieldGuide {
    pub text: String,
    pub warning: Option<Diagnostic>,
}

/// Reads the guide of the repository at `repo`, keeping at most `budget` lines. A missing
/// guide is empty; an unreadable one is empty with a warning.
pub fn load(repo: &Path, budget: usize) -> FieldGuide {
    let path = repo.join(PATH);
    match std::fs::read(&path) {
        Ok(b) => from_bytes(&path, b, budget),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => FieldGuide::default(),
        Err(e) => left_out(format!(
            "{} cannot be read ({e}); it is left out",
            path.display()
        )),
    }
}

/// The guide whose bytes are `bytes` (read from `path`, or from a commit), keeping at most
/// `budget` lines.
pub fn from_bytes(path: &Path, bytes: Vec<u8>, budget: usize) -> FieldGuide {
    let Ok(text) = String::from_utf8(bytes) else {
        return left_out(format!("{} is not UTF-8; it is left out", path.display()));
    };
    let lines = text.lines().count();
    if lines <= budget {
        return FieldGuide {
            text,
            warning: None,
        };
    }
    let text: String = text.lines().take(budget).flat_map(|l| [l, "\n"]).collect();
    FieldGuide {
        text,
        warning: Some(
            Diagnostic::new(
                codes::FIELD_GUIDE_TRIMMED,
                format!(
                    "{} has {lines} lines; planners get the first {budget}",
                    path.display()
                ),
            )
            .with_help("condense the guide under [limits] field_guide_lines (200 by default)"),
        ),
    }
}

fn left_out(message: String) -> FieldGuide {
    FieldGuide {
        text: String::new(),
        warning: Some(
            Diagnostic::new(codes::FIELD_GUIDE_TRIMMED, message)
                .with_help("make it a readable UTF-8 file, or remove it"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_short_long_and_binary_guides() {
        let dir = tempfile::tempdir().expect("dir");
        let g = load(dir.path(), 3);
        assert!(
            g.text.is_empty() && g.warning.is_none(),
            "no guide is no problem"
        );
        std::fs::create_dir_all(dir.path().join("field-guide")).expect("mkdir");
        let file = dir.path().join(PATH);
        std::fs::write(&file, "a\nb\n").expect("write");
        let g = load(dir.path(), 3);
        assert_eq!((g.text.as_str(), g.warning.is_none()), ("a\nb\n", true));
        std::fs::write(&file, "a\nb\nc\nd\ne\n").expect("write");
        let g = load(dir.path(), 3);
        assert_eq!(g.text, "a\nb\nc\n");
        assert_eq!(load(dir.path(), 0).text, "", "a budget of 0 gives no guide");
        let w = g.warning.expect("trimmed");
        assert_eq!(w.code, "W0311");
        assert!(w.message.contains("5 lines"), "{}", w.message);
        std::fs::write(&file, [0xff, 0xfe, 0x00]).expect("write");
        let g = load(dir.path(), 3);
        assert!(g.text.is_empty());
        assert!(g.warning.is_some_and(|w| w.message.contains("not UTF-8")));
    }
}
