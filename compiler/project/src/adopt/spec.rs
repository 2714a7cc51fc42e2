//! The spec `specc adopt` writes: a title and what was found, one section per package (what
//! it is, its test command as a `sh test` check) and below it one section per source file
//! with public items, each item a requirement to keep. The front matter's `[adopted]` table
//! lists every section with the digest of its text, so a build plans nothing for a section
//! that is as adopted (design: driver.adopt).

use std::fmt::Write as _;

use specc_ir::FileId;

use super::scan::{Module, Package};

/// The most requirements one module section lists; the rest are counted.
const ITEMS_PER_MODULE: usize = 60;

/// What each section says in words, when a model wrote it (`--prose`), by section id.
pub type Prose = std::collections::BTreeMap<String, String>;

/// The id of a package's section.
pub fn package_id(p: &Package) -> String {
    let id = specc_passes::front_end::slugify(&p.name);
    if id.is_empty() {
        "package".to_owned()
    } else {
        id
    }
}

/// [`package_id`], made unique among `used` by its directory (two packages of one name).
pub fn unique_package_id(p: &Package, used: &mut std::collections::HashSet<String>) -> String {
    let mut id = package_id(p);
    if used.contains(&id) {
        id = format!("{id}-{}", specc_passes::front_end::slugify(&p.dir));
    }
    while used.contains(&id) {
        id.push_str("-2");
    }
    used.insert(id.clone());
    id
}

/// The id of a module's section: its package's, `/`, its path.
pub fn module_id(package: &str, path: &str) -> String {
    let clean: String = path
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/') {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("{package}/{clean}")
}

/// The spec's body (without front matter).
pub fn body(title: &str, packages: &[Package], prose: &Prose, mode: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# {title}\n");
    match prose.get("") {
        Some(p) => {
            let _ = writeln!(s, "{p}\n");
        }
        None => {
            let _ = writeln!(
                s,
                "Describe the project here: what it is for, and for whom.\n"
            );
        }
    }
    let _ = writeln!(
        s,
        "`specc adopt` wrote this spec from the code in this repository ({mode}). Each section below describes code that exists; the front matter lists them as adopted, so `specc build` builds none of them while their text is as adopted. Add a section for new work, or edit one to change that code: only that is planned and built, on top of what is here.\n"
    );
    let mut tag = 0usize;
    let mut used = std::collections::HashSet::new();
    for p in packages {
        let pid = unique_package_id(p, &mut used);
        let kind = if p.manifest.is_some() {
            "package"
        } else {
            "code"
        };
        let _ = writeln!(s, "## {} `{}` {{#{pid}}}\n", capital(kind), p.name);
        if let Some(text) = prose.get(&pid) {
            let _ = writeln!(s, "{text}\n");
        }
        let mut what = format!("The {} {kind} `{}`", p.language, p.name);
        if let Some(m) = &p.manifest {
            let _ = write!(what, " ({m})");
        }
        if let Some(d) = p.description.as_deref().filter(|d| !d.trim().is_empty()) {
            let _ = write!(what, ": {}", d.trim().trim_end_matches('.'));
        }
        let _ = writeln!(s, "{what}.\n");
        match &p.test_command {
            Some(cmd) => {
                let _ = writeln!(
                    s,
                    "Its tests ({} test file{}) run with `{cmd}`.\n\n```sh test\n{cmd}\n```\n",
                    p.tests.len(),
                    if p.tests.len() == 1 { "" } else { "s" }
                );
            }
            None if !p.tests.is_empty() => {
                let _ = writeln!(
                    s,
                    "It has {} test file{}, and no command to run them was found.\n",
                    p.tests.len(),
                    if p.tests.len() == 1 { "" } else { "s" }
                );
            }
            None => {}
        }
        let prefix = tag_prefix(&p.name);
        for m in &p.modules {
            module_section(&mut s, (&pid, &prefix, &mut tag), m, prose);
        }
    }
    s
}

/// A module's section: its prose and a requirement per public item (the first
/// `ITEMS_PER_MODULE`), tagged `[prefix-n]` with `tag` counting on.
fn module_section(
    s: &mut String,
    (pid, prefix, tag): (&str, &str, &mut usize),
    m: &Module,
    prose: &Prose,
) {
    let mid = module_id(pid, &m.path);
    let _ = writeln!(s, "### `{}` {{#{mid}}}\n", m.path);
    if let Some(text) = prose.get(&mid) {
        let _ = writeln!(s, "{text}\n");
    }
    for item in m.items.iter().take(ITEMS_PER_MODULE) {
        *tag += 1;
        let _ = writeln!(
            s,
            "- [{prefix}-{tag}] `{}` MUST keep `{}`.",
            m.path,
            item.signature.replace('`', "'")
        );
    }
    if m.items.len() > ITEMS_PER_MODULE {
        let _ = writeln!(
            s,
            "\nIt has {} more public items, not listed.",
            m.items.len() - ITEMS_PER_MODULE
        );
    }
    s.push('\n');
}

/// The whole spec: the `[adopted]` front matter, with each section's digest, then `body`.
pub fn with_front_matter(body: &str) -> String {
    let parsed = specc_passes::parse_spec(FileId(0), body);
    let mut s = String::from("+++\n");
    s.push_str("# Written by `specc adopt`: the sections of the existing code, each with the digest of\n# its text. A section still as adopted is not built; an edited one is planned again.\n# `specc adopt --refresh` records the digests of the spec as it is now.\n[adopted]\n");
    for node in parsed.tree.nodes() {
        let _ = writeln!(
            s,
            "{} = \"{}\"",
            toml_key(node.id.as_str()),
            specc_passes::adopted::digest(node)
        );
    }
    s.push_str("+++\n");
    s.push_str(body);
    s
}

/// `id` as a TOML key: always quoted (ids hold `/` and `.`).
fn toml_key(id: &str) -> String {
    format!("\"{}\"", id.replace('\\', "\\\\").replace('"', "\\\""))
}

fn capital(word: &str) -> String {
    let mut c = word.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// A requirement tag's letters from a package name: its ASCII letters, upper case, at most
/// eight (`K` when it has none).
fn tag_prefix(name: &str) -> String {
    let p: String = name
        .chars()
        .filter(char::is_ascii_alphabetic)
        .take(8)
        .collect::<String>()
        .to_ascii_uppercase();
    if p.is_empty() { "K".to_owned() } else { p }
}
