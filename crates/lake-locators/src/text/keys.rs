//! [`number_key`] bounds of a delimited column's values eight at a time (AVX-512): the values
//! of a run's column are fields between flattened value ends ([`Strided`]), and a wide CSV
//! spent about a third of its statistics on their keys one by one.
//!
//! Each lane computes exactly what [`number_key`] computes for its field; a lane whose word
//! cannot be read whole (the last bytes of the data) takes the scalar function, and a value
//! without a key goes to `slow` as in [`crate::text::infer`]'s `key_bounds`, in record order.
//! The tests compare it with the scalar fold on random fields; the fuzz checks compare the
//! AVX-512 loop, which uses it, with the portable one, which reads no runs.

use crate::text::numbers::number_key;

/// The fields of one column of a run of delimited records: field `r` (of `n`) is
/// `ends[r * stride + col] + 1 .. ends[r * stride + col + 1]` (the flattened value ends,
/// `ends[0]` the end before the first record, wrapping for a run at the data's start).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Strided<'a> {
    pub(crate) ends: &'a [usize],
    /// Values per record.
    pub(crate) stride: usize,
    pub(crate) col: usize,
    /// Records.
    pub(crate) n: usize,
}

impl Strided<'_> {
    /// Field `r`'s start and end.
    #[inline(always)]
    pub(crate) fn field(&self, r: usize) -> (usize, usize) {
        let i = r * self.stride + self.col;
        (self.ends[i].wrapping_add(1), self.ends[i + 1])
    }
}

/// The smallest and largest [`number_key`] (with `frac` fraction digits) of the fields of
/// `f` (empty ones left out), a field without a key passed to `slow`; `(i64::MAX, i64::MIN)`
/// when no field has a key. `None` when the AVX-512 loop is not the one in use (or `f` does
/// not fit its `ends`): the caller folds one by one.
pub(crate) fn strided_key_bounds(
    data: &[u8],
    f: Strided<'_>,
    frac: u32,
    slow: &mut impl FnMut(usize, usize),
) -> Option<(i64, i64)> {
    // The last field's end must be in `ends`; indices must fit the gathers' i64 lanes.
    let last =
        f.n.checked_sub(1)?
            .checked_mul(f.stride)?
            .checked_add(f.col)?
            .checked_add(1)?;
    if last >= f.ends.len() || i64::try_from(f.ends.len()).is_err() || f.col >= f.stride {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    if avx512_keys_available() {
        // SAFETY: the CPU has the features, checked above; the indices were checked above.
        return Some(unsafe { avx512::bounds(data, f, frac, slow) });
    }
    let _ = (data, frac, slow);
    None
}

/// True when the indexing loop is the AVX-512 one ([`crate::simd::pick_loop`], so that
/// `BAZAN_SIMD` picks the keys with the masks) and the CPU also has AVX-512CD, which
/// [`avx512::bounds`] is compiled with besides F and BW.
#[cfg(target_arch = "x86_64")]
fn avx512_keys_available() -> bool {
    crate::simd::pick_loop() == crate::simd::Loop::Avx512
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512cd")
}

/// The scalar fold of one field, as `key_bounds` folds it.
#[inline(always)]
fn one(
    data: &[u8],
    s: usize,
    e: usize,
    frac: u32,
    bounds: &mut (i64, i64),
    slow: &mut impl FnMut(usize, usize),
) {
    if s < e {
        match number_key(data, s, e, frac) {
            Some(k) => *bounds = (bounds.0.min(k), bounds.1.max(k)),
            None => slow(s, e),
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::{Strided, one};

    /// [`super::strided_key_bounds`] on AVX-512.
    ///
    /// # Safety
    /// The CPU must have AVX-512F, BW and CD; `(f.n - 1) * f.stride + f.col + 1 <
    /// f.ends.len()`, and `f.ends.len()` fits an `i64`.
    #[target_feature(enable = "avx512f,avx512bw,avx512cd")]
    pub(super) unsafe fn bounds(
        data: &[u8],
        f: Strided<'_>,
        frac: u32,
        slow: &mut impl FnMut(usize, usize),
    ) -> (i64, i64) {
        let Strided {
            ends,
            stride,
            col,
            n,
        } = f;
        let mut scalar = (i64::MAX, i64::MIN);
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
            8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0,
            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
            11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7,
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
            let below =
                _mm512_sub_epi64(_mm512_sllv_epi64(ones, _mm512_slli_epi64::<3>(dot)), ones);
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
                    if readable & (1 << l) != 0 {
                        slow(s, e);
                    } else {
                        one(data, s, e, frac, &mut scalar, slow);
                    }
                }
            }
        }
        for r in groups * 8..n {
            let (s, e) = f.field(r);
            one(data, s, e, frac, &mut scalar, slow);
        }
        let lo = _mm512_reduce_min_epi64(lo).min(scalar.0);
        let hi = _mm512_reduce_max_epi64(hi).max(scalar.1);
        (lo, hi)
    }

    /// `v * k` lane by lane for the small lane numbers of the first group (AVX-512DQ's
    /// multiply is not among the features required).
    #[inline(always)]
    fn lanes_times(v: __m512i, k: i64) -> __m512i {
        let mut lanes = [0i64; 8];
        // SAFETY: 8 lanes of 64 bits into an array of 8.
        unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), v) };
        for l in &mut lanes {
            *l = l.wrapping_mul(k);
        }
        // SAFETY: an array of 8 lanes of 64 bits.
        unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::XorShift;

    /// The scalar fold of the same fields, as `key_bounds` folds them.
    fn scalar(data: &[u8], f: Strided<'_>, frac: u32) -> ((i64, i64), Vec<(usize, usize)>) {
        let mut b = (i64::MAX, i64::MIN);
        let mut slowed = Vec::new();
        for r in 0..f.n {
            let (s, e) = f.field(r);
            one(data, s, e, frac, &mut b, &mut |s, e| slowed.push((s, e)));
        }
        (b, slowed)
    }

    /// Random fields of numbers, near-numbers and words (signs, dots, long digit runs, empty
    /// fields, a field at the very end): the lanes give the scalar fold's bounds and send the
    /// same fields to `slow`, in the same order.
    #[test]
    fn lanes_equal_the_scalar_fold() {
        let mut rng = XorShift(0x6b65_7973_6c61_6e65);
        let pieces: &[&str] = &[
            "",
            "0",
            "-0",
            "7",
            "-7",
            "12345678",
            "-12345678",
            "123456789",
            "1.5",
            "-1.5",
            "0.0000001",
            "-.5",
            ".5",
            "5.",
            "-",
            ".",
            "-.",
            "1.2.3",
            "99999999.",
            "abc",
            "1234.5678",
            "-9999.999",
            "00012",
            "1e5",
        ];
        for round in 0..300 {
            let stride = 1 + rng.below(9);
            let col = rng.below(stride);
            let rows = rng.below(40);
            let mut text = String::new();
            let mut ends = vec![usize::MAX];
            for _ in 0..rows {
                for c in 0..stride {
                    let p = if rng.below(4) == 0 {
                        // A random run of digits, signs and dots.
                        let len = rng.below(12);
                        (0..len)
                            .map(|_| b"0123456789-.x"[rng.below(13)] as char)
                            .collect::<String>()
                    } else {
                        pieces[rng.below(pieces.len())].to_string()
                    };
                    text.push_str(&p);
                    ends.push(text.len());
                    text.push(if c + 1 == stride { '\n' } else { ',' });
                }
            }
            // The last record's line feed dropped on some rounds: words near the end.
            if round % 3 == 0 {
                text.pop();
            }
            let data = text.as_bytes();
            let f = Strided {
                ends: &ends,
                stride,
                col,
                n: rows,
            };
            for frac in [0, 3, crate::text::numbers::KEY_FRAC] {
                let want = scalar(data, f, frac);
                let mut slowed = Vec::new();
                let got = strided_key_bounds(data, f, frac, &mut |s, e| slowed.push((s, e)));
                match got {
                    Some(b) => assert_eq!((b, slowed), want, "{text:?} col {col} frac {frac}"),
                    None => assert!(
                        rows == 0 || !avx512_available_here(),
                        "no lanes for {rows} rows"
                    ),
                }
            }
        }
    }

    fn avx512_available_here() -> bool {
        #[cfg(target_arch = "x86_64")]
        return avx512_keys_available();
        #[cfg(not(target_arch = "x86_64"))]
        return false;
    }
}
