//! The object log: one append-only file of records, each `[0xA5][kind][len u32][hash 32]
//! [payload]`. A batch of commits is appended with one write and made durable with one
//! `fsync`; its last record moves the head. On open the log is read back, every record's hash
//! verified, and anything after the last complete head record (a torn write, or a batch whose
//! fsync never returned) is cut off, so no partial commit is ever visible.
//! design: vcs.store

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::object::{Kind, ObjectId};

const MAGIC: u8 = 0xA5;
const HEADER: usize = 1 + 1 + 4 + 32;

/// Where an object's payload sits in the log.
#[derive(Clone, Copy, Debug)]
pub struct Location {
    pub offset: u64,
    pub len: u32,
}

pub struct Log {
    file: File,
    len: u64,
    /// Records appended but not yet synced.
    pending: Vec<u8>,
}

/// What a log held when it was opened.
pub struct Recovered {
    pub log: Log,
    pub index: HashMap<ObjectId, Location>,
    /// The head records, in order: each is (commit id, seq).
    pub heads: Vec<(ObjectId, u64)>,
    /// The flagged paths as of the last head record.
    pub flags: Vec<String>,
}

impl Log {
    pub fn open(path: &Path) -> std::io::Result<Recovered> {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        // One process per store: a second writer would interleave batches.
        file.try_lock().map_err(|_| {
            std::io::Error::other(format!("{} is open in another process", path.display()))
        })?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let mut index = HashMap::new();
        let mut heads = Vec::new();
        let mut pos = 0usize;
        let mut committed_end = 0usize;
        let mut batch: Vec<(ObjectId, Location)> = Vec::new();
        let mut flags: Vec<String> = Vec::new();
        let mut batch_flags: Option<Vec<String>> = None;
        while let Some((kind, id, payload_at, len)) = record_at(&bytes, pos) {
            let payload = &bytes[payload_at..payload_at + len];
            if kind == Kind::Flags {
                let text = String::from_utf8_lossy(payload);
                batch_flags = Some(
                    text.lines()
                        .filter(|l| !l.is_empty())
                        .map(str::to_owned)
                        .collect(),
                );
            } else if kind == Kind::Head {
                let (Some(commit), Some(seq)) = (
                    payload
                        .get(..32)
                        .and_then(|b| b.try_into().ok())
                        .map(ObjectId),
                    payload
                        .get(32..40)
                        .and_then(|b| b.try_into().ok())
                        .map(u64::from_le_bytes),
                ) else {
                    break;
                };
                heads.push((commit, seq));
                index.extend(batch.drain(..));
                if let Some(f) = batch_flags.take() {
                    flags = f;
                }
                committed_end = payload_at + len;
            } else {
                let loc = Location {
                    offset: payload_at as u64,
                    len: len as u32,
                };
                batch.push((id, loc));
            }
            pos = payload_at + len;
        }
        // What stops the scan must be a torn tail: the unsynced end of a batch. If a valid
        // head record follows the damage, acknowledged commits lie beyond it: that is
        // corruption, and the store refuses to open rather than drop them.
        if pos < bytes.len() && head_after(&bytes, pos + 1) {
            return Err(std::io::Error::other(format!(
                "{}: a damaged record at byte {pos} is followed by committed data",
                path.display()
            )));
        }
        let truncated = (bytes.len() - committed_end) as u64;
        if truncated > 0 {
            file.set_len(committed_end as u64)?;
            file.sync_all()?;
        }
        file.seek(SeekFrom::Start(committed_end as u64))?;
        Ok(Recovered {
            log: Log {
                file,
                len: committed_end as u64,
                pending: Vec::new(),
            },
            index,
            heads,
            flags,
        })
    }

    /// Queues an object; returns where its payload will be once written.
    pub fn push(&mut self, kind: Kind, id: ObjectId, payload: &[u8]) -> Location {
        self.pending.push(MAGIC);
        self.pending.push(kind as u8);
        self.pending
            .extend_from_slice(&(payload.len() as u32).to_le_bytes());
        self.pending.extend_from_slice(&id.0);
        let offset = self.len + self.pending.len() as u64;
        self.pending.extend_from_slice(payload);
        Location {
            offset,
            len: payload.len() as u32,
        }
    }

    /// Queues the flagged paths (they take effect with the batch's head record).
    pub fn push_flags(&mut self, flags: &[&str]) {
        let payload = flags.join("\n").into_bytes();
        let id = ObjectId::of(Kind::Flags, &payload);
        self.push(Kind::Flags, id, &payload);
    }

    /// Queues the head record that ends a batch.
    pub fn push_head(&mut self, commit: ObjectId, seq: u64) {
        let mut payload = [0u8; 40];
        payload[..32].copy_from_slice(&commit.0);
        payload[32..].copy_from_slice(&seq.to_le_bytes());
        let id = ObjectId::of(Kind::Head, &payload);
        self.push(Kind::Head, id, &payload);
    }

    /// Writes what is queued and waits until it is on disk: the one fsync of a batch.
    pub fn sync(&mut self) -> std::io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.file.write_all(&self.pending)?;
        self.file.sync_data()?;
        self.len += self.pending.len() as u64;
        self.pending.clear();
        Ok(())
    }

    /// Reads a payload that is on disk (or still queued).
    pub fn read(&self, loc: Location) -> std::io::Result<Vec<u8>> {
        let mut buf = vec![0u8; loc.len as usize];
        if loc.offset >= self.len {
            let at = (loc.offset - self.len) as usize;
            buf.copy_from_slice(&self.pending[at..at + loc.len as usize]);
        } else {
            self.file.read_exact_at(&mut buf, loc.offset)?;
        }
        Ok(buf)
    }
}

/// Whether a valid head record starts anywhere at or after `from`.
fn head_after(bytes: &[u8], from: usize) -> bool {
    let mut at = from;
    while let Some(p) = bytes
        .get(at..)
        .and_then(|b| b.iter().position(|&x| x == MAGIC))
    {
        let pos = at + p;
        if let Some((Kind::Head, ..)) = record_at(bytes, pos) {
            return true;
        }
        at = pos + 1;
    }
    false
}

/// The record at `pos`, verified: (kind, id, payload offset, payload length).
fn record_at(bytes: &[u8], pos: usize) -> Option<(Kind, ObjectId, usize, usize)> {
    let header = bytes.get(pos..pos + HEADER)?;
    if header[0] != MAGIC {
        return None;
    }
    let kind = Kind::from_byte(header[1])?;
    let len = u32::from_le_bytes(header[2..6].try_into().ok()?) as usize;
    let id = ObjectId(header[6..38].try_into().ok()?);
    let payload_at = pos + HEADER;
    let payload = bytes.get(payload_at..payload_at + len)?;
    (ObjectId::of(kind, payload) == id).then_some((kind, id, payload_at, len))
}
