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
pub(crate) struct Location {
    pub offset: u64,
    pub len: u32,
}

pub(crate) struct Log {
    file: File,
    len: u64,
    /// Records appended but not yet synced.
    pending: Vec<u8>,
}

/// What a log held when it was opened.
pub(crate) struct Recovered {
    pub log: Log,
    pub index: HashMap<ObjectId, Location>,
    /// The head records, in order: each is (commit id, seq).
    pub heads: Vec<(ObjectId, u64)>,
    /// The flagged paths as of the last head record.
    pub flags: Vec<String>,
}

/// What a scan of the log found: the objects of every batch that ended in a head record,
/// the heads, the flags as of the last head, and where the committed data ends.
#[derive(Default)]
struct Replayed {
    index: HashMap<ObjectId, Location>,
    heads: Vec<(ObjectId, u64)>,
    flags: Vec<String>,
    /// Where the last complete head record ends: everything after it is uncommitted.
    committed_end: usize,
    /// The objects of the batch being read, committed by its head record.
    batch: Vec<(ObjectId, Location)>,
    batch_flags: Option<Vec<String>>,
}

impl Replayed {
    /// Takes in one record whose payload starts at `payload_at`; `false` if it is a head
    /// record that does not decode (the scan stops there).
    fn take(&mut self, kind: Kind, id: ObjectId, payload_at: usize, payload: &[u8]) -> bool {
        let len = payload.len();
        match kind {
            Kind::Flags => {
                let text = String::from_utf8_lossy(payload);
                self.batch_flags = Some(
                    text.lines()
                        .filter(|l| !l.is_empty())
                        .map(str::to_owned)
                        .collect(),
                );
            }
            Kind::Head => {
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
                    return false;
                };
                self.heads.push((commit, seq));
                self.index.extend(self.batch.drain(..));
                if let Some(f) = self.batch_flags.take() {
                    self.flags = f;
                }
                self.committed_end = payload_at + len;
            }
            _ => self.batch.push((
                id,
                Location {
                    offset: payload_at as u64,
                    len: len as u32,
                },
            )),
        }
        true
    }
}

impl Log {
    pub(crate) fn open(path: &Path) -> std::io::Result<Recovered> {
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
        let file_len = file.metadata()?.len() as usize;
        let (replayed, pos) = replay(&file);
        if pos < file_len {
            check_tail(&mut file, path, pos, file_len, replayed.committed_end)?;
        }
        let committed_end = replayed.committed_end;
        if file_len > committed_end {
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
            index: replayed.index,
            heads: replayed.heads,
            flags: replayed.flags,
        })
    }

    /// Queues an object; returns where its payload will be once written.
    pub(crate) fn push(&mut self, kind: Kind, id: ObjectId, payload: &[u8]) -> Location {
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
    pub(crate) fn push_flags(&mut self, flags: &[&str]) {
        let payload = flags.join("\n").into_bytes();
        let id = ObjectId::of(Kind::Flags, &payload);
        self.push(Kind::Flags, id, &payload);
    }

    /// Queues the head record that ends a batch.
    pub(crate) fn push_head(&mut self, commit: ObjectId, seq: u64) {
        let mut payload = [0u8; 40];
        payload[..32].copy_from_slice(&commit.0);
        payload[32..].copy_from_slice(&seq.to_le_bytes());
        let id = ObjectId::of(Kind::Head, &payload);
        self.push(Kind::Head, id, &payload);
    }

    /// Writes what is queued and waits until it is on disk: the one fsync of a batch.
    pub(crate) fn sync(&mut self) -> std::io::Result<()> {
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
    pub(crate) fn read(&self, loc: Location) -> std::io::Result<Vec<u8>> {
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

/// Reads the log one record at a time (memory holds the index, never the log): what its
/// committed batches hold, and where the scan stopped.
fn replay(file: &File) -> (Replayed, usize) {
    let mut scan = Scanner {
        reader: std::io::BufReader::with_capacity(1 << 20, file),
        pos: 0,
    };
    let mut replayed = Replayed::default();
    while let Some((kind, id, payload_at, payload)) = scan.next_record() {
        if !replayed.take(kind, id, payload_at, &payload) {
            return (replayed, payload_at - HEADER);
        }
    }
    let pos = scan.pos;
    (replayed, pos)
}

/// What stops the scan at `pos` must be a torn tail: the unsynced end of a batch. If a
/// valid head record follows the damage, acknowledged commits lie beyond it; if the damage
/// does not look like a write that stopped (a whole record whose hash fails, bytes that are
/// neither a record nor zeros), data was changed after it was written. Either is
/// corruption: the store refuses to open rather than drop or trust it. Only here is the
/// rest of the file read whole.
fn check_tail(
    file: &mut File,
    path: &Path,
    pos: usize,
    file_len: usize,
    committed_end: usize,
) -> std::io::Result<()> {
    let mut tail = Vec::with_capacity(file_len - pos);
    file.seek(SeekFrom::Start(pos as u64))?;
    file.read_to_end(&mut tail)?;
    let heads = heads_after(&tail, 1);
    let why = match heads.as_slice() {
        // Damage in the last batch, before its head, with a hole a power loss left: that
        // batch's fsync never returned. Anything more is committed data.
        [head] if unwritten_block(&tail[..*head], pos) => None,
        [] if torn(&tail, pos) => None,
        [] => Some("is whole but does not verify (changed after it was written)"),
        _ => Some("is followed by committed data"),
    };
    match why {
        None => Ok(()),
        Some(why) => Err(std::io::Error::other(format!(
            "{}: the record at byte {pos} {why}; the store will not open a log whose \
             committed data is damaged. Restore it from a backup, or, if the machine \
             lost power mid-write, keep the commits before the damage with \
             `truncate -s {committed_end} {}` (the last {} bytes are lost)",
            path.display(),
            path.display(),
            file_len - committed_end
        ))),
    }
}

/// Reads the log's records in order, verifying each.
struct Scanner<R> {
    reader: R,
    /// Where the next record starts.
    pos: usize,
}

impl<R: Read> Scanner<R> {
    /// The next record, verified: (kind, id, payload offset, payload); `None` at the end of
    /// the file or at the first record that is cut short or does not verify (`pos` stays at
    /// its start).
    fn next_record(&mut self) -> Option<(Kind, ObjectId, usize, Vec<u8>)> {
        let mut header = [0u8; HEADER];
        self.reader.read_exact(&mut header).ok()?;
        if header[0] != MAGIC {
            return None;
        }
        let kind = Kind::from_byte(header[1])?;
        let len = u32::from_le_bytes([header[2], header[3], header[4], header[5]]) as usize;
        let id = ObjectId(header[6..38].try_into().ok()?);
        let mut payload = Vec::new();
        // Never trust a length to allocate: read at most what the file holds.
        (&mut self.reader)
            .take(len as u64)
            .read_to_end(&mut payload)
            .ok()?;
        if payload.len() != len || ObjectId::of(kind, &payload) != id {
            return None;
        }
        let payload_at = self.pos + HEADER;
        self.pos = payload_at + len;
        Some((kind, id, payload_at, payload))
    }
}

/// Whether the log from where the scan stopped (`rest`, which starts at byte `base` of the
/// file) looks like a write that stopped part way: a record header cut short, a record whose
/// payload runs past the end of the file, or a block of zeros (a page the file system
/// allocated but never wrote: after a power loss, an unsynced batch may keep its size with
/// holes in it). `kill -9` leaves a prefix of what was written; neither leaves changed bytes
/// without zeros.
fn torn(rest: &[u8], base: usize) -> bool {
    if rest.iter().all(|&b| b == 0) || unwritten_block(rest, base) {
        return true;
    }
    if rest[0] != MAGIC {
        return false;
    }
    let Some(header) = rest.get(..HEADER) else {
        return true; // a header cut short
    };
    let Some(kind) = Kind::from_byte(header[1]) else {
        return false;
    };
    let len = u32::from_le_bytes([header[2], header[3], header[4], header[5]]) as usize;
    if kind == Kind::Head && len != 40 {
        return false; // a head record is always 40 bytes of payload
    }
    // A payload cut short is torn; a whole record that failed its hash is not.
    rest.len() < HEADER + len
}

/// Whether a 512-byte block of the file (at a multiple of 512) within `rest`, which starts
/// at byte `base`, is all zeros, or the last, shorter one is: a hole a power loss left in an
/// unsynced write.
fn unwritten_block(rest: &[u8], base: usize) -> bool {
    const BLOCK: usize = 512;
    let mut at = base.div_ceil(BLOCK) * BLOCK - base;
    while at < rest.len() {
        let end = (at + BLOCK).min(rest.len());
        if rest[at..end].iter().all(|&b| b == 0) {
            return true;
        }
        at = end;
    }
    false
}

/// Where valid head records start at or after `from`: the first two found, at most.
fn heads_after(bytes: &[u8], from: usize) -> Vec<usize> {
    let mut found = Vec::new();
    let mut at = from;
    while let Some(p) = bytes
        .get(at..)
        .and_then(|b| b.iter().position(|&x| x == MAGIC))
    {
        let pos = at + p;
        if let Some((Kind::Head, ..)) = record_at(bytes, pos) {
            found.push(pos);
            if found.len() == 2 {
                break;
            }
        }
        at = pos + 1;
    }
    found
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
