//! `specc trace`'s requirement index on the check benchmark's tree (10,000 files of ~100
//! lines, references in 10 % of them) with a spec of 150 requirements that those files name
//! (`req: R-n`): cold (walk, read, parse, index) and incremental after one edit, for three
//! kinds of edit — a source without references, a source that references requirements (a
//! new `req:` line), and the spec (a requirement's text). The bar (issue 29): at most 20 ms
//! for a one-file edit. Each figure is the median of several runs.
//!
//! Run: `cargo bench -p specc-tests --bench trace`.

// The binary's allocator, so the benchmark measures what users run.
// design: driver.allocator
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::Path;
use std::time::{Duration, Instant};

use specc::check::{CheckOptions, CheckSession};
use specc::db::Database;
use specc_tests::{CheckTree, generate_check_tree};

const COLD_RUNS: usize = 5;
const EDITS: usize = 40;

#[allow(clippy::print_stdout)]
fn say(line: String) {
    println!("{line}");
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let paths = generate_check_tree(root, CheckTree::TRACE).expect("generate");
    let spec = root.join("spec.md");
    let open = || {
        CheckSession::open(
            Database::default(),
            root,
            Some(&spec),
            CheckOptions::default(),
        )
        .expect("session")
    };
    let cold = median(
        (0..COLD_RUNS)
            .map(|_| {
                let t = Instant::now();
                let mut s = open();
                let n = s.requirement_sites().len();
                assert!(n > 50, "{n} requirements referenced");
                t.elapsed()
            })
            .collect(),
    );
    let mut session = open();
    let _ = session.requirement_sites();
    let referencing: Vec<&String> = paths
        .iter()
        .filter(|p| std::fs::read_to_string(root.join(p)).is_ok_and(|t| t.contains("req: R-")))
        .collect();
    let plain: Vec<&String> = paths
        .iter()
        .filter(|p| {
            std::fs::read_to_string(root.join(p))
                .is_ok_and(|t| !t.contains("req:") && !t.contains("design:"))
        })
        .collect();
    let edit_plain = time(&mut session, root, &plain, |rel, text, _| {
        text.push_str(comment(rel, "an edit"));
    });
    let edit_refs = time(&mut session, root, &referencing, |rel, text, k| {
        text.push_str(&format!(
            "{} req: R-{}\n",
            comment(rel, "").trim_end(),
            k % 150 + 1
        ));
    });
    let spec_rel = "spec.md".to_owned();
    let edit_spec = time(&mut session, root, &[&spec_rel], |_, text, k| {
        *text = text
            .lines()
            .map(|l| {
                if l.starts_with("- [R-7] ") {
                    format!("- [R-7] The system MUST keep invariant 7 (revision {k}).\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
    });
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    say(format!(
        "tree: {} files, {} referencing requirements; spec: 150 requirements",
        paths.len(),
        referencing.len()
    ));
    say(format!(
        "specc trace index, cold          {:8.1} ms",
        ms(cold)
    ));
    say(format!(
        "one edit, no references          {:8.2} ms",
        ms(edit_plain)
    ));
    say(format!(
        "one edit, a new req: reference   {:8.2} ms",
        ms(edit_refs)
    ));
    say(format!(
        "one edit of the spec             {:8.2} ms",
        ms(edit_spec)
    ));
    let worst = edit_plain.max(edit_refs).max(edit_spec);
    say(format!(
        "incremental, worst of the three = {:.2} ms, cold / worst = {:.0}x   (bar: <= 20 ms)",
        ms(worst),
        cold.as_secs_f64() / worst.as_secs_f64()
    ));
}

/// A comment line in the file's language.
fn comment(rel: &str, text: &str) -> &'static str {
    let hash = rel.ends_with(".py") || rel.ends_with(".sh");
    match (hash, text.is_empty()) {
        (true, false) => "# an edit\n",
        (false, false) => "// an edit\n",
        (true, true) => "#\n",
        (false, true) => "//\n",
    }
}

/// The median time to update the session and index the tree again after one edit of one
/// of `files` (cycled), `EDITS` times.
fn time(
    session: &mut CheckSession,
    root: &Path,
    files: &[&String],
    edit: impl Fn(&str, &mut String, usize),
) -> Duration {
    assert!(!files.is_empty(), "files to edit");
    let mut times = Vec::with_capacity(EDITS);
    for k in 0..EDITS {
        let rel = files[(k * 7919) % files.len()];
        let path = root.join(rel);
        let mut text = std::fs::read_to_string(&path).expect("read");
        edit(rel, &mut text, k);
        std::fs::write(&path, text).expect("write");
        let t = Instant::now();
        let changes = session.update(std::slice::from_ref(&path));
        assert_eq!(changes.edited.len(), 1, "{rel}");
        let _ = session.requirement_sites();
        times.push(t.elapsed());
    }
    median(times)
}
