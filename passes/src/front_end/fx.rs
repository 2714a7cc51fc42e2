//! The Fx hash (rustc's), for the front end's small string-keyed maps.

use std::hash::BuildHasherDefault;

pub(crate) type Fx = BuildHasherDefault<FxHasher>;

/// The Fx hash (rustc's): the id and tag maps hash short strings, where SipHash's setup
/// costs more than the hashing. No HashDoS concern: the keys come from the user's own spec.
#[derive(Default)]
pub(crate) struct FxHasher(u64);

impl std::hash::Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
