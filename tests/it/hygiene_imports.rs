//! The import rule (design: crates.no-import-cycles): within each crate, the files'
//! imports form no cycle. A `use` through a parent's re-export counts as an import of the
//! file that defines the item, so a facade that only declares and re-exports its children
//! is no part of a cycle; a child that imports an item its parent defines is. The scan is
//! lexical (comments, strings and `#[cfg(test)]` items are left out), not a Rust parser.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::support::root;

/// A module's path from its crate's root (`[]` is `lib.rs`).
type Module = Vec<String>;

/// Every `.rs` file under `src`, by module path.
fn modules(src: &Path) -> BTreeMap<Module, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let Some(rel) = path.strip_prefix(src).ok().and_then(|r| r.to_str()) else {
                continue;
            };
            let Some(rel) = rel.strip_suffix(".rs") else {
                continue;
            };
            let mut parts: Module = rel.split('/').map(str::to_owned).collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            if parts == ["lib"] || parts == ["main"] {
                parts.clear();
            }
            out.insert(parts, path);
        }
    }
    out
}

/// The code of a file without comments, string and character literals, and what follows
/// its first `#[cfg(test)]` (tests may import what they like).
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    let b = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let rest = &b[i..];
        if rest.starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if rest.starts_with(b"/*") {
            i += 2;
            while i < b.len() && !b[i..].starts_with(b"*/") {
                i += 1;
            }
            i += 2;
        } else if let Some(hashes) = raw_string(rest) {
            // r"…", r#"…"#: ends at the quote followed by as many hashes.
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            i += 2 + hashes;
            while i < b.len() && !b[i..].starts_with(&close) {
                i += 1;
            }
            i += close.len();
            out.extend_from_slice(b"\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.extend_from_slice(b"\"\"");
        } else if let Some(len) = char_literal(rest) {
            i += len;
            out.extend_from_slice(b"' '");
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The number of `#` of a raw string literal starting at `b`, if one does (not the end of
/// an identifier such as `bar"`).
fn raw_string(b: &[u8]) -> Option<usize> {
    let rest = b.strip_prefix(b"r")?;
    let hashes = rest.iter().take_while(|c| **c == b'#').count();
    (rest.get(hashes) == Some(&b'"')).then_some(hashes)
}

/// The length of a character literal starting at `b` (`'x'`, `'\n'`, `'\u{7f}'`), if one
/// does (a lifetime such as `'a` does not end in a quote).
fn char_literal(b: &[u8]) -> Option<usize> {
    if b.first() != Some(&b'\'') {
        return None;
    }
    let end = match b.get(1)? {
        b'\\' => 2 + b[2..].iter().position(|c| *c == b'\'')?,
        _ => {
            let ch = std::str::from_utf8(&b[1..b.len().min(5)])
                .ok()
                .or_else(|| std::str::from_utf8(&b[1..b.len().min(4)]).ok())
                .or_else(|| std::str::from_utf8(&b[1..b.len().min(3)]).ok())
                .or_else(|| std::str::from_utf8(&b[1..b.len().min(2)]).ok())?
                .chars()
                .next()?;
            1 + ch.len_utf8()
        }
    };
    (b.get(end) == Some(&b'\'')).then_some(end + 1)
}

/// The paths a `use` tree names, each as its segments: `a::{b, c::d}` is `a::b`, `a::c::d`.
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let tree = regex::Regex::new(r"\s+as\s+[A-Za-z_][A-Za-z0-9_]*")
        .map(|re| re.replace_all(&tree, "").into_owned())
        .unwrap_or(tree);
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    fn walk(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
        let Some(open) = tree.find('{') else {
            let mut path = prefix.to_vec();
            path.extend(
                tree.split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
            );
            out.push(path);
            return;
        };
        let mut path = prefix.to_vec();
        path.extend(
            tree[..open]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let (mut depth, mut start) = (0, 0);
        for (i, ch) in inner.char_indices() {
            match ch {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    walk(&path, &inner[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        if start < inner.len() {
            walk(&path, &inner[start..], out);
        }
    }
    let mut out = Vec::new();
    walk(&[], &tree, &mut out);
    out
}

/// `path` (beginning `crate`, `self`, `super` or a child module of `m`) made absolute from
/// module `m`; `None` for another crate's path.
fn absolute(files: &BTreeMap<Module, PathBuf>, m: &Module, path: &[String]) -> Option<Module> {
    let (head, rest) = path.split_first()?;
    let mut base = match head.as_str() {
        "crate" => Vec::new(),
        "self" => m.clone(),
        "super" => m[..m.len().saturating_sub(1)].to_vec(),
        child => {
            let mut inside = m.clone();
            inside.push(child.to_owned());
            if !files.contains_key(&inside) {
                return None;
            }
            inside
        }
    };
    let mut rest = rest;
    while let Some(("super", tail)) = rest.split_first().map(|(h, t)| (h.as_str(), t)) {
        base.pop();
        rest = tail;
    }
    base.extend(rest.iter().filter(|s| *s != "self").cloned());
    Some(base)
}

/// The import graph of the crate whose sources are under `src`: module → the files it
/// imports from, re-exports followed to the file that defines the item.
fn graph(src: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let files = modules(src);
    let use_re = regex::Regex::new(r"(?m)(^|[^A-Za-z_])(pub(\([^)]*\))?\s+)?use\s+([^;]+);")
        .expect("the use pattern");
    let inline_re =
        regex::Regex::new(r"(^|[^A-Za-z_:])((crate|super|self)(::[A-Za-z_][A-Za-z0-9_]*)+)")
            .expect("the path pattern");
    let visibility_re = regex::Regex::new(r"pub\(in [^)]*\)").expect("the visibility pattern");
    let bare_re = regex::Regex::new(r"(^|[^A-Za-z0-9_:])([a-z_][a-z0-9_]*)::[A-Za-z_]")
        .expect("the bare path pattern");
    let mut uses: HashMap<Module, Vec<(bool, Vec<String>)>> = HashMap::new();
    for (m, path) in &files {
        let text = code(&std::fs::read_to_string(path).unwrap_or_default());
        let mut found = Vec::new();
        for c in use_re.captures_iter(&text) {
            for p in expand(&c[4]) {
                found.push((c.get(2).is_some(), p));
            }
        }
        let outside_uses = use_re.replace_all(&text, "");
        // `pub(in crate::x)` names where an item is visible, not what it uses.
        let outside_uses = visibility_re.replace_all(&outside_uses, "pub");
        for c in inline_re.captures_iter(&outside_uses) {
            found.push((false, c[2].split("::").map(str::to_owned).collect()));
        }
        // A child module named bare in its parent's code (`build::run(…)` in a `mod.rs`).
        for c in bare_re.captures_iter(&outside_uses) {
            let mut child = m.clone();
            child.push(c[2].to_owned());
            if files.contains_key(&child) {
                found.push((false, c[2].split("::").map(str::to_owned).collect()));
            }
        }
        uses.insert(m.clone(), found);
    }
    // What each module re-exports: name → the absolute path it stands for.
    let mut reexports: HashMap<Module, HashMap<String, Module>> = HashMap::new();
    for (m, found) in &uses {
        for (public, path) in found {
            let Some(abs) = absolute(&files, m, path).filter(|_| *public) else {
                continue;
            };
            if let Some(name) = abs.last() {
                reexports
                    .entry(m.clone())
                    .or_default()
                    .insert(name.clone(), abs.clone());
            }
        }
    }
    let resolve = |segs: &Module| -> Option<Module> {
        let mut segs = segs.clone();
        for _ in 0..16 {
            let k = (0..=segs.len())
                .rev()
                .find(|k| files.contains_key(&segs[..*k]))?;
            let module = segs[..k].to_vec();
            let through = segs
                .get(k)
                .and_then(|name| reexports.get(&module)?.get(name));
            match through {
                Some(target) if *target != segs[..=k] => {
                    let mut next = target.clone();
                    next.extend(segs[k + 1..].iter().cloned());
                    segs = next;
                }
                _ => return Some(module),
            }
        }
        None
    };
    let mut g: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    for (m, found) in &uses {
        let edges = g.entry(m.clone()).or_default();
        for (_, path) in found {
            if let Some(target) = absolute(&files, m, path).and_then(|a| resolve(&a))
                && target != *m
                && !target.is_empty()
            {
                edges.insert(target);
            }
        }
    }
    g
}

/// The cycles of `g`: its strongly connected components of more than one module
/// (Tarjan's algorithm; module trees are shallow enough to recurse).
fn cycles(g: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    #[derive(Default)]
    struct Tarjan<'g> {
        next: usize,
        index: HashMap<&'g Module, usize>,
        low: HashMap<&'g Module, usize>,
        stack: Vec<&'g Module>,
        on_stack: BTreeSet<&'g Module>,
        out: Vec<Vec<Module>>,
    }
    fn visit<'g>(g: &'g BTreeMap<Module, BTreeSet<Module>>, v: &'g Module, t: &mut Tarjan<'g>) {
        t.index.insert(v, t.next);
        t.low.insert(v, t.next);
        t.next += 1;
        t.stack.push(v);
        t.on_stack.insert(v);
        for w in g.get(v).into_iter().flatten() {
            if !t.index.contains_key(w) {
                visit(g, w, t);
                let low = t.low[v].min(t.low[w]);
                t.low.insert(v, low);
            } else if t.on_stack.contains(w) {
                let low = t.low[v].min(t.index[w]);
                t.low.insert(v, low);
            }
        }
        if t.low[v] == t.index[v] {
            let mut component = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                t.out.push(component);
            }
        }
    }
    let mut t = Tarjan::default();
    for v in g.keys() {
        if !t.index.contains_key(v) {
            visit(g, v, &mut t);
        }
    }
    t.out
}

#[test]
fn no_crate_has_an_import_cycle() {
    let mut crates = vec![root().join("ir"), root().join("passes")];
    let compiler = std::fs::read_dir(root().join("compiler")).expect("compiler/");
    crates.extend(compiler.filter_map(Result::ok).map(|e| e.path()));
    let mut found = Vec::new();
    let mut scanned = 0;
    for c in crates.iter().filter(|c| c.join("src").is_dir()) {
        let g = graph(&c.join("src"));
        scanned += g.len();
        for cycle in cycles(&g) {
            let names: Vec<String> = cycle.iter().map(|m| m.join("::")).collect();
            let mut edges = Vec::new();
            for m in &cycle {
                for w in g[m].iter().filter(|w| cycle.contains(w)) {
                    edges.push(format!("{} → {}", m.join("::"), w.join("::")));
                }
            }
            found.push(format!(
                "{}: {} ({})",
                c.display(),
                names.join(" ↔ "),
                edges.join(", ")
            ));
        }
    }
    assert!(scanned > 200, "the scan saw the sources: {scanned} modules");
    assert!(found.is_empty(), "import cycles: {found:#?}");
}

/// The check itself finds a cycle through a parent's own item, and none through a facade.
#[test]
fn the_rule_sees_a_child_importing_its_parent_but_not_a_facade() {
    let dir = tempfile::tempdir().expect("dir");
    let src = dir.path();
    std::fs::create_dir_all(src.join("a")).expect("a/");
    std::fs::create_dir_all(src.join("b")).expect("b/");
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\nmod c;\n").expect("lib");
    // a: the parent defines an item its child imports, and imports the child: a cycle.
    std::fs::write(
        src.join("a/mod.rs"),
        "mod child;\nuse self::child::helper;\npub struct Shared;\n",
    )
    .expect("a");
    std::fs::write(
        src.join("a/child.rs"),
        "use super::Shared; // the parent's own item\npub fn helper() {}\n",
    )
    .expect("a/child");
    // c: the parent calls its child by a bare path, and the child imports the parent's
    // own item: a cycle too.
    std::fs::create_dir_all(src.join("c")).expect("c/");
    std::fs::write(
        src.join("c/mod.rs"),
        "mod child;
pub struct Shared;
pub fn run() { child::helper() }
",
    )
    .expect("c");
    std::fs::write(
        src.join("c/child.rs"),
        "use super::Shared;
pub fn helper() {}
",
    )
    .expect("c/child");
    // b: a facade re-exports its children, which import each other through it: no cycle.
    std::fs::write(
        src.join("b/mod.rs"),
        "mod one;\nmod two;\npub use one::One;\npub use two::Two;\n",
    )
    .expect("b");
    std::fs::write(src.join("b/one.rs"), "pub struct One;\n").expect("b/one");
    std::fs::write(
        src.join("b/two.rs"),
        "use crate::b::One;\npub struct Two(One);\n",
    )
    .expect("b/two");
    let g = graph(src);
    let found = cycles(&g);
    let m = |p: &[&str]| p.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert_eq!(
        found,
        vec![
            vec![m(&["a"]), m(&["a", "child"])],
            vec![m(&["c"]), m(&["c", "child"])]
        ],
        "{g:?}"
    );
}
