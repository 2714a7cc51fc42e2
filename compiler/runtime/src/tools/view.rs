//! `read`, `list`, `search`: the task's view of its checkout (its base commit plus its own
//! pending edits). Build output (`target/`) and specc's state are not shown.

use serde::Deserialize;

use super::outcome::ToolOutcome;
use super::toolbox::Toolbox;
use crate::checkouts::walk;

const MAX_READ: usize = 1000;
const MAX_LIST: usize = 300;
const MAX_HITS: usize = 100;

#[derive(Deserialize)]
pub(super) struct Read {
    path: String,
    start_line: Option<usize>,
    lines: Option<usize>,
}

pub(super) fn read(t: &Toolbox, a: Read) -> ToolOutcome {
    let (rel, path) = match t.readable_file(&a.path) {
        Ok(p) => p,
        Err(e) => return e,
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return ToolOutcome::error(format!("`{rel}` does not exist; `list` shows the files"));
        }
        Err(e) => return ToolOutcome::error(format!("`{rel}`: {e}")),
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return ToolOutcome::error(format!("`{rel}` is not UTF-8 text"));
    };
    let all: Vec<&str> = text.lines().collect();
    let start = a.start_line.unwrap_or(1).max(1);
    let count = a.lines.unwrap_or(200).clamp(1, MAX_READ);
    if all.is_empty() {
        return ToolOutcome::ok(format!("{rel} is empty"));
    }
    if start > all.len() {
        return ToolOutcome::error(format!(
            "{rel} has {} lines; start_line {start} is past its end",
            all.len()
        ));
    }
    let end = (start - 1 + count).min(all.len());
    let mut out = format!("{rel} (lines {start}-{end} of {})\n", all.len());
    for (i, line) in all[start - 1..end].iter().enumerate() {
        out.push_str(&format!("{:>5}  {line}\n", start + i));
    }
    ToolOutcome::ok(out)
}

#[derive(Deserialize)]
pub(super) struct List {
    #[serde(default)]
    path: Option<String>,
}

pub(super) fn list(t: &Toolbox, a: List) -> ToolOutcome {
    let (rel, dir) = match a.path.as_deref().filter(|p| !p.is_empty() && *p != ".") {
        Some(p) => match t.readable(p) {
            Ok(p) => p,
            Err(e) => return e,
        },
        None => (String::new(), t.root.clone()),
    };
    let mut files = Vec::new();
    walk(&t.root, &dir, &mut files);
    files.sort();
    if files.is_empty() {
        return ToolOutcome::ok(format!(
            "no files under `{}`",
            if rel.is_empty() { "." } else { &rel }
        ));
    }
    let n = files.len();
    let mut out: Vec<String> = files.into_iter().take(MAX_LIST).collect();
    if n > MAX_LIST {
        out.push(format!("… and {} more", n - MAX_LIST));
    }
    ToolOutcome::ok(out.join("\n"))
}

#[derive(Deserialize)]
pub(super) struct Search {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
}

pub(super) fn search(t: &Toolbox, a: Search) -> ToolOutcome {
    let re = match regex::Regex::new(&a.pattern) {
        Ok(r) => r,
        Err(e) => return ToolOutcome::error(format!("not a regular expression: {e}")),
    };
    let dir = match a.path.as_deref().filter(|p| !p.is_empty() && *p != ".") {
        Some(p) => match t.readable(p) {
            Ok((_, d)) => d,
            Err(e) => return e,
        },
        None => t.root.clone(),
    };
    let mut files = Vec::new();
    if dir.is_file() {
        if let Ok(rel) = dir.strip_prefix(&t.root) {
            files.push(rel.to_string_lossy().into_owned());
        }
    } else {
        walk(&t.root, &dir, &mut files);
    }
    files.sort();
    let mut hits = Vec::new();
    let mut more = 0usize;
    for f in files.iter().filter(|f| !t.secret_file(f)) {
        let Ok(text) = std::fs::read_to_string(t.root.join(f)) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if re.is_match(line) {
                if hits.len() < MAX_HITS {
                    let shown: String = line.chars().take(200).collect();
                    hits.push(format!("{f}:{}: {shown}", i + 1));
                } else {
                    more += 1;
                }
            }
        }
    }
    if hits.is_empty() {
        return ToolOutcome::ok("no matches");
    }
    if more > 0 {
        hits.push(format!("… and {more} more matches"));
    }
    ToolOutcome::ok(hits.join("\n"))
}
