//! Helpers: run specc in-process, find fixtures.

pub(crate) use specc_tests::root;

/// A project in a temporary directory: its `spec.md` and `specc.toml`.
pub(crate) fn project_with(spec: &str, toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("spec.md"), spec).expect("spec");
    std::fs::write(dir.path().join("specc.toml"), toml).expect("toml");
    dir
}

pub(crate) struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `specc ARGS` in-process with plain, fixed-width output. Absolute paths under the
/// workspace root are printed relative to it, so snapshots do not depend on the checkout.
pub(crate) fn specc(args: &[&str]) -> Output {
    let env = specc::Env::plain();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let argv = std::iter::once("specc").chain(args.iter().copied());
    let code = specc::run(argv, &env, &mut out, &mut err);
    let prefix = format!("{}/", root().display());
    let clean = |b: Vec<u8>| String::from_utf8_lossy(&b).replace(&prefix, "");
    Output {
        code,
        stdout: clean(out),
        stderr: clean(err),
    }
}

pub(crate) fn fixture(rel: &str) -> String {
    root().join("fixtures").join(rel).display().to_string()
}

/// The JSON diagnostics of a `--message-format json` run: the lines of its stdout that are
/// objects with a `code` and a `severity` (the summary and other output are left out).
pub(crate) fn json_diagnostics(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v.get("code").is_some() && v.get("severity").is_some())
        .collect()
}

/// Copies the directory `from` into `to`, recursively.
pub(crate) fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("dir");
    for e in std::fs::read_dir(from).expect("read").flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            copy_dir(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
}

/// The example (`examples/textstats`: its spec, specc.toml, recording, hidden tests and
/// field guide, nothing built) copied into `dir/textstats`; returns the project.
pub(crate) fn example_copy(dir: &std::path::Path) -> std::path::PathBuf {
    let project = dir.join("textstats");
    let example = root().join("examples/textstats");
    std::fs::create_dir_all(&project).expect("project");
    for f in ["spec.md", "specc.toml", "recording.jsonl"] {
        std::fs::copy(example.join(f), project.join(f)).expect("copy");
    }
    for d in ["hidden", "field-guide"] {
        copy_dir(&example.join(d), &project.join(d));
    }
    project
}
