//! Three-way text merge by lines: both sides' edits against the base are applied when their
//! hunks do not touch; hunks that overlap or touch are a conflict (as in `git merge`).
//! design: vcs.protocol

use similar::{Algorithm, DiffOp, capture_diff_slices};

/// One side's edit: base lines `start..end` become `lines`.
#[derive(Debug)]
struct Hunk<'a> {
    start: usize,
    end: usize,
    lines: &'a [&'a str],
}

fn hunks<'a>(base: &[&str], side: &'a [&'a str]) -> Vec<Hunk<'a>> {
    capture_diff_slices(Algorithm::Myers, base, side)
        .into_iter()
        .filter_map(|op| match op {
            DiffOp::Equal { .. } => None,
            DiffOp::Delete {
                old_index,
                old_len,
                new_index,
            } => Some(Hunk {
                start: old_index,
                end: old_index + old_len,
                lines: &side[new_index..new_index],
            }),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => Some(Hunk {
                start: old_index,
                end: old_index,
                lines: &side[new_index..new_index + new_len],
            }),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => Some(Hunk {
                start: old_index,
                end: old_index + old_len,
                lines: &side[new_index..new_index + new_len],
            }),
        })
        .collect()
}

/// The merge of `ours` and `theirs`, both edits of `base`, or `None` on a conflict.
pub fn merge3(base: &str, ours: &str, theirs: &str) -> Option<String> {
    if ours == theirs {
        return Some(ours.to_owned());
    }
    let b: Vec<&str> = base.split_inclusive('\n').collect();
    let o: Vec<&str> = ours.split_inclusive('\n').collect();
    let t: Vec<&str> = theirs.split_inclusive('\n').collect();
    let mut edits: Vec<Hunk<'_>> = Vec::new();
    let ho = hunks(&b, &o);
    let ht = hunks(&b, &t);
    let (mut i, mut j) = (0, 0);
    while i < ho.len() || j < ht.len() {
        match (ho.get(i), ht.get(j)) {
            (Some(x), Some(y)) if x.start <= y.end && y.start <= x.end => {
                // Touching or overlapping: the same edit on both sides is fine.
                if x.start == y.start && x.end == y.end && x.lines == y.lines {
                    edits.push(Hunk {
                        start: x.start,
                        end: x.end,
                        lines: x.lines,
                    });
                    i += 1;
                    j += 1;
                } else {
                    return None;
                }
            }
            (Some(x), Some(y)) if x.start < y.start => {
                edits.push(Hunk {
                    start: x.start,
                    end: x.end,
                    lines: x.lines,
                });
                i += 1;
                let _ = y;
            }
            (Some(_), Some(y)) => {
                edits.push(Hunk {
                    start: y.start,
                    end: y.end,
                    lines: y.lines,
                });
                j += 1;
            }
            (Some(x), None) => {
                edits.push(Hunk {
                    start: x.start,
                    end: x.end,
                    lines: x.lines,
                });
                i += 1;
            }
            (None, Some(y)) => {
                edits.push(Hunk {
                    start: y.start,
                    end: y.end,
                    lines: y.lines,
                });
                j += 1;
            }
            (None, None) => break,
        }
    }
    let mut out = String::with_capacity(base.len().max(ours.len()).max(theirs.len()));
    let mut at = 0;
    for h in edits {
        for line in &b[at..h.start] {
            out.push_str(line);
        }
        for line in h.lines {
            out.push_str(line);
        }
        at = h.end;
    }
    for line in &b[at..] {
        out.push_str(line);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::merge3;

    #[test]
    fn edits_apart_merge_and_edits_together_conflict() {
        let base = "a\nb\nc\nd\ne\n";
        assert_eq!(
            merge3(base, "A\nb\nc\nd\ne\n", "a\nb\nc\nd\nE\n").as_deref(),
            Some("A\nb\nc\nd\nE\n")
        );
        assert_eq!(
            merge3(base, "a\nB\nc\nd\ne\n", "a\nX\nc\nd\ne\n"),
            None,
            "same line"
        );
        assert_eq!(
            merge3(base, "a\nB\nc\nd\ne\n", "a\nb\nC\nd\ne\n"),
            None,
            "touching lines"
        );
        assert_eq!(
            merge3(base, "a\nB\nc\nd\ne\n", "a\nB\nc\nd\ne\n").as_deref(),
            Some("a\nB\nc\nd\ne\n")
        );
        assert_eq!(
            merge3(base, "x\na\nb\nc\nd\ne\n", "a\nb\nc\nd\ne\ny\n").as_deref(),
            Some("x\na\nb\nc\nd\ne\ny\n")
        );
    }
}
