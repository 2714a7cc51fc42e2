//! The rules the repository holds itself to, checked on its own sources: no Rust source file
//! over 600 lines, and no ignored test (a fixture generator is a documented script).

use std::path::{Path, PathBuf};

use crate::support::root;

/// Every `.rs` file of the repository's own code (not `target/`, not what examples build).
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" || name == "out" {
            continue;
        }
        if path.is_dir() {
            sources(&path, out);
        } else if name.ends_with(".rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_source_file_is_over_600_lines_and_no_test_is_ignored() {
    let mut files = Vec::new();
    for dir in ["ir", "passes", "compiler", "tests", "examples"] {
        sources(&root().join(dir), &mut files);
    }
    assert!(files.len() > 100, "found the sources: {}", files.len());
    // Spelt in pieces, so that this file does not find itself.
    let ignore = ["#[", "ignore"].concat();
    let cfg_attr = ["cfg_", "attr("].concat();
    let mut over = Vec::new();
    let mut ignored = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        if text.lines().count() > 600 {
            over.push(format!("{} ({} lines)", f.display(), text.lines().count()));
        }
        let cfg_ignore = text
            .lines()
            .any(|l| l.contains(&cfg_attr) && l.contains("ignore"));
        if text.contains(&ignore) || cfg_ignore {
            ignored.push(f.display().to_string());
        }
    }
    assert!(over.is_empty(), "split these by responsibility: {over:?}");
    assert!(ignored.is_empty(), "ignored tests: {ignored:?}");
}

/// Fakes stay out of the production graph: no crate turns on a `testing` feature outside
/// its dev-dependencies (in `[dependencies]`, a `[dependencies.NAME]` table, a target's
/// dependencies, `[workspace.dependencies]` or a feature list), so `cargo build --workspace`
/// compiles no fake into `specc`.
#[test]
fn no_crate_depends_on_a_testing_feature_outside_its_dev_dependencies() {
    let root = crate::support::root();
    let mut manifests = vec![
        root.join("Cargo.toml"),
        root.join("tests/Cargo.toml"),
        root.join("tests/support/Cargo.toml"),
    ];
    for dir in ["ir", "passes"] {
        manifests.push(root.join(dir).join("Cargo.toml"));
    }
    for e in std::fs::read_dir(root.join("compiler"))
        .expect("compiler/")
        .flatten()
    {
        manifests.push(e.path().join("Cargo.toml"));
    }
    let mut offenders = Vec::new();
    for m in manifests.iter().filter(|m| m.is_file()) {
        let text = std::fs::read_to_string(m).expect("manifest");
        offenders.extend(
            testing_outside_dev(&text)
                .into_iter()
                .map(|l| format!("{}: {l}", m.display())),
        );
    }
    assert!(offenders.is_empty(), "{offenders:#?}");
}

/// The lines of a manifest that turn on a `testing` feature outside dev-dependencies.
fn testing_outside_dev(text: &str) -> Vec<String> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            section = t.to_owned();
            continue;
        }
        let dev = section.contains("dev-dependencies");
        let deps = section.contains("dependencies");
        let features = section == "[features]";
        // A feature list turns it on in its value; `testing = []` only declares it.
        let value = t.split_once('=').map_or(t, |(_, v)| v);
        let on = if features {
            value.contains("testing")
        } else {
            t.contains("testing")
        };
        if !dev && (deps || features) && on {
            out.push(format!("{section} {t}"));
        }
    }
    out
}

/// The manifest scan finds the feature in every place that would put it in a normal build.
#[test]
fn the_testing_feature_scan_sees_every_form() {
    for manifest in [
        "[dependencies]\nspecc-llm = { workspace = true, features = [\"testing\"] }\n",
        "[dependencies.specc-llm]\nworkspace = true\nfeatures = [\"testing\"]\n",
        "[workspace.dependencies]\nspecc-llm = { path = \"x\", features = [\"testing\"] }\n",
        "[target.'cfg(unix)'.dependencies]\nspecc-llm = { features = [\"testing\"] }\n",
        "[features]\ndefault = [\"specc-llm/testing\"]\n",
    ] {
        assert_eq!(testing_outside_dev(manifest).len(), 1, "{manifest}");
    }
    assert!(testing_outside_dev("[features]\ntesting = []\n").is_empty());
    let dev = "[dev-dependencies]\nspecc-llm = { workspace = true, features = [\"testing\"] }\n[dev-dependencies.x]\nfeatures = [\"testing\"]\n";
    assert!(testing_outside_dev(dev).is_empty());
}
