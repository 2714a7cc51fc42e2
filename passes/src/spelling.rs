//! Names a user may have misspelt, for "did you mean" hints: `closest` for ids a spec or a
//! design document names (Levenshtein distance: ids are numbered, and `R-12` for `R-21` is
//! a different requirement, not a typo), `nearest` for configuration's keys and tables (a
//! swap of neighbours is one edit: `depht` is `depth`), and a parser's "unknown field"
//! message with the hint added.
//! design: driver.config-check

/// The candidate closest to `id` in edit distance, if it is within a third of `id`'s length
/// (at least 1); ties go to the smallest name.
pub fn closest<'a>(id: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (id.chars().count() / 3).max(1);
    candidates
        .map(|c| (levenshtein(id, c), c))
        .filter(|&(dist, _)| dist <= limit)
        .min()
        .map(|(_, c)| c)
}

/// Edit distance over characters: insertions, deletions and substitutions.
fn levenshtein(a: &str, b: &str) -> usize {
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

/// A parser's message with a did-you-mean added where it names an unknown field or variant
/// and lists the expected ones (serde's "unknown field `x`, expected one of `a`, `b`").
pub fn did_you_mean(message: &str) -> String {
    let Some(rest) = message
        .find("unknown field `")
        .map(|i| &message[i + "unknown field `".len()..])
        .or_else(|| {
            message
                .find("unknown variant `")
                .map(|i| &message[i + "unknown variant `".len()..])
        })
    else {
        return message.to_owned();
    };
    let Some((given, after)) = rest.split_once('`') else {
        return message.to_owned();
    };
    let expected: Vec<&str> = after
        .lines()
        .next()
        .unwrap_or_default()
        .split('`')
        .skip(1)
        .step_by(2)
        .collect();
    match nearest(given, &expected) {
        Some(near) => format!("{}\ndid you mean `{near}`?", message.trim_end()),
        None => message.to_owned(),
    }
}

/// The candidate closest to `given` by edit distance, if it is close enough to be a typo:
/// at most a third of the longer name, and never more than three edits.
pub fn nearest<'a>(given: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (edit_distance(given, c), *c))
        .filter(|(d, c)| *d > 0 && *d <= 3 && *d * 3 <= given.len().max(c.len()))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

pub fn list(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("[{n}]"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Edit distance over characters, a swap of two neighbours counting as one edit (optimal
/// string alignment): `depht` is one edit from `depth`.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_messages_gain_a_did_you_mean() {
        let m = "unknown field `dollar`, expected `dollars`";
        assert_eq!(did_you_mean(m), format!("{m}\ndid you mean `dollars`?"));
        let m = "unknown field `depht`, expected one of `depth`, `width`, `steps`";
        assert!(did_you_mean(m).ends_with("did you mean `depth`?"));
        let m = "unknown field `zzzzzz`, expected one of `depth`, `width`";
        assert_eq!(did_you_mean(m), m, "nothing close: no guess");
        assert_eq!(did_you_mean("invalid type"), "invalid type");
    }

    #[test]
    fn ids_are_not_swapped_but_names_are() {
        // `R-12` is a requirement of its own, not a typo of `R-21`.
        assert_eq!(closest("R-12", ["R-21"].into_iter()), None);
        assert_eq!(closest("R-12", ["R-13"].into_iter()), Some("R-13"));
        assert_eq!(nearest("depht", &["depth", "width"]), Some("depth"));
    }

    #[test]
    fn distance() {
        assert_eq!(edit_distance("budjet", "budget"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("depht", "depth"), 1);
    }
}
