//! specc's own design-docs/ are in the format it reads: every decision parses, none
//! conflicts, and every `design: <id>` in the code names one of them.

use specc_ir::FileId;
use specc_passes::design_docs::{check_decision_set, parse_design_doc};
use specc_passes::references::{in_line_comments, line_comment_markers};

use crate::support::root;

#[test]
fn own_design_docs_parse_cleanly_and_every_reference_resolves() {
    let dir = root().join("design-docs");
    let mut decisions = Vec::new();
    for (i, entry) in std::fs::read_dir(&dir).expect("design-docs/").enumerate() {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("md") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable");
        let (found, diagnostics) = parse_design_doc(FileId(i as u32), &text);
        assert!(
            diagnostics.is_empty(),
            "{}: {diagnostics:#?}",
            path.display()
        );
        decisions.extend(found);
    }
    assert!(check_decision_set(&decisions).is_empty());
    assert!(decisions.len() >= 20, "{} decisions", decisions.len());

    let mut referenced = Vec::new();
    let mut stack = vec![root()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable dir") {
            let path = entry.expect("entry").path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if path.is_dir() && !matches!(name, "target" | ".git" | "fixtures") {
                stack.push(path);
            } else if name.ends_with(".rs") {
                let text = std::fs::read_to_string(&path).expect("readable");
                let markers = line_comment_markers("rs").expect("Rust has line comments");
                for r in in_line_comments(FileId(0), &text, markers) {
                    referenced.push((path.display().to_string(), r.id));
                }
            }
        }
    }
    assert!(referenced.len() >= 15, "{referenced:?}");
    for (file, id) in &referenced {
        assert!(
            decisions.iter().any(|d| &d.id == id),
            "{file}: `design: {id}` names no decision"
        );
    }
}
