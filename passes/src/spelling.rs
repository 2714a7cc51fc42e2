//! The nearest of a set of names to a misspelt one, for "did you mean" hints.

/// The candidate closest to `id` in edit distance, if it is within a third of `id`'s length
/// (at least 1); ties go to the smallest name.
pub(crate) fn closest<'a>(id: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (id.chars().count() / 3).max(1);
    candidates
        .map(|c| (edit_distance(id, c), c))
        .filter(|&(dist, _)| dist <= limit)
        .min()
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
