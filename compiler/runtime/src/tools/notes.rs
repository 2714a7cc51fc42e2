//! `note` (the field guide, owned by the agents; its one rule is the line budget) and
//! `flag_big_file` (the megafile guard).
//! design: runtime.field-guide

use serde::Deserialize;

use super::outcome::{Control, ToolOutcome};
use super::toolbox::Toolbox;

/// The field guide, relative to the repository.
const GUIDE: &str = specc_plan::field_guide::PATH;

#[derive(Deserialize)]
pub(super) struct Note {
    text: String,
    #[serde(default)]
    section: Option<String>,
}

/// Adds `- text` at the end of the guide's `## section` (default `Notes`), which is made at
/// the end of the guide if missing. Notes of different sections land on different lines,
/// so two agents' notes merge.
pub(super) fn note(t: &Toolbox, a: Note) -> ToolOutcome {
    let text = a.text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return ToolOutcome::error("the note is empty");
    }
    let section = a
        .section
        .as_deref()
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .map(|s| s.trim_start_matches('#').trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "Notes".to_owned());
    // The guide is written like any file: never through a link, never a special file.
    let path = match t.writable_file(GUIDE) {
        Ok((_, p)) => p,
        Err(e) => return e,
    };
    let old = std::fs::read_to_string(&path).unwrap_or_default();
    let updated = insert_note(&old, &section, &text);
    let lines = updated.lines().count();
    if lines > t.guide_lines {
        return ToolOutcome::error(format!(
            "the field guide would have {lines} lines, over its budget of {}: condense it \
             (rewrite {GUIDE} shorter with `write`), then add the note",
            t.guide_lines
        ));
    }
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&path, updated));
    match written {
        Ok(()) => ToolOutcome::ok(format!("noted under `## {section}` in {GUIDE}")),
        Err(e) => ToolOutcome::error(format!("{GUIDE}: {e}")),
    }
}

/// `guide` with `- note` as the last item of `## section`.
pub(crate) fn insert_note(guide: &str, section: &str, note: &str) -> String {
    let mut lines: Vec<String> = guide.lines().map(str::to_owned).collect();
    let heading = format!("## {section}");
    let at = match lines.iter().position(|l| l.trim() == heading) {
        Some(h) => {
            // The section ends at the next heading of its level or above (its `###`
            // subsections belong to it); the note goes after its last non-blank line.
            let end = lines[h + 1..]
                .iter()
                .position(|l| l.starts_with("# ") || l.starts_with("## "))
                .map_or(lines.len(), |i| h + 1 + i);
            let mut at = end;
            while at > h + 1 && lines[at - 1].trim().is_empty() {
                at -= 1;
            }
            at
        }
        None => {
            if lines.last().is_some_and(|l| !l.trim().is_empty()) {
                lines.push(String::new());
            }
            lines.push(heading);
            lines.len()
        }
    };
    lines.insert(at, format!("- {note}"));
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

#[derive(Deserialize)]
pub(super) struct Flag {
    path: String,
    #[serde(default)]
    reason: String,
}

pub(super) fn flag(t: &Toolbox, a: Flag) -> ToolOutcome {
    let (rel, path) = match t.readable_file(&a.path) {
        Ok(p) => p,
        Err(e) => return e,
    };
    if !path.is_file() {
        return ToolOutcome::error(format!("`{rel}` is not a file of the checkout"));
    }
    let why = a.reason.trim();
    ToolOutcome {
        text: format!(
            "flagged {rel}{}: commits that grow it are refused until a split lands; keep your change to it small",
            if why.is_empty() {
                String::new()
            } else {
                format!(" ({why})")
            }
        ),
        failed: false,
        control: Control::Continue,
        flagged: Some(rel),
    }
}

#[cfg(test)]
mod tests {
    use super::insert_note;

    #[test]
    fn notes_go_to_the_end_of_their_section() {
        let g = "# Guide\n\n## Build\n- a\n\n## Testing\n- b\n";
        assert_eq!(
            insert_note(g, "Build", "c"),
            "# Guide\n\n## Build\n- a\n- c\n\n## Testing\n- b\n"
        );
        assert_eq!(
            insert_note(g, "Testing", "d"),
            "# Guide\n\n## Build\n- a\n\n## Testing\n- b\n- d\n"
        );
        assert_eq!(
            insert_note(g, "Style", "e"),
            "# Guide\n\n## Build\n- a\n\n## Testing\n- b\n\n## Style\n- e\n"
        );
        assert_eq!(insert_note("", "Notes", "x"), "## Notes\n- x\n");
    }
}
