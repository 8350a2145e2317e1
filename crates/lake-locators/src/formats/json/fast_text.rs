//! The string scanning of the byte walk of [`super`]: string ends eight bytes at a time
//! (quotes, backslashes, control and non-ASCII bytes found in the same words) and the
//! escapes `serde_json` accepts in a UTF-8 string.

use crate::text::scan::zero_bytes;

#[inline]
fn is_hex(b: u8) -> bool {
    b.is_ascii_hexdigit()
}

/// The value of the 4 hex digits at `b[i..]`.
fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let h = b.get(i..i + 4)?;
    if !h.iter().all(|&c| is_hex(c)) {
        return None;
    }
    u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
}

/// True when the inside of a JSON string holding escapes is one `serde_json` reads as a
/// UTF-8 string: known escapes, paired surrogates, no control character.
pub(super) fn valid_escaped(b: &[u8]) -> bool {
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            0..0x20 => return false,
            b'\\' => match b.get(i + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                Some(b'u') => {
                    let Some(n) = hex4(b, i + 2) else {
                        return false;
                    };
                    i += 6;
                    if (0xDC00..=0xDFFF).contains(&n) {
                        return false;
                    }
                    if (0xD800..=0xDBFF).contains(&n) {
                        if b.get(i..i + 2) != Some(b"\\u") {
                            return false;
                        }
                        match hex4(b, i + 2) {
                            Some(n2) if (0xDC00..=0xDFFF).contains(&n2) => i += 6,
                            _ => return false,
                        }
                    }
                }
                _ => return false,
            },
            _ => i += 1,
        }
    }
    true
}

/// Marks with its high bit every byte of `x` below 0x20 (exactly).
#[inline(always)]
pub(super) fn control_bytes(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const UP: u64 = 0x6060_6060_6060_6060;
    !(((x & LOW7) + UP) | x | LOW7)
}

/// The end of the JSON string opened at `open` (past its closing quote), whether it holds
/// escapes and whether it holds non-ASCII bytes; `None` when it never closes or holds a
/// control character outside an escape (which `serde_json` refuses). Eight bytes at a time.
#[inline]
pub(super) fn string_end(d: &[u8], open: usize) -> Option<(usize, bool, bool)> {
    const QUOTES: u64 = u64::from_ne_bytes([b'"'; 8]);
    const SLASHES: u64 = u64::from_ne_bytes([b'\\'; 8]);
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut pos = open + 1;
    let mut escaped = false;
    // High bytes are looked for until the first one.
    let mut high_mask = HIGH;
    loop {
        if let Some(bytes) = d.get(pos..pos + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(bytes);
            let w = u64::from_le_bytes(word);
            let hits = zero_bytes(w ^ QUOTES)
                | zero_bytes(w ^ SLASHES)
                | control_bytes(w)
                | (w & high_mask);
            if hits == 0 {
                pos += 8;
                continue;
            }
            pos += (hits.trailing_zeros() / 8) as usize;
        } else {
            while let Some(&c) = d.get(pos) {
                if c == b'"' || c == b'\\' || c < 0x20 || (c >= 0x80 && high_mask != 0) {
                    break;
                }
                pos += 1;
            }
        }
        match d.get(pos)? {
            b'"' => return Some((pos + 1, escaped, high_mask == 0)),
            b'\\' => {
                // A backslash escapes the next byte (checked by `valid_escaped`).
                escaped = true;
                pos += 2;
            }
            0x80.. => {
                high_mask = 0;
                pos += 1;
            }
            _ => return None,
        }
    }
}
