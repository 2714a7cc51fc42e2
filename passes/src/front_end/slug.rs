//! Heading text → id segment.

/// Lower-cases `title`, keeps letters and digits (any script), turns runs of spaces, `-`,
/// `_` and `.` into one `-`, and drops everything else. May return an empty string.
pub fn slugify(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    slugify_into(title, &mut out);
    out
}

/// [`slugify`], appending to `out`.
pub(super) fn slugify_into(title: &str, out: &mut String) {
    let start = out.len();
    let mut pending_dash = false;
    for c in title.chars() {
        if c.is_alphanumeric() {
            if pending_dash && out.len() > start {
                out.push('-');
            }
            pending_dash = false;
            if c.is_ascii() {
                out.push(c.to_ascii_lowercase());
            } else {
                out.extend(c.to_lowercase());
            }
        } else if c.is_whitespace() || matches!(c, '-' | '_' | '.') {
            pending_dash = true;
        }
    }
}

/// Whether an explicit `{#id}` is usable as a node id: non-empty, no white space, made of
/// letters, digits and `- _ . /`, with no empty `/` segment.
pub(super) fn is_valid_explicit_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        && id.split('/').all(|seg| !seg.is_empty())
}
