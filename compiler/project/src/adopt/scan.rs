//! What `specc adopt` finds in a code base: its packages (by manifest: Cargo.toml with a
//! `[package]`, pyproject.toml or setup.py, package.json, go.mod; the whole directory when
//! there is none), each package's source files with their public surface (tree-sitter), its
//! test files, and the command that runs its tests. The walk honours `.gitignore`,
//! `.ignore` and `.speccignore` and skips hidden entries, as `specc check` does.
//! design: driver.adopt

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use specc_passes::references::Syntax;
use specc_passes::surface::{Item, public_items};

/// One package of the code base.
#[derive(Debug)]
pub struct Package {
    pub name: String,
    /// Relative to the adopted directory; empty for its root.
    pub dir: String,
    /// `Rust`, `Python`, `JavaScript`, `Go`, or the main language of a directory with no
    /// manifest.
    pub language: String,
    /// The manifest it was found by, relative to the adopted directory.
    pub manifest: Option<String>,
    pub description: Option<String>,
    pub modules: Vec<Module>,
    /// Test files, relative to the adopted directory.
    pub tests: Vec<String>,
    /// The command that runs its tests, from the adopted directory, if one was found.
    pub test_command: Option<String>,
}

/// A source file with public items.
#[derive(Debug)]
pub struct Module {
    /// Relative to the adopted directory.
    pub path: String,
    pub items: Vec<Item>,
}

/// Every file under `dir` the walk keeps, relative to it, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = ignore::WalkBuilder::new(dir)
        .require_git(false)
        .add_custom_ignore_filename(".speccignore")
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            let rel = e.path().strip_prefix(dir).ok()?.to_str()?.to_owned();
            Some(rel)
        })
        .collect();
    out.sort();
    out
}

/// The packages under `dir`.
pub fn scan(dir: &Path) -> Vec<Package> {
    let all = files(dir);
    let read = |rel: &str| std::fs::read_to_string(dir.join(rel)).ok();
    let mut packages = declared(dir, &all, &read);
    let languages = assign(&mut packages, &all, &read);
    for (i, p) in packages.iter_mut().enumerate() {
        settle(p, languages.get(&i));
    }
    packages
}

/// The packages the manifests under `dir` declare, or one for the whole directory. Manifests
/// of fixtures, examples and vendored code are not the project's packages; two in one
/// directory (pyproject.toml and setup.py) are one package.
fn declared(dir: &Path, all: &[String], read: &dyn Fn(&str) -> Option<String>) -> Vec<Package> {
    let mut packages: Vec<Package> = Vec::new();
    for rel in all.iter().filter(|r| !is_tooling(r) && !is_test_file(r)) {
        let Some(p) = read(rel).and_then(|text| manifest(rel, &text)) else {
            continue;
        };
        if !packages.iter().any(|q| q.dir == p.dir) {
            packages.push(p);
        }
    }
    if packages.is_empty() {
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "project".to_owned());
        packages.push(Package {
            name,
            dir: String::new(),
            language: String::new(),
            manifest: None,
            description: None,
            modules: Vec::new(),
            tests: Vec::new(),
            test_command: None,
        });
    }
    packages
}

/// Source files counted by language, per package (by index).
type Languages = BTreeMap<usize, BTreeMap<&'static str, usize>>;

/// Gives each source file to its nearest package, as a test or a module with its public
/// items; returns the files' languages per package.
fn assign(
    packages: &mut [Package],
    all: &[String],
    read: &dyn Fn(&str) -> Option<String>,
) -> Languages {
    // Deepest directories first, so a file goes to its nearest package.
    let mut order: Vec<usize> = (0..packages.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(packages[i].dir.len()));
    let mut languages = Languages::new();
    for rel in all {
        let Some(syntax) = Path::new(rel)
            .extension()
            .and_then(|e| e.to_str())
            .and_then(Syntax::for_extension)
        else {
            continue;
        };
        let Some(&owner) = order.iter().find(|&&i| within(rel, &packages[i].dir)) else {
            continue;
        };
        if is_tooling(rel) {
            continue;
        }
        let Some(text) = read(rel) else { continue };
        *languages
            .entry(owner)
            .or_default()
            .entry(language_name(syntax))
            .or_default() += 1;
        let p = &mut packages[owner];
        if is_test_file(rel) {
            p.tests.push(rel.clone());
            continue;
        }
        let items = public_items(syntax, &text);
        if !items.is_empty() {
            p.modules.push(Module {
                path: rel.clone(),
                items,
            });
        }
    }
    languages
}

/// A package's language (its manifest's, else its files' most common) and test command.
fn settle(p: &mut Package, languages: Option<&BTreeMap<&'static str, usize>>) {
    if p.language.is_empty() {
        p.language = languages
            .and_then(|l| {
                l.iter()
                    .max_by_key(|(_, n)| **n)
                    .map(|(l, _)| (*l).to_owned())
            })
            .unwrap_or_else(|| "unknown".to_owned());
    }
    if p.modules.is_empty() && p.tests.is_empty() {
        p.test_command = None; // nothing here a test command would run (a fuzz crate, a stub)
    }
    if p.test_command.is_none() && !p.tests.is_empty() && p.language == "Python" {
        p.test_command = Some("python3 -m pytest -q".to_owned());
    }
}

/// Whether `rel` is under `dir` (everything is under the root, `""`).
fn within(rel: &str, dir: &str) -> bool {
    dir.is_empty() || rel.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// Build scripts, test configuration and documentation: not part of a package's surface.
fn is_tooling(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    matches!(
        name,
        "setup.py" | "conftest.py" | "noxfile.py" | "fabfile.py" | "build.rs" | "manage.py"
    ) || rel.split('/').any(|part| {
        matches!(
            part,
            "docs"
                | "doc"
                | "examples"
                | "benches"
                | "scripts"
                | "fixtures"
                | "vendor"
                | "node_modules"
        )
    })
}

/// A test file by its path (a file that merely holds a `#[cfg(test)]` module is a module).
fn is_test_file(rel: &str) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    rel.split('/')
        .any(|part| part == "tests" || part == "test" || part == "__tests__")
        || name.starts_with("test_")
        || name.ends_with("_test.py")
        || name.ends_with("_test.go")
        || name.contains(".test.")
        || name.contains(".spec.")
}

fn language_name(s: Syntax) -> &'static str {
    match s {
        Syntax::Rust => "Rust",
        Syntax::Python => "Python",
        Syntax::JavaScript => "JavaScript",
        Syntax::TypeScript | Syntax::Tsx => "TypeScript",
        Syntax::Go => "Go",
        Syntax::C => "C",
        Syntax::Cpp => "C++",
    }
}

/// The package a manifest at `rel` declares, if it is one.
fn manifest(rel: &str, text: &str) -> Option<Package> {
    let (dir, name) = match rel.rsplit_once('/') {
        Some((d, n)) => (d.to_owned(), n),
        None => (String::new(), rel),
    };
    let d = declaration(name, text, &dir)?;
    Some(Package {
        name: d.name,
        dir,
        language: d.language.to_owned(),
        manifest: Some(rel.to_owned()),
        description: d.description,
        modules: Vec::new(),
        tests: Vec::new(),
        test_command: d.test,
    })
}

/// What a manifest declares of its package.
struct Declaration {
    name: String,
    language: &'static str,
    description: Option<String>,
    test: Option<String>,
}

/// What the manifest file `name` (in directory `dir`) declares, by its format.
fn declaration(name: &str, text: &str, dir: &str) -> Option<Declaration> {
    let in_dir = |cmd: &str| match dir {
        "" => cmd.to_owned(),
        _ => format!("cd {dir} && {cmd}"),
    };
    let (name, language, description, test) = match name {
        "Cargo.toml" => {
            let v: toml::Value = toml::from_str(text).ok()?;
            let p = v.get("package")?;
            let field = |k: &str| p.get(k).and_then(|d| d.as_str()).map(str::to_owned);
            let manifest_path = match dir {
                "" => String::new(),
                _ => format!(" --manifest-path {dir}/Cargo.toml"),
            };
            let test = Some(format!("cargo test{manifest_path}"));
            (field("name")?, "Rust", field("description"), test)
        }
        "pyproject.toml" => {
            let v: toml::Value = toml::from_str(text).ok()?;
            let p = v.get("project").or_else(|| v.get("tool")?.get("poetry"))?;
            let field = |k: &str| p.get(k).and_then(|d| d.as_str()).map(str::to_owned);
            (field("name")?, "Python", field("description"), None)
        }
        "setup.py" => {
            let at = text.find("name=")? + 5;
            let quoted = text[at..].trim_start();
            let q = quoted.chars().next().filter(|c| *c == '"' || *c == '\'')?;
            let name = quoted[1..].split(q).next()?.to_owned();
            (name, "Python", None, None)
        }
        "package.json" => {
            let v: serde_json::Value = serde_json::from_str(text).ok()?;
            let field = |k: &str| v.get(k).and_then(|d| d.as_str()).map(str::to_owned);
            let test = v
                .pointer("/scripts/test")
                .and_then(|t| t.as_str())
                .filter(|t| !t.contains("no test specified"))
                .map(|_| in_dir("npm test"));
            (field("name")?, "JavaScript", field("description"), test)
        }
        "go.mod" => {
            let module = text.lines().find_map(|l| l.strip_prefix("module "))?.trim();
            let name = module.rsplit('/').next().unwrap_or(module).to_owned();
            (name, "Go", None, Some(in_dir("go test ./...")))
        }
        _ => return None,
    };
    Some(Declaration {
        name,
        language,
        description,
        test,
    })
}

/// The directory `specc adopt` reads, as given or the current one.
pub fn dir_or_here(dir: Option<&PathBuf>) -> PathBuf {
    dir.cloned().unwrap_or_else(|| PathBuf::from("."))
}
