//! Export to a real git repository through `git fast-import`: every commit after the last
//! one exported, with its message and task id, as one stream. Times are derived from the
//! sequence number, so the export is deterministic. Incremental: the last exported commit is
//! kept in `.git/specc-exported`, and the next export starts after it.
//! design: vcs.git-export

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::object::ObjectId;
use crate::read;
use crate::state::State;

const EPOCH: u64 = 1_700_000_000;

/// The fast-import stream of the commits after `since` (or all, after the root), and how
/// many commits it holds.
pub(crate) fn stream(state: &State, since: Option<ObjectId>) -> Option<(Vec<u8>, usize)> {
    let mut chain = Vec::new();
    let mut at = Some(state.head);
    while let Some(id) = at {
        if Some(id) == since {
            break;
        }
        let c = read::commit(state, id)?;
        if c.parent.is_none() {
            break; // the empty root is not exported
        }
        at = c.parent;
        chain.push((id, c));
    }
    chain.reverse();
    let mut out = Vec::new();
    for (i, (_, c)) in chain.iter().enumerate() {
        let parent_tree = match c.parent {
            Some(p) => Some(read::commit(state, p)?.tree),
            None => None,
        };
        let message = format!(
            "{}\n\nSpecc-Task: {}\nSpecc-Seq: {}\n",
            c.message, c.task, c.seq
        );
        let _ = write!(
            out,
            "commit refs/heads/main\nmark :{}\ncommitter specc <specc@localhost> {} +0000\ndata {}\n{}",
            i + 1,
            EPOCH + c.seq,
            message.len(),
            message
        );
        if i == 0 && since.is_some() {
            out.extend_from_slice(b"from refs/heads/main^0\n");
        } else if i > 0 {
            let _ = writeln!(out, "from :{i}");
        }
        for (path, blob) in read::diff(state, parent_tree, c.tree)? {
            match blob {
                Some(id) => {
                    let bytes = state.object(id)?;
                    let _ = write!(out, "M 100644 inline {path}\ndata {}\n", bytes.len());
                    out.extend_from_slice(&bytes);
                    out.push(b'\n');
                }
                None => {
                    let _ = writeln!(out, "D {path}");
                }
            }
        }
        out.push(b'\n');
    }
    Some((out, chain.len()))
}

fn git(dir: &Path, args: &[&str]) -> std::io::Result<std::process::Output> {
    Command::new("git").args(args).current_dir(dir).output()
}

/// Runs the export into the repository at `dir` (created if needed). Returns how many
/// commits were added.
pub(crate) fn run(
    dir: &Path,
    make: impl FnOnce(Option<ObjectId>) -> Option<(Vec<u8>, usize, ObjectId)>,
) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    if !dir.join(".git").exists() {
        let o = git(dir, &["init", "-q", "-b", "main"])?;
        if !o.status.success() {
            return Err(std::io::Error::other(
                String::from_utf8_lossy(&o.stderr).into_owned(),
            ));
        }
    }
    let marker = dir.join(".git").join("specc-exported");
    let since = std::fs::read_to_string(&marker)
        .ok()
        .and_then(|s| parse(s.trim()));
    let Some((stream, count, head)) = make(since) else {
        return Err(std::io::Error::other(
            "the store could not be read for export",
        ));
    };
    if count == 0 {
        return Ok(0);
    }
    let mut child = Command::new("git")
        .args(["fast-import", "--quiet"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(&stream)?;
    }
    let o = child.wait_with_output()?;
    if !o.status.success() {
        return Err(std::io::Error::other(format!(
            "git fast-import failed: {}",
            String::from_utf8_lossy(&o.stderr)
        )));
    }
    std::fs::write(&marker, head.hex())?;
    Ok(count)
}

fn parse(hex: &str) -> Option<ObjectId> {
    let mut id = [0u8; 32];
    for (i, b) in id.iter_mut().enumerate() {
        *b = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(ObjectId(id))
}
