//! AVX-512 byte-class masks (see [`super`]): one 64-byte compare straight into a mask
//! register per class, instead of two 32-byte compares and two mask moves. Used for the
//! indexing loops on CPUs with AVX-512BW and VBMI2, where the masks are a large part of the
//! work per block of a run of records or lines.

use super::avx2::clmul_prefix_xor;
use super::{CSV, JSON, Strided, Window, csv_class, json_class};

/// AVX-512BW masks, with every class. Only used from functions compiled with
/// `#[target_feature(enable = "avx512f,avx512bw,...")]` after [`super::avx512_available`].
pub(crate) struct Avx512Window;

/// How far ahead of the block being classified its bytes are prefetched (as the AVX2 loads).
const PREFETCH_AHEAD: usize = 4096;

impl Avx512Window {
    /// `data[pos..pos + 64]` as one vector, with a prefetch of the bytes 4 KiB ahead.
    #[inline(always)]
    fn load(data: &[u8], pos: usize) -> std::arch::x86_64::__m512i {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch, _mm512_loadu_si512};
        let bytes = &data[pos..pos + 64];
        if let Some(ahead) = data.get(pos + PREFETCH_AHEAD) {
            // SAFETY: a prefetch hint of an address inside `data`; it never faults.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(ahead).cast::<i8>()) };
        }
        // SAFETY: `bytes` holds 64 bytes, read unaligned; callers only reach this impl on
        // CPUs with AVX-512F and BW (checked at run time before the generic loop is entered
        // through a target-feature function).
        unsafe { _mm512_loadu_si512(bytes.as_ptr().cast()) }
    }

    /// The mask of the bytes of `v` equal to `b`.
    #[inline(always)]
    fn eq(v: std::arch::x86_64::__m512i, b: u8) -> u64 {
        use std::arch::x86_64::{_mm512_cmpeq_epi8_mask, _mm512_set1_epi8};
        // SAFETY: register-only AVX-512BW operations, on CPUs with it (see `load`).
        unsafe { _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b as i8)) }
    }

    /// The masks of the bytes of `v` that are not ASCII digits and that are not ASCII.
    #[inline(always)]
    fn digits_and_high(v: std::arch::x86_64::__m512i) -> (u64, u64) {
        use std::arch::x86_64::{
            _mm512_cmplt_epu8_mask, _mm512_movepi8_mask, _mm512_set1_epi8, _mm512_sub_epi8,
        };
        // SAFETY: register-only AVX-512BW operations, on CPUs with it (see `load`).
        unsafe {
            let digit = _mm512_cmplt_epu8_mask(
                _mm512_sub_epi8(v, _mm512_set1_epi8(b'0' as i8)),
                _mm512_set1_epi8(10),
            );
            (!digit, _mm512_movepi8_mask(v))
        }
    }
}

impl Avx512Window {
    /// [`Window::flatten`] with one byte compression (VBMI2) of the bit indices, widened
    /// eight at a time.
    #[inline(always)]
    fn flatten_bits(out: &mut [usize; 64], q: usize, bits: u64) -> usize {
        use std::arch::x86_64::{
            __m128i, _mm_loadl_epi64, _mm512_add_epi64, _mm512_cvtepu8_epi64,
            _mm512_maskz_compress_epi8, _mm512_set1_epi64, _mm512_storeu_si512,
        };
        const IOTA: [u8; 64] = {
            let mut b = [0u8; 64];
            let mut i = 0;
            while i < 64 {
                b[i] = i as u8;
                i += 1;
            }
            b
        };
        let n = bits.count_ones() as usize;
        let mut indices = [0u8; 64];
        // SAFETY: loads and stores of 64 bytes of `IOTA`, `indices` and `out` (whose slots
        // are 8 bytes: x86_64), 8 at a time within their bounds, on CPUs with AVX-512F, BW
        // and VBMI2 (see `avx512_available`).
        unsafe {
            let iota = std::arch::x86_64::_mm512_loadu_si512(IOTA.as_ptr().cast());
            let packed = _mm512_maskz_compress_epi8(bits, iota);
            _mm512_storeu_si512(indices.as_mut_ptr().cast(), packed);
            let base = _mm512_set1_epi64(q as i64);
            for (chunk, idx) in out
                .chunks_exact_mut(8)
                .zip(indices.chunks_exact(8))
                .take(n.div_ceil(8))
            {
                let wide = _mm512_cvtepu8_epi64(_mm_loadl_epi64(idx.as_ptr().cast::<__m128i>()));
                _mm512_storeu_si512(chunk.as_mut_ptr().cast(), _mm512_add_epi64(wide, base));
            }
        }
        n
    }
}

impl Window<CSV> for Avx512Window {
    const ENABLED: bool = true;

    #[inline(always)]
    fn flatten(out: &mut [usize; 64], q: usize, bits: u64) -> usize {
        Self::flatten_bits(out, q, bits)
    }

    #[inline(always)]
    fn block(data: &[u8], pos: usize, delim: u8) -> [u64; CSV] {
        let v = Self::load(data, pos);
        let (non_digit, high) = Self::digits_and_high(v);
        let mut m = [0u64; CSV];
        m[csv_class::DELIM] = Self::eq(v, delim);
        m[csv_class::NEWLINE] = Self::eq(v, b'\n');
        m[csv_class::QUOTE] = Self::eq(v, b'"');
        m[csv_class::NON_DIGIT] = non_digit;
        m[csv_class::HIGH] = high;
        m[csv_class::MINUS] = Self::eq(v, b'-');
        m[csv_class::DOT] = Self::eq(v, b'.');
        m[csv_class::CR] = Self::eq(v, b'\r');
        m
    }

    #[inline(always)]
    fn pdep(x: u64, mask: u64) -> u64 {
        // SAFETY: this impl is only used on CPUs with BMI2 (`avx512_available` checks it).
        unsafe { std::arch::x86_64::_pdep_u64(x, mask) }
    }
}

impl Window<JSON> for Avx512Window {
    const ENABLED: bool = true;

    #[inline(always)]
    fn flatten(out: &mut [usize; 64], q: usize, bits: u64) -> usize {
        Self::flatten_bits(out, q, bits)
    }

    #[inline(always)]
    fn inside(quotes: u64) -> u64 {
        clmul_prefix_xor(quotes)
    }

    #[inline(always)]
    fn expand_equals(block: &[u8; 64], stream: &[u8; 72], keep: u64) -> bool {
        use std::arch::x86_64::{
            _mm512_loadu_si512, _mm512_mask_cmpneq_epi8_mask, _mm512_maskz_expandloadu_epi8,
        };
        // SAFETY: reads of 64 bytes of `block` and of at most 64 bytes of `stream` (as many
        // as `keep` has bits), on CPUs with AVX-512F, BW and VBMI2 (`avx512_available`).
        unsafe {
            let want = _mm512_maskz_expandloadu_epi8(keep, stream.as_ptr().cast());
            let have = _mm512_loadu_si512(block.as_ptr().cast());
            _mm512_mask_cmpneq_epi8_mask(keep, have, want) == 0
        }
    }

    #[inline(always)]
    fn block(data: &[u8], pos: usize, _: u8) -> [u64; JSON] {
        let v = Self::load(data, pos);
        let (non_digit, high) = Self::digits_and_high(v);
        let mut m = [0u64; JSON];
        m[json_class::QUOTE] = Self::eq(v, b'"');
        m[json_class::BACKSLASH] = Self::eq(v, b'\\');
        m[json_class::COMMA] = Self::eq(v, b',');
        m[json_class::NON_DIGIT] = non_digit;
        m[json_class::HIGH] = high;
        m[json_class::CLOSE] = Self::eq(v, b'}');
        m[json_class::NEWLINE] = Self::eq(v, b'\n');
        m[json_class::COLON] = Self::eq(v, b':');
        m[json_class::MINUS] = Self::eq(v, b'-');
        m[json_class::DOT] = Self::eq(v, b'.');
        m
    }

    #[inline(always)]
    fn pdep(x: u64, mask: u64) -> u64 {
        <Self as Window<CSV>>::pdep(x, mask)
    }
}

/// The smallest and largest number key of the fields of `f` eight at a time (the
/// keys of `crate::text::numbers::number_key` with `frac` fraction digits, lane by lane),
/// `(i64::MAX, i64::MIN)` when no lane has one (see `crate::text::keys`). Every other non-empty field goes to
/// `fallback(s, e, no_key)`, in record order: `no_key` true when the lanes read its bytes and
/// found no key, false when they could not read it (the caller folds it one by one).
///
/// # Safety
/// The CPU must have AVX-512F, BW and CD; `(f.n - 1) * f.stride + f.col + 1 <
/// f.ends.len()`, and `f.ends.len()` fits an `i64`.
#[target_feature(enable = "avx512f,avx512bw,avx512cd")]
pub(crate) unsafe fn strided_key_bounds(
    data: &[u8],
    f: Strided<'_>,
    frac: u32,
    fallback: &mut impl FnMut(usize, usize, bool),
) -> (i64, i64) {
    use std::arch::x86_64::*;
    let Strided {
        ends,
        stride,
        col,
        n,
    } = f;
    let mut lo = _mm512_set1_epi64(i64::MAX);
    let mut hi = _mm512_set1_epi64(i64::MIN);
    let ones = _mm512_set1_epi64(1);
    let low_nibbles = _mm512_set1_epi64(0x0F0F_0F0F_0F0F_0F0F);
    let dots = _mm512_set1_epi64(0x2e2e_2e2e_2e2e_2e2e);
    let bytes_one = _mm512_set1_epi64(0x0101_0101_0101_0101);
    let high_bits = _mm512_set1_epi64(0x8080_8080_8080_8080u64 as i64);
    let minus = _mm512_set1_epi64(i64::from(b'-'));
    let byte = _mm512_set1_epi64(0xFF);
    let eight = _mm512_set1_epi64(8);
    let frac_v = _mm512_set1_epi64(i64::from(frac));
    // Reverses the bytes of each 64-bit lane.
    // Reverses the bytes of each 64-bit lane (`vpshufb` indexes within 128-bit lanes).
    let swap = _mm512_set_epi8(
        8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1,
        2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
        13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7,
    );
    let step = stride.wrapping_mul(8) as i64;
    let stride = stride as i64;
    let mut idx = _mm512_add_epi64(
        lanes_times(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), stride),
        _mm512_set1_epi64(col as i64),
    );
    let step_v = _mm512_set1_epi64(step);
    // Words are read whole from a field start `s` (and `s + 1` after a minus) at most
    // here (negative for data of fewer than 8 bytes: no word at all; signed compares).
    let word_limit = _mm512_set1_epi64(data.len() as i64 - 8);
    let ends_ptr = ends.as_ptr().cast::<i64>();
    let data_ptr = data.as_ptr().cast::<i64>();
    let mut s_lanes = [0u64; 8];
    let mut e_lanes = [0u64; 8];
    let groups = n / 8;
    for _ in 0..groups {
        // SAFETY: every index is at most `(n - 1) * stride + col + 1 < ends.len()`.
        let before = unsafe { _mm512_i64gather_epi64::<8>(idx, ends_ptr) };
        // SAFETY: the same indices plus one, still inside `ends`.
        let e = unsafe { _mm512_i64gather_epi64::<8>(_mm512_add_epi64(idx, ones), ends_ptr) };
        idx = _mm512_add_epi64(idx, step_v);
        let s = _mm512_add_epi64(before, ones);
        let active = _mm512_cmplt_epu64_mask(s, e);
        // Lanes whose word at `s` lies inside the data.
        let readable = active & _mm512_cmple_epi64_mask(s, word_limit);
        // SAFETY: the lanes read are those whose 8 bytes from `s` lie inside `data`.
        let w0 = unsafe {
            _mm512_mask_i64gather_epi64::<1>(_mm512_setzero_si512(), readable, s, data_ptr)
        };
        let neg = readable & _mm512_cmpeq_epi64_mask(_mm512_and_si512(w0, byte), minus);
        let body = _mm512_mask_add_epi64(s, neg, s, ones);
        let len = _mm512_sub_epi64(e, body);
        // After a minus the word moves down a byte; its top byte, past the word read, is
        // zero, so eight bytes after a minus take the scalar function (which reads a
        // word at `s + 1`), as do lanes whose word at `s + 1` would leave the data
        // (where the scalar function has no key).
        let readable = readable
            & !(neg
                & (_mm512_cmpeq_epi64_mask(len, eight)
                    | !_mm512_cmple_epi64_mask(body, word_limit)));
        let neg = neg & readable;
        let w = _mm512_mask_srli_epi64::<8>(w0, neg, w0);
        // 1 ..= 8 bytes after the sign.
        let sized = _mm512_cmple_epu64_mask(_mm512_sub_epi64(len, ones), _mm512_set1_epi64(7));
        // The first `.` byte of the word: 8 when there is none.
        let x = _mm512_xor_si512(w, dots);
        let zeros = _mm512_andnot_si512(x, _mm512_sub_epi64(x, bytes_one));
        let m = _mm512_and_si512(zeros, high_bits);
        let lowest = _mm512_and_si512(m, _mm512_sub_epi64(_mm512_setzero_si512(), m));
        let dot = _mm512_mask_blend_epi64(
            _mm512_test_epi64_mask(lowest, lowest),
            eight,
            _mm512_srli_epi64::<3>(_mm512_sub_epi64(
                _mm512_set1_epi64(63),
                _mm512_lzcnt_epi64(lowest),
            )),
        );
        let dotted = _mm512_cmplt_epu64_mask(dot, len);
        // The bytes after the dot move down over it.
        let below = _mm512_sub_epi64(_mm512_sllv_epi64(ones, _mm512_slli_epi64::<3>(dot)), ones);
        let moved = _mm512_or_si512(
            _mm512_and_si512(w, below),
            _mm512_andnot_si512(below, _mm512_srli_epi64::<8>(w)),
        );
        let w = _mm512_mask_blend_epi64(dotted, w, moved);
        let digits = _mm512_mask_sub_epi64(len, dotted, len, ones);
        let frac_digits = _mm512_maskz_sub_epi64(dotted, _mm512_sub_epi64(len, ones), dot);
        let keyed = readable
            & sized
            & _mm512_test_epi64_mask(digits, digits)
            & _mm512_cmple_epu64_mask(frac_digits, frac_v);
        let d = _mm512_srlv_epi64(
            _mm512_shuffle_epi8(_mm512_and_si512(w, low_nibbles), swap),
            _mm512_slli_epi64::<3>(_mm512_sub_epi64(eight, digits)),
        );
        let d = _mm512_and_si512(
            _mm512_or_si512(d, _mm512_srli_epi64::<4>(d)),
            _mm512_set1_epi64(0x00FF_00FF_00FF_00FF),
        );
        let d = _mm512_and_si512(
            _mm512_or_si512(d, _mm512_srli_epi64::<8>(d)),
            _mm512_set1_epi64(0x0000_FFFF_0000_FFFF),
        );
        let d = _mm512_and_si512(
            _mm512_or_si512(d, _mm512_srli_epi64::<16>(d)),
            _mm512_set1_epi64(0xFFFF_FFFF),
        );
        let key = _mm512_sllv_epi64(
            d,
            _mm512_slli_epi64::<2>(_mm512_sub_epi64(frac_v, frac_digits)),
        );
        // `2v` for `v >= 0`, `2v - 1` for `v <= -0`, as `number_key`.
        let n1 = _mm512_maskz_mov_epi64(neg, ones);
        let flipped = _mm512_mask_sub_epi64(key, neg, _mm512_setzero_si512(), key);
        let key = _mm512_sub_epi64(_mm512_slli_epi64::<1>(flipped), n1);
        lo = _mm512_mask_min_epi64(lo, keyed, lo, key);
        hi = _mm512_mask_max_epi64(hi, keyed, hi, key);
        // Fields without a key, and those the words could not read, in record order.
        let rest = active & !keyed;
        if rest != 0 {
            // SAFETY: 8 lanes of 64 bits into arrays of 8.
            unsafe {
                _mm512_storeu_si512(s_lanes.as_mut_ptr().cast(), s);
                _mm512_storeu_si512(e_lanes.as_mut_ptr().cast(), e);
            }
            for l in 0..8 {
                if rest & (1 << l) == 0 {
                    continue;
                }
                let (s, e) = (s_lanes[l] as usize, e_lanes[l] as usize);
                fallback(s, e, readable & (1 << l) != 0);
            }
        }
    }
    for r in groups * 8..n {
        let (s, e) = f.field(r);
        if s < e {
            fallback(s, e, false);
        }
    }
    (_mm512_reduce_min_epi64(lo), _mm512_reduce_max_epi64(hi))
}

/// `v * k` lane by lane for the small lane numbers of the first group (AVX-512DQ's
/// multiply is not among the features required).
#[inline(always)]
fn lanes_times(v: std::arch::x86_64::__m512i, k: i64) -> std::arch::x86_64::__m512i {
    use std::arch::x86_64::{_mm512_loadu_si512, _mm512_storeu_si512};
    let mut lanes = [0i64; 8];
    // SAFETY: 8 lanes of 64 bits into an array of 8.
    unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), v) };
    for l in &mut lanes {
        *l = l.wrapping_mul(k);
    }
    // SAFETY: an array of 8 lanes of 64 bits.
    unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::portable::flatten_portable;
    use crate::simd::{NoWindow, avx512_available, bytewise};

    #[test]
    fn vector_masks_equal_bytewise_masks() {
        if !avx512_available() {
            eprintln!("skipped: this CPU has no AVX-512BW");
            return;
        }
        let alphabet = b",;\n\"09/:-.a\xc3\xa9\x80\xff\t\\{}[] \r";
        let data = crate::testutil::byte_soup(0x0512_0512_0512_0513, 4096, alphabet);
        for pos in 0..data.len() - 64 {
            for delim in [b',', b'\t', b';'] {
                let want = bytewise::<CSV>(&data[pos..], delim);
                assert_eq!(
                    <Avx512Window as Window<CSV>>::block(&data, pos, delim),
                    want
                );
            }
            let want = bytewise::<JSON>(&data[pos..], 0);
            assert_eq!(<Avx512Window as Window<JSON>>::block(&data, pos, 0), want);
        }
    }

    #[test]
    fn flattened_bits_equal_the_portable_flattening() {
        let mut rng = crate::testutil::XorShift(0xf1a7);
        let mut cases = vec![0u64, u64::MAX, 1, 1 << 63, 0xFF, 0xFF00];
        cases.extend((0..2000).map(|_| rng.next() & rng.next()));
        for bits in cases {
            let q = rng.below(1 << 40);
            let mut want = [usize::MAX; 64];
            let n = flatten_portable(&mut want, q, bits);
            let expected: Vec<usize> = (0..64)
                .filter(|k| bits >> k & 1 == 1)
                .map(|k| q + k)
                .collect();
            assert_eq!(&want[..n], &expected[..]);
            if avx512_available() {
                let mut got = [usize::MAX; 64];
                assert_eq!(Avx512Window::flatten_bits(&mut got, q, bits), n);
                assert_eq!(&got[..n], &want[..n], "{bits:#x}");
            }
        }
    }

    #[test]
    fn expansion_equals_the_portable_expansion() {
        let block: [u8; 64] = std::array::from_fn(|i| b"ab"[i % 2]);
        let stream = [b'a'; 72];
        // Every `a` lane of the block kept: equal; a `b` lane too: not.
        let a_lanes = 0x5555_5555_5555_5555u64;
        assert!(<NoWindow as Window<JSON>>::expand_equals(
            &block, &stream, a_lanes
        ));
        assert!(!<NoWindow as Window<JSON>>::expand_equals(
            &block, &stream, 0b11
        ));
        if !avx512_available() {
            eprintln!("skipped: this CPU has no AVX-512BW and VBMI2");
            return;
        }
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let block: [u8; 64] = std::array::from_fn(|i| b"xyz"[(x >> (i % 60)) as usize % 3]);
            let keep = x.rotate_left(17) & x.rotate_left(29);
            // The kept bytes of the block, then bytes that must not matter.
            let mut stream = [b'q'; 72];
            let mut n = 0;
            for (i, &b) in block.iter().enumerate() {
                if keep >> i & 1 == 1 {
                    stream[n] = b;
                    n += 1;
                }
            }
            if x & 1 == 1 && n > 0 {
                stream[(x >> 8) as usize % n] = b'w';
            }
            let portable = <NoWindow as Window<JSON>>::expand_equals(&block, &stream, keep);
            let vector = <Avx512Window as Window<JSON>>::expand_equals(&block, &stream, keep);
            assert_eq!(vector, portable);
            assert_eq!(portable, x & 1 == 0 || n == 0);
        }
    }
}
