//! Helpers shared by the passes' unit tests.

use specc_ir::Diagnostic;

/// One line per diagnostic: its code, its message and the text its primary label covers.
pub(crate) fn push_diagnostics(out: &mut String, text: &str, diagnostics: &[Diagnostic]) {
    for d in diagnostics {
        let at = d
            .primary
            .as_ref()
            .map(|l| &text[l.span.range()])
            .unwrap_or("");
        out.push_str(&format!("{} {} at {at:?}\n", d.code, d.message));
    }
}

/// Compares an outline with the expected one, ignoring surrounding white space.
#[track_caller]
pub(crate) fn assert_outline(got: &str, expect: &str) {
    assert_eq!(got.trim(), expect.trim(), "\n--- got ---\n{got}");
}
