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
        self.0.iter().map(|b| format!("{b:02x}")).collect()
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

/// A tree entry: a file (blob) or a directory (tree).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    Blob(ObjectId),
    Tree(ObjectId),
}

/// Tree payload: entries sorted by name, each `kind u8, name_len u16, name, id`.
pub fn encode_tree<'a>(entries: impl Iterator<Item = (&'a str, Entry)>) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, entry) in entries {
        let (kind, id) = match entry {
            Entry::Blob(id) => (1u8, id),
            Entry::Tree(id) => (2u8, id),
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
        out.push((
            name,
            if kind == 2 {
                Entry::Tree(id)
            } else {
                Entry::Blob(id)
            },
        ));
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
