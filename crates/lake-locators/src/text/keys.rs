//! [`number_key`] bounds of a delimited column's values eight at a time (AVX-512): the values
//! of a run's column are fields between flattened value ends ([`Strided`]), and a wide CSV
//! spent about a third of its statistics on their keys one by one. The lanes are
//! [`crate::simd::avx512::strided_key_bounds`], behind the SIMD layer's detection; this
//! module picks them and folds the fields they leave one by one.
//!
//! Each lane computes exactly what [`number_key`] computes for its field; a lane whose word
//! cannot be read whole (the last bytes of the data) takes the scalar function, and a value
//! without a key goes to `slow` as in [`crate::text::infer`]'s `key_bounds`, in record order.
//! The tests compare it with the scalar fold on random fields; the fuzz checks compare the
//! AVX-512 loop, which uses it, with the portable one, which reads no runs.

pub(crate) use crate::simd::Strided;
use crate::text::numbers::number_key;

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
    if crate::simd::avx512_keys_available() {
        let mut scalar = (i64::MAX, i64::MIN);
        let mut fallback = |s: usize, e: usize, no_key: bool| {
            if no_key {
                slow(s, e);
            } else {
                one(data, s, e, frac, &mut scalar, slow);
            }
        };
        // SAFETY: the CPU has the features, checked above; the indices were checked above.
        let (lo, hi) =
            unsafe { crate::simd::avx512::strided_key_bounds(data, f, frac, &mut fallback) };
        return Some((lo.min(scalar.0), hi.max(scalar.1)));
    }
    let _ = (data, frac, slow);
    None
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
        return crate::simd::avx512_keys_available();
        #[cfg(not(target_arch = "x86_64"))]
        return false;
    }
}
