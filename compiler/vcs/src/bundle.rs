//! A bundle: the objects a replica lacks to reach a head, with the head, its position and
//! the megafile guard's flags. It travels between `specc serve` and its workers; each
//! object is named again by its content on arrival, so a damaged bundle cannot put a wrong
//! object under a right name.
//! design: vcs.replica

use crate::object::{Kind, ObjectId};

/// What a replica needs to move its head to `head`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bundle {
    pub head: ObjectId,
    pub seq: u64,
    pub flagged: Vec<String>,
    /// Blobs, trees and commits, in no particular order.
    pub objects: Vec<(Kind, Vec<u8>)>,
}

const MAGIC: &[u8; 4] = b"SPB1";

impl Bundle {
    /// `SPB1`, the head, seq (u64 LE), the flags (u32 count, each u32 length and bytes),
    /// the objects (u64 count, each kind u8, u64 length and payload).
    pub fn encode(&self) -> Vec<u8> {
        let size: usize = self.objects.iter().map(|(_, p)| p.len() + 9).sum();
        let mut out = Vec::with_capacity(64 + size);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&self.head.0);
        out.extend_from_slice(&self.seq.to_le_bytes());
        out.extend_from_slice(&(self.flagged.len() as u32).to_le_bytes());
        for f in &self.flagged {
            out.extend_from_slice(&(f.len() as u32).to_le_bytes());
            out.extend_from_slice(f.as_bytes());
        }
        out.extend_from_slice(&(self.objects.len() as u64).to_le_bytes());
        for (kind, payload) in &self.objects {
            out.push(*kind as u8);
            out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
            out.extend_from_slice(payload);
        }
        out
    }

    /// `None` for anything that is not a whole bundle of blobs, trees and commits.
    pub fn decode(mut p: &[u8]) -> Option<Bundle> {
        fn take<'a>(p: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
            let (head, rest) = (p.get(..n)?, p.get(n..)?);
            *p = rest;
            Some(head)
        }
        fn u32_(p: &mut &[u8]) -> Option<usize> {
            Some(u32::from_le_bytes(take(p, 4)?.try_into().ok()?) as usize)
        }
        fn u64_(p: &mut &[u8]) -> Option<u64> {
            Some(u64::from_le_bytes(take(p, 8)?.try_into().ok()?))
        }
        if take(&mut p, 4)? != MAGIC {
            return None;
        }
        let head = ObjectId(take(&mut p, 32)?.try_into().ok()?);
        let seq = u64_(&mut p)?;
        let mut flagged = Vec::new();
        for _ in 0..u32_(&mut p)? {
            let n = u32_(&mut p)?;
            flagged.push(std::str::from_utf8(take(&mut p, n)?).ok()?.to_owned());
        }
        let count = u64_(&mut p)?;
        let mut objects = Vec::new();
        for _ in 0..count {
            let kind = Kind::from_byte(take(&mut p, 1)?[0])?;
            if !matches!(kind, Kind::Blob | Kind::Tree | Kind::Commit) {
                return None;
            }
            let n = usize::try_from(u64_(&mut p)?).ok()?;
            objects.push((kind, take(&mut p, n)?.to_vec()));
        }
        p.is_empty().then_some(Bundle {
            head,
            seq,
            flagged,
            objects,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Bundle, Kind, ObjectId};

    #[test]
    fn a_bundle_decodes_to_itself_and_a_damaged_one_to_nothing() {
        let b = Bundle {
            head: ObjectId([7; 32]),
            seq: 3,
            flagged: vec!["src/big.rs".to_owned()],
            objects: vec![(Kind::Blob, b"hello\n".to_vec()), (Kind::Tree, Vec::new())],
        };
        let bytes = b.encode();
        assert_eq!(Bundle::decode(&bytes), Some(b));
        for cut in [0, 3, 10, bytes.len() - 1] {
            assert_eq!(Bundle::decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert_eq!(Bundle::decode(&extra), None, "trailing bytes");
        let mut head_record = bytes;
        let at = head_record.len() - 6 - 9 - 9; // the first object's kind byte
        head_record[at] = Kind::Head as u8;
        assert_eq!(
            Bundle::decode(&head_record),
            None,
            "only blobs, trees and commits"
        );
    }
}
