//! SSE2 byte-class masks of 16 and 64 bytes (SSE2 is part of every x86-64 CPU, so these need
//! no detection): the line feeds and quotes of a record skip's window
//! ([`crate::text::skip`]), and the string stops and digit runs of the nested JSON walk
//! (`crate::formats::json::fast`). Each is tested, through its caller, against the portable
//! scan it replaces.

use std::arch::x86_64::{
    __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8,
    _mm_or_si128, _mm_set1_epi8, _mm_sub_epi8,
};

/// Line feed and quote masks of `window`: bit `i` is byte `i`.
#[inline(always)]
pub(crate) fn newline_quote_masks(window: &[u8; 64]) -> (u64, u64) {
    let (mut nl, mut qt) = (0u64, 0u64);
    // SAFETY: SSE2 is part of x86-64; each load reads 16 bytes inside `window` (64 bytes),
    // unaligned loads allowed.
    unsafe {
        let lf = _mm_set1_epi8(b'\n' as i8);
        let quote = _mm_set1_epi8(b'"' as i8);
        for k in 0..4 {
            let v = _mm_loadu_si128(window.as_ptr().add(16 * k).cast::<__m128i>());
            let l = _mm_movemask_epi8(_mm_cmpeq_epi8(v, lf)) as u16;
            let q = _mm_movemask_epi8(_mm_cmpeq_epi8(v, quote)) as u16;
            nl |= u64::from(l) << (16 * k);
            qt |= u64::from(q) << (16 * k);
        }
    }
    (nl, qt)
}

/// The bytes of `bytes` that stop a JSON string scan: quotes, backslashes, control bytes
/// (below 0x20) and, unless `high_seen`, bytes above 0x7F; bit `i` is byte `i`.
#[inline(always)]
pub(crate) fn string_stops(bytes: &[u8; 16], high_seen: bool) -> u32 {
    // SAFETY: `bytes` is 16 bytes long and the load is unaligned; SSE2 is part of every
    // x86-64 CPU.
    unsafe {
        let v = _mm_loadu_si128(bytes.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let slash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        // Signed: bytes below 0x20 and bytes above 0x7F.
        let low = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        let hits = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, slash), low)) as u32;
        if high_seen {
            hits & !(_mm_movemask_epi8(v) as u32)
        } else {
            hits
        }
    }
}

/// The ASCII digits of `bytes`: bit `i` is byte `i`.
#[inline(always)]
pub(crate) fn digits(bytes: &[u8; 16]) -> u32 {
    // SAFETY: `bytes` is 16 bytes long and the load is unaligned; SSE2 is part of every
    // x86-64 CPU.
    unsafe {
        let v = _mm_loadu_si128(bytes.as_ptr().cast());
        let t = _mm_sub_epi8(v, _mm_set1_epi8(b'0' as i8));
        // A digit is a byte whose distance from '0' is at most 9 (unsigned).
        _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(9)), t)) as u32
    }
}
