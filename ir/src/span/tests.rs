use super::*;

#[test]
fn line_col_counts_from_one_and_in_chars() {
    let text = "ab\nçd\n\nx";
    let idx = LineIndex::new(text);
    assert_eq!(idx.line_col(text, 0), LineCol { line: 1, col: 1 });
    assert_eq!(idx.line_col(text, 2), LineCol { line: 1, col: 3 });
    assert_eq!(idx.line_col(text, 3), LineCol { line: 2, col: 1 });
    // 'ç' is two bytes: the 'd' after it is column 2.
    assert_eq!(idx.line_col(text, 5), LineCol { line: 2, col: 2 });
    assert_eq!(idx.line_col(text, 7), LineCol { line: 3, col: 1 });
    assert_eq!(idx.line_col(text, 8), LineCol { line: 4, col: 1 });
}

#[test]
fn line_col_clamps_out_of_range_and_mid_char_offsets() {
    let text = "é";
    let idx = LineIndex::new(text);
    assert_eq!(idx.line_col(text, 1), LineCol { line: 1, col: 1 });
    assert_eq!(idx.line_col(text, 99), LineCol { line: 1, col: 2 });
}

#[test]
fn span_new_never_inverts() {
    let (start, end) = (5, 3);
    let s = Span::new(FileId(0), start..end);
    assert_eq!((s.start, s.end), (5, 5));
    assert!(s.is_empty());
}
