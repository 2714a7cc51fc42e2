//! `specc adopt --refresh`: the `[adopted]` table of an adopted spec rewritten to the
//! current digests of the sections it names (ids the spec no longer has are dropped), the
//! rest of the file untouched, replaced atomically. What a person runs after editing an
//! adopted section's text to describe the code as it is, rather than to change it.
//! design: driver.adopt

use std::path::Path;

use specc_ir::{Diagnostic, FileId, codes};

/// Rewrites the table in the spec at `path`; returns how many sections it now lists.
pub fn refresh(path: &Path) -> Result<usize, Box<Diagnostic>> {
    let io = |e: std::io::Error| {
        Box::new(Diagnostic::new(
            codes::IO_ERROR,
            format!("{}: {e}", path.display()),
        ))
    };
    let text = std::fs::read_to_string(path).map_err(io)?;
    let parsed = specc_passes::parse_spec(FileId(0), &text);
    let table = parsed
        .tree
        .front_matter
        .as_ref()
        .and_then(|f| f.table.get(specc_passes::adopted::TABLE))
        .and_then(|t| t.as_object())
        .ok_or_else(|| {
            Box::new(
                Diagnostic::new(
                    codes::INVALID_FRONT_MATTER,
                    format!("{} has no `[adopted]` front matter", path.display()),
                )
                .with_help("`specc adopt DIR` writes an adopted spec; --refresh only updates one"),
            )
        })?;
    let mut lines = Vec::new();
    for node in parsed
        .tree
        .nodes()
        .filter(|n| table.contains_key(n.id.as_str()))
    {
        lines.push(format!(
            "\"{}\" = \"{}\"",
            node.id.as_str().replace('\\', "\\\\").replace('"', "\\\""),
            specc_passes::adopted::digest(node)
        ));
    }
    // The table's lines: from `[adopted]` to the next table header or the closing `+++`.
    let mut out = String::with_capacity(text.len());
    let mut in_matter = false;
    let mut in_table = false;
    let mut closed = false;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let bare = line.trim();
        if i == 0 && bare == "+++" {
            in_matter = true;
        } else if in_matter && !closed && bare == "+++" {
            closed = true;
            in_table = false;
        } else if in_matter && !closed && bare.starts_with('[') {
            in_table = bare == "[adopted]";
            if in_table {
                out.push_str(line);
                for l in &lines {
                    out.push_str(l);
                    out.push('\n');
                }
                continue;
            }
        } else if in_table && !bare.is_empty() && !bare.starts_with('#') {
            continue; // an old entry
        }
        out.push_str(line);
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    crate::atomic::write(dir, path, out.as_bytes()).map_err(io)?;
    Ok(lines.len())
}
