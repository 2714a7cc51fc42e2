//! Content fingerprints: a blake3 digest, printed as hex.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A 32-byte content digest. The front end computes it with blake3 over normalised content;
/// this crate only stores and prints it.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fingerprint(pub [u8; 32]);

impl Fingerprint {
    /// The first `n` hex digits (at most 64).
    pub fn short(&self, n: usize) -> String {
        let mut s = self.to_string();
        s.truncate(n.min(64));
        s
    }
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl std::fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Fingerprint({})", self.short(16))
    }
}

impl Serialize for Fingerprint {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Fingerprint {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let mut out = [0u8; 32];
        if s.len() != 64 {
            return Err(serde::de::Error::custom("a fingerprint is 64 hex digits"));
        }
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * i..2 * i + 2], 16)
                .map_err(|_| serde::de::Error::custom("a fingerprint is 64 hex digits"))?;
        }
        Ok(Fingerprint(out))
    }
}
