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
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(super) fn control_bytes(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const UP: u64 = 0x6060_6060_6060_6060;
    !(((x & LOW7) + UP) | x | LOW7)
}

/// The end of the JSON string opened at `open` (past its closing quote), whether it holds
/// escapes and whether it holds non-ASCII bytes; `None` when it never closes or holds a
/// control character outside an escape (which `serde_json` refuses). Sixteen bytes at a time
/// with SSE2 on x86-64, eight in integer words elsewhere. The two scans keep their own loops:
/// one loop over a window closure measured 8% slower on nested NDJSON.
#[inline]
pub(super) fn string_end(d: &[u8], open: usize) -> Option<(usize, bool, bool)> {
    #[cfg(target_arch = "x86_64")]
    {
        string_end_sse2(d, open)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        string_end_swar(d, open)
    }
}

/// [`string_end`] sixteen bytes at a time with SSE2 (part of every x86-64 CPU): one signed
/// compare finds control and non-ASCII bytes together. Tested against [`string_end_swar`].
#[cfg(target_arch = "x86_64")]
#[inline]
pub(super) fn string_end_sse2(d: &[u8], open: usize) -> Option<(usize, bool, bool)> {
    let mut pos = open + 1;
    let mut escaped = false;
    // Non-ASCII bytes stop the scan until the first one.
    let mut high = false;
    loop {
        if let Some(bytes) = d.get(pos..).and_then(<[u8]>::first_chunk::<16>) {
            let hits = crate::simd::sse2::string_stops(bytes, high);
            if hits == 0 {
                pos += 16;
                continue;
            }
            pos += hits.trailing_zeros() as usize;
        } else {
            while let Some(&c) = d.get(pos) {
                if c == b'"' || c == b'\\' || c < 0x20 || (c >= 0x80 && !high) {
                    break;
                }
                pos += 1;
            }
        }
        match d.get(pos)? {
            b'"' => return Some((pos + 1, escaped, high)),
            b'\\' => {
                escaped = true;
                pos += 2;
            }
            0x80.. => {
                high = true;
                pos += 1;
            }
            _ => return None,
        }
    }
}

/// [`string_end`] eight bytes at a time in plain integer words: the portable scan.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(super) fn string_end_swar(d: &[u8], open: usize) -> Option<(usize, bool, bool)> {
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

/// The position of the first byte at or after `p` that is not an ASCII digit (`d.len()` at
/// the end).
#[inline]
pub(super) fn digit_run(d: &[u8], p: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    if let Some(bytes) = d.get(p..).and_then(<[u8]>::first_chunk::<16>) {
        let digits = crate::simd::sse2::digits(bytes);
        let n = (!digits).trailing_zeros() as usize;
        if n < 16 {
            return p + n;
        }
        return digit_run_bytes(d, p + 16);
    }
    digit_run_bytes(d, p)
}

/// [`digit_run`] byte by byte: the portable scan.
#[inline]
pub(super) fn digit_run_bytes(d: &[u8], mut p: usize) -> usize {
    while let Some(b'0'..=b'9') = d.get(p) {
        p += 1;
    }
    p
}

/// The value of the decimal `int.frac` (digits only, no sign) when it has at most 15
/// digits in all: exactly what a correctly rounded parse gives, by one division of two
/// exactly represented numbers (Clinger's fast path); `None` for longer numbers.
#[inline]
pub(super) fn short_decimal(int: &[u8], frac: &[u8]) -> Option<f64> {
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    if int.len() + frac.len() > 15 {
        return None;
    }
    let m = int
        .iter()
        .chain(frac)
        .fold(0u64, |m, &c| m * 10 + u64::from(c.wrapping_sub(b'0')));
    // Below 10^15 < 2^53: exact as a double, as is the power of ten.
    Some(m as f64 / POW10[frac.len()])
}
