//! How submissions and outcomes are written for the wire between a replica and its
//! upstream (serde): an object id as its 64 hex digits, file contents as text when they are
//! UTF-8 and as hex otherwise, so that source code stays about its own size.
//! design: vcs.replica

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::object::ObjectId;

impl Serialize for ObjectId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.hex())
    }
}

impl<'de> Deserialize<'de> for ObjectId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ObjectId, D::Error> {
        let hex = String::deserialize(d)?;
        if hex.len() != 64 {
            return Err(D::Error::custom("an object id is 64 hex digits"));
        }
        ObjectId::from_hex(&hex).ok_or_else(|| D::Error::custom("an object id is 64 hex digits"))
    }
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Bytes {
    Text(String),
    Hex(String),
}

fn to_wire(b: &[u8]) -> Bytes {
    match std::str::from_utf8(b) {
        Ok(t) => Bytes::Text(t.to_owned()),
        Err(_) => Bytes::Hex(b.iter().map(|x| format!("{x:02x}")).collect()),
    }
}

fn from_wire(b: Bytes) -> Option<Vec<u8>> {
    match b {
        Bytes::Text(t) => Some(t.into_bytes()),
        Bytes::Hex(h) => (h.len() % 2 == 0)
            .then(|| {
                (0..h.len() / 2)
                    .map(|i| u8::from_str_radix(h.get(2 * i..2 * i + 2)?, 16).ok())
                    .collect()
            })
            .flatten(),
    }
}

/// `#[serde(with = "crate::wire::opt_bytes")]` for `Option<Vec<u8>>`.
pub(crate) mod opt_bytes {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(b: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        b.as_deref().map(to_wire).serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<u8>>, D::Error> {
        match Option::<Bytes>::deserialize(d)? {
            None => Ok(None),
            Some(b) => from_wire(b)
                .map(Some)
                .ok_or_else(|| D::Error::custom("bytes in hex must be pairs of hex digits")),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::object::ObjectId;
    use crate::{Change, Conflict, Outcome, Refusal, Submission};

    #[test]
    fn submissions_and_outcomes_travel_unchanged() {
        let s = Submission {
            base: ObjectId([9; 32]),
            changes: vec![
                Change {
                    path: "a.rs".into(),
                    expected: Some(ObjectId([1; 32])),
                    new: Some(b"fn main() {}\n".to_vec()),
                    executable: false,
                },
                Change {
                    path: "b.bin".into(),
                    expected: None,
                    new: Some(vec![0xff, 0, 7]),
                    executable: true,
                },
                Change {
                    path: "gone".into(),
                    expected: Some(ObjectId([2; 32])),
                    new: None,
                    executable: false,
                },
            ],
            message: "t\n\nwhy".into(),
            task: "t".into(),
            idempotency_key: "run/t/1".into(),
        };
        let json = serde_json::to_string(&s).expect("encodes");
        assert!(json.contains("fn main() {}"), "text stays text: {json}");
        assert_eq!(serde_json::from_str::<Submission>(&json).ok(), Some(s));
        for o in [
            Outcome::Committed {
                id: ObjectId([3; 32]),
                seq: 4,
                merged: vec!["a.rs".into()],
            },
            Outcome::Conflict(Conflict {
                path: "a.rs".into(),
                base: None,
                head: Some(b"x".to_vec()),
                submitted: Some(vec![0xfe]),
                head_intent: Some("other".into()),
                head_task: None,
                executable_change: Some(true),
            }),
            Outcome::Refused(Refusal::Megafile {
                path: "big".into(),
                lines: 700,
                budget: 600,
                already_flagged: false,
            }),
        ] {
            let json = serde_json::to_string(&o).expect("encodes");
            assert_eq!(serde_json::from_str::<Outcome>(&json).ok(), Some(o));
        }
        let bad = r#"{"base":"zz","changes":[],"message":"","task":"","idempotency_key":""}"#;
        assert!(serde_json::from_str::<Submission>(bad).is_err());
    }
}
