use specc_ir::FileId;

use super::{in_line_comments, line_comment_markers};

/// `id[@pin] "spanned text"` per reference.
fn refs(text: &str, ext: &str) -> Vec<String> {
    let markers = line_comment_markers(ext).expect("known extension");
    in_line_comments(FileId(0), text, markers)
        .into_iter()
        .map(|r| {
            let pin = r.pin.map(|p| format!("@{p}")).unwrap_or_default();
            format!("{}{pin} {:?}", r.id, &text[r.span.range()])
        })
        .collect()
}

#[test]
fn comments_count_and_strings_never_do() {
    let rust = "let s = \"design: not.this\"; // design: storage.page-size@0a1b2c3d\nlet t = '\"'; // see design: net.framing.\nfn f<'a>(x: &'a str) {} // design: x-y_z\n/// design: docs.too\nlet u = \"// design: nor.this\";\n";
    assert_eq!(
        refs(rust, "rs"),
        [
            "storage.page-size@0a1b2c3d \"design: storage.page-size@0a1b2c3d\"",
            "net.framing \"design: net.framing\"",
            "x-y_z \"design: x-y_z\"",
            "docs.too \"design: docs.too\"",
        ]
    );
    let python = "x = 'design: no'  # design: yes\ns = \"# design: no\"\n# mydesign: no, design: also.yes@ABCDEF12\n";
    assert_eq!(
        refs(python, "py"),
        [
            "yes \"design: yes\"",
            "also.yes@abcdef12 \"design: also.yes@ABCDEF12\""
        ]
    );
}

#[test]
fn malformed_pins_are_not_pins() {
    let text = "// design: a@123\n// design: b@0123456789\n// design: c@\n// design:\n";
    assert_eq!(
        refs(text, "c"),
        ["a \"design: a\"", "b \"design: b\"", "c \"design: c\""]
    );
}

#[test]
fn unknown_extensions_are_not_searched() {
    assert!(line_comment_markers("png").is_none());
    assert!(line_comment_markers("md").is_none());
}
