//! Objects and their encoding: blobs, trees and commits, named by blake3 over kind and bytes.
//! design: vcs.store

/// An object's name: blake3 over its kind byte and its payload.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId(pub [u8; 32]);

impl ObjectId {
    pub fn of(kind: Kind, payload: &[u8]) -> ObjectId {
        let mut h = blake3::Hasher::new();
        h.update(&[kind as u8]);
        h.update(payload);
        ObjectId(*h.finalize().as_bytes())
    }

    /// The id `hex` names (64 hex digits), as [`ObjectId::hex`] writes it.
    pub fn from_hex(hex: &str) -> Option<ObjectId> {
        let mut id = [0u8; 32];
        for (i, b) in id.iter_mut().enumerate() {
            *b = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(ObjectId(id))
    }

    pub fn hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(self.0.len() * 2);
        for b in self.0 {
            out.push(char::from(DIGITS[usize::from(b >> 4)]));
            out.push(char::from(DIGITS[usize::from(b & 0xf)]));
        }
        out
    }
}

impl std::fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", &self.hex()[..12])
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Blob = 1,
    Tree = 2,
    Commit = 3,
    /// Not an object: the log's record that moves the branch head (see `log.rs`).
    Head = 4,
    /// Not an object: the megafile guard's flagged paths, newline-separated (the last one
    /// written before a head record counts).
    Flags = 5,
}

impl Kind {
    pub fn from_byte(b: u8) -> Option<Kind> {
        Some(match b {
            1 => Kind::Blob,
            2 => Kind::Tree,
            3 => Kind::Commit,
            4 => Kind::Head,
            5 => Kind::Flags,
            _ => return None,
        })
    }
}

/// A tree entry: a regular file (blob), an executable file, or a directory (tree).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    Blob(ObjectId),
    Tree(ObjectId),
    /// A file with the executable bit (git's mode 100755).
    Executable(ObjectId),
}

impl Entry {
    /// The entry of a file: its blob, executable or not.
    pub fn file(blob: ObjectId, executable: bool) -> Entry {
        if executable {
            Entry::Executable(blob)
        } else {
            Entry::Blob(blob)
        }
    }

    /// A file's blob and whether it is executable; `None` for a directory.
    pub fn as_file(self) -> Option<(ObjectId, bool)> {
        match self {
            Entry::Blob(id) => Some((id, false)),
            Entry::Executable(id) => Some((id, true)),
            Entry::Tree(_) => None,
        }
    }

    /// A directory's tree; `None` for a file.
    pub fn as_tree(self) -> Option<ObjectId> {
        match self {
            Entry::Tree(id) => Some(id),
            Entry::Blob(_) | Entry::Executable(_) => None,
        }
    }
}

/// Tree payload: entries sorted by name, each `kind u8, name_len u16, name, id`, where kind
/// is 1 for a file, 2 for a directory and 3 for an executable file (kind 3 came later: a tree
/// without executables encodes, and is named, as before).
pub fn encode_tree<'a>(entries: impl Iterator<Item = (&'a str, Entry)>) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, entry) in entries {
        let (kind, id) = match entry {
            Entry::Blob(id) => (1u8, id),
            Entry::Tree(id) => (2u8, id),
            Entry::Executable(id) => (3u8, id),
        };
        out.push(kind);
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&id.0);
    }
    out
}

pub fn decode_tree(mut p: &[u8]) -> Option<Vec<(String, Entry)>> {
    let mut out = Vec::new();
    while !p.is_empty() {
        let kind = *p.first()?;
        let len = u16::from_le_bytes([*p.get(1)?, *p.get(2)?]) as usize;
        let name = std::str::from_utf8(p.get(3..3 + len)?).ok()?.to_owned();
        let id = ObjectId(p.get(3 + len..3 + len + 32)?.try_into().ok()?);
        let entry = match kind {
            1 => Entry::Blob(id),
            2 => Entry::Tree(id),
            3 => Entry::Executable(id),
            _ => return None, // never written: not a tree
        };
        out.push((name, entry));
        p = &p[3 + len + 32..];
    }
    Some(out)
}

/// A commit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Commit {
    pub parent: Option<ObjectId>,
    pub tree: ObjectId,
    /// Position on the branch: the root commit is 0.
    pub seq: u64,
    pub task: String,
    pub idempotency_key: String,
    pub message: String,
}

impl Commit {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(96 + self.message.len());
        match self.parent {
            Some(p) => {
                out.push(1);
                out.extend_from_slice(&p.0);
            }
            None => out.push(0),
        }
        out.extend_from_slice(&self.tree.0);
        out.extend_from_slice(&self.seq.to_le_bytes());
        for s in [&self.task, &self.idempotency_key, &self.message] {
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        out
    }

    pub fn decode(p: &[u8]) -> Option<Commit> {
        let (parent, mut rest) = match p.first()? {
            1 => (Some(ObjectId(p.get(1..33)?.try_into().ok()?)), p.get(33..)?),
            _ => (None, p.get(1..)?),
        };
        let tree = ObjectId(rest.get(..32)?.try_into().ok()?);
        let seq = u64::from_le_bytes(rest.get(32..40)?.try_into().ok()?);
        rest = rest.get(40..)?;
        let mut strings = Vec::new();
        for _ in 0..3 {
            let len = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
            strings.push(std::str::from_utf8(rest.get(4..4 + len)?).ok()?.to_owned());
            rest = rest.get(4 + len..)?;
        }
        let message = strings.pop()?;
        let idempotency_key = strings.pop()?;
        let task = strings.pop()?;
        Some(Commit {
            parent,
            tree,
            seq,
            task,
            idempotency_key,
            message,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Entry, ObjectId, decode_tree, encode_tree};

    #[test]
    fn trees_without_executables_encode_as_before_and_kind_3_is_executable() {
        let (a, b, c) = (ObjectId([1; 32]), ObjectId([2; 32]), ObjectId([3; 32]));
        let old = encode_tree([("f", Entry::Blob(a)), ("d", Entry::Tree(b))].into_iter());
        let mut expected = vec![1u8, 1, 0, b'f'];
        expected.extend_from_slice(&a.0);
        expected.extend_from_slice(&[2, 1, 0, b'd']);
        expected.extend_from_slice(&b.0);
        assert_eq!(old, expected, "kinds 1 and 2 are unchanged");
        let entries = vec![
            ("d".to_owned(), Entry::Tree(b)),
            ("f".to_owned(), Entry::Blob(a)),
            ("x".to_owned(), Entry::Executable(c)),
        ];
        let bytes = encode_tree(entries.iter().map(|(n, e)| (n.as_str(), *e)));
        assert_eq!(bytes[2 * (3 + 1 + 32)], 3, "an executable is kind 3");
        assert_eq!(decode_tree(&bytes), Some(entries));
        let mut unknown = vec![9u8, 1, 0, b'f'];
        unknown.extend_from_slice(&a.0);
        assert_eq!(decode_tree(&unknown), None, "an unknown kind is not a tree");
        assert_eq!(Entry::file(c, true).as_file(), Some((c, true)));
        assert_eq!(Entry::Tree(b).as_file(), None);
    }
}
