//! Byte scans eight bytes at a time (SWAR), for the passes that touch every byte of prose.
//!
//! No `unsafe`: chunks are read with `u64::from_le_bytes`, so byte `i` of a chunk sits in
//! bits `8i..8i+8`.

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// 0x80 in every byte of `x` that equals `b`, 0 elsewhere (exact, no false positives).
#[inline]
fn eq_mask(x: u64, b: u8) -> u64 {
    let y = x ^ (LO * u64::from(b));
    !(((y & !HI).wrapping_add(!HI)) | y | !HI)
}

/// Non-zero when some byte of `x` is below 0x20 (a control character: tab, line break…).
#[inline]
fn has_control(x: u64) -> bool {
    x.wrapping_sub(LO * 0x20) & !x & HI != 0
}

fn chunk(bytes: &[u8]) -> u64 {
    let mut buf = [0u8; 8];
    buf.copy_from_slice(bytes);
    u64::from_le_bytes(buf)
}

/// Whether `s` is already white-space normal: no control characters, no two spaces in a
/// row, and no space at either end.
pub(crate) fn is_normal(s: &str) -> bool {
    let bytes = s.as_bytes();
    if bytes.first() == Some(&b' ') || bytes.last() == Some(&b' ') {
        return false;
    }
    let mut prev_space = false;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let x = chunk(c);
        if has_control(x) {
            return false;
        }
        let spaces = eq_mask(x, b' ');
        if spaces & (spaces >> 8) != 0 || (prev_space && spaces & 0x80 != 0) {
            return false;
        }
        prev_space = spaces >> 63 != 0;
    }
    for &b in chunks.remainder() {
        if b < 0x20 || (prev_space && b == b' ') {
            return false;
        }
        prev_space = b == b' ';
    }
    true
}

/// The offsets of every byte of `bytes[from..]` equal to one of `targets` (at most four),
/// in order, passed to `f` until it returns `false`.
pub(crate) fn for_each_byte_of(bytes: &[u8], targets: &[u8], mut f: impl FnMut(usize) -> bool) {
    let mut base = 0;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let x = chunk(c);
        let mut m = targets.iter().fold(0, |m, &t| m | eq_mask(x, t));
        while m != 0 {
            let i = base + (m.trailing_zeros() / 8) as usize;
            if !f(i) {
                return;
            }
            m &= m - 1;
        }
        base += 8;
    }
    for (i, b) in chunks.remainder().iter().enumerate() {
        if targets.contains(b) && !f(base + i) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq_mask_is_exact() {
        for b in 0..=255u8 {
            let bytes = [b, 0x20, b.wrapping_add(1), 0x80, 0xff, 0x00, b, 0x1f];
            let m = eq_mask(u64::from_le_bytes(bytes), b);
            for (i, &x) in bytes.iter().enumerate() {
                assert_eq!(m >> (8 * i) & 0x80 != 0, x == b, "byte {b:#x} at {i}");
            }
        }
    }

    #[test]
    fn normal_text() {
        assert!(is_normal("a b c, déjà vu. The server MUST reply."));
        assert!(is_normal(""));
        for bad in [
            " a",
            "a ",
            "a  b",
            "a\nb",
            "a\tb",
            "12345678  x",
            "1234567  x",
            "1234567 \u{a0}",
        ] {
            let expect_normal = bad == "1234567 \u{a0}";
            assert_eq!(is_normal(bad), expect_normal, "{bad:?}");
        }
    }

    #[test]
    fn finds_every_target_in_order() {
        let text = b"One. Two! Three? Four.\n\nFive";
        let mut seen = Vec::new();
        for_each_byte_of(text, b".!?\n", |i| {
            seen.push(i);
            true
        });
        let expect: Vec<usize> = text
            .iter()
            .enumerate()
            .filter(|(_, b)| b".!?\n".contains(b))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(seen, expect);
    }
}
