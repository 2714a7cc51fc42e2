//! `specc check` on a generated tree of 10,000 source files (eight languages, ~100 lines
//! each, references in 10 % of them) and 300 decisions, against `grep -rn 'design:'` over the
//! same tree.
//!
//! Run: `cargo bench -p specc-tests --bench check` (add `-- --files N` for another size). It
//! prints (a) the cold full check against grep (and ripgrep, if installed) — the bar
//! (issue 3) is at most 2× — and (b) the incremental re-check after one edit, for three kinds
//! of edit (a source without references, a source with references, a decision's text) — at
//! most 20 ms and at least 50× faster than the cold check for the worst of the three. Each figure is the median of several runs; the file system
//! cache is warm for both sides (grep runs first, once, untimed).
//!
//! The cold check runs in-process through the same `CheckSession` the CLI uses (walk, read,
//! parse, check, report); only process start-up and printing are left out.

// The binary's allocator, so the benchmark measures what users run.
// design: driver.allocator
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use specc::check::{CheckOptions, CheckSession};
use specc::db::Database;
use specc_tests::{CheckTree, generate_check_tree};

const RUNS: usize = 7;

fn main() {
    let mut shape = CheckTree::ISSUE_3;
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--files")
        && let Some(n) = args.get(i + 1).and_then(|n| n.parse().ok())
    {
        shape.files = n;
    }
    if args.iter().any(|a| a == "--list") {
        // `cargo bench -- --list` asks for benchmark names; this binary is one benchmark.
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let paths = generate_check_tree(root, shape).expect("generate the tree");
    say(format!(
        "tree: {} source files, {} decisions, references in 1 file in {}",
        paths.len(),
        shape.decisions,
        shape.reference_every
    ));

    grep(root); // warm the cache
    let grep_time = median((0..RUNS).map(|_| timed(|| grep(root))).collect());
    let mut cold_times = Vec::new();
    let mut open_times = Vec::new();
    for _ in 0..RUNS {
        let (t, (session, opened)) = timed_with(|| {
            let (opened, mut session) = timed_with(|| open(root));
            let report = session.check();
            assert!(report.diagnostics.is_empty(), "the generated tree is clean");
            assert_eq!(report.sources, paths.len());
            (session, opened)
        });
        cold_times.push(t);
        open_times.push(opened);
        drop(session);
    }
    let cold = median(cold_times);
    let opened = median(open_times);

    // Incremental: one session, then edit one file at a time and re-check, for three kinds
    // of edit: a source without references (most files), a source that holds references
    // (it is parsed again), and a decision's text in design-docs/ (every reference to it is
    // checked again).
    let mut session = open(root);
    session.check();
    let edits = if std::env::var_os("SPECC_BENCH_EDITS").is_some() {
        2000
    } else {
        RUNS * 3
    };
    let holds = |rel: &String| {
        std::fs::read_to_string(root.join(rel)).is_ok_and(|t| t.contains("design: area"))
    };
    let (with_refs, without): (Vec<&String>, Vec<&String>) = paths.iter().partition(|p| holds(p));
    let docs: Vec<String> = std::fs::read_dir(root.join("design-docs"))
        .expect("design-docs")
        .filter_map(Result::ok)
        .map(|e| format!("design-docs/{}", e.file_name().to_string_lossy()))
        .collect();
    let plain = time_edits(&mut session, root, &without, edits, Edit::Append);
    let referencing = time_edits(&mut session, root, &with_refs, edits, Edit::Append);
    let docs: Vec<&String> = docs.iter().collect();
    let decision = time_edits(&mut session, root, &docs, edits, Edit::Decision);

    let rg_time = rg(root).map(|()| {
        median(
            (0..RUNS)
                .map(|_| {
                    timed(|| {
                        let _ = rg(root);
                    })
                })
                .collect(),
        )
    });
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    say(format!(
        "grep -rn 'design:'        {:8.1} ms",
        ms(grep_time)
    ));
    match rg_time {
        Some(t) => say(format!("rg -n 'design:'           {:8.1} ms", ms(t))),
        None => say("rg -n 'design:'           (ripgrep is not installed)".to_owned()),
    }
    say(format!("specc check, cold         {:8.1} ms", ms(cold)));
    say(format!("  of which walk and read  {:8.1} ms", ms(opened)));
    say(format!("one edit, no references   {:8.2} ms", ms(plain)));
    say(format!(
        "one edit, with references {:8.2} ms",
        ms(referencing)
    ));
    say(format!("one decision's text       {:8.2} ms", ms(decision)));
    say(format!(
        "(a) cold / grep = {:.2}x{}   (bar: <= 2x)",
        cold.as_secs_f64() / grep_time.as_secs_f64(),
        rg_time.map_or(String::new(), |t| format!(
            ", cold / rg = {:.2}x",
            cold.as_secs_f64() / t.as_secs_f64()
        ))
    ));
    let worst = plain.max(referencing).max(decision);
    say(format!(
        "(b) incremental, worst of the three = {:.2} ms, cold / worst = {:.0}x   (bar: <= 20 ms and >= 50x)",
        ms(worst),
        cold.as_secs_f64() / worst.as_secs_f64()
    ));
}

/// What one timed edit does.
#[derive(Clone, Copy)]
enum Edit {
    /// Appends a comment line to a source.
    Append,
    /// Rewrites the first `Decision:` text of a design document.
    Decision,
}

/// The median time to re-check after one edit of one of `files` (cycled), `n` times.
fn time_edits(
    session: &mut CheckSession,
    root: &Path,
    files: &[&String],
    n: usize,
    edit: Edit,
) -> Duration {
    assert!(!files.is_empty(), "files to edit");
    let mut times = Vec::with_capacity(n);
    for k in 0..n {
        let rel = files[(k * 7919) % files.len()];
        let path = root.join(rel);
        let mut text = std::fs::read_to_string(&path).expect("read");
        match edit {
            Edit::Append => text.push_str(if rel.ends_with(".py") || rel.ends_with(".sh") {
                "# an edit\n"
            } else {
                "// an edit\n"
            }),
            Edit::Decision => {
                text = text.replacen("with option", &format!("with option (revision {k})"), 1);
            }
        }
        std::fs::write(&path, text).expect("write");
        let t = timed(|| {
            let (tu, changes) = timed_with(|| session.update(std::slice::from_ref(&path)));
            assert_eq!(changes.edited.len(), 1);
            let (tc, report) = timed_with(|| session.check());
            assert!(
                report.diagnostics.is_empty(),
                "{:?}",
                report.diagnostics.first()
            );
            if std::env::var_os("SPECC_BENCH_DETAIL").is_some() {
                say(format!("  update {tu:?} check {tc:?}"));
            }
        });
        times.push(t);
    }
    median(times)
}

/// `rg -n 'design:'` over the tree, if ripgrep is installed.
fn rg(root: &Path) -> Option<()> {
    let status = Command::new("rg")
        .args(["-n", "design:"])
        .arg(root)
        .stdout(Stdio::null())
        .status()
        .ok()?;
    assert!(status.success(), "rg finds the references");
    Some(())
}

fn open(root: &Path) -> CheckSession {
    CheckSession::open(Database::default(), root, None, CheckOptions::default()).expect("open")
}

fn grep(root: &Path) {
    let status = Command::new("grep")
        .args(["-rn", "design:"])
        .arg(root)
        .stdout(Stdio::null())
        .status()
        .expect("grep runs");
    assert!(status.success(), "grep finds the references");
}

fn timed(f: impl FnOnce()) -> Duration {
    timed_with(f).0
}

fn timed_with<T>(f: impl FnOnce() -> T) -> (Duration, T) {
    let start = Instant::now();
    let value = f();
    (start.elapsed(), value)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[allow(clippy::print_stdout)]
fn say(line: String) {
    println!("{line}");
}
