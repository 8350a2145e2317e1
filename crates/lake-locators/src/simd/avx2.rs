//! AVX2 byte-class masks (see [`super`]): two 32-byte compares and two mask moves per class
//! of a 64-byte block, plus the PCLMULQDQ prefix XOR and the BMI2 `pdep` of the CPUs that
//! have AVX2. Compiled on x86_64 only; reached after [`super::avx2_available`].

use super::{CACHED_BLOCKS, CSV, JSON, Window};

/// How far ahead of the block being classified its bytes are prefetched.
const PREFETCH_AHEAD: usize = 64 * CACHED_BLOCKS;

/// [`inside_quotes`](super::portable::inside_quotes) as one carry-less multiplication by all ones (PCLMULQDQ): bit `i` of
/// the product is the XOR of the bits of `quotes` up to `i`.
#[inline(always)]
pub(crate) fn clmul_prefix_xor(quotes: u64) -> u64 {
    use std::arch::x86_64::{_mm_clmulepi64_si128, _mm_cvtsi128_si64, _mm_set_epi64x};
    // SAFETY: register-only PCLMULQDQ and SSE2 operations, only reached on CPUs that have
    // them (`avx2_available` checks PCLMULQDQ).
    unsafe {
        let product =
            _mm_clmulepi64_si128::<0>(_mm_set_epi64x(0, quotes as i64), _mm_set_epi64x(0, -1));
        _mm_cvtsi128_si64(product) as u64
    }
}

/// AVX2 masks with the classes runs of records read; `pdep` by BMI2 when `BMI2_PDEP`, else one
/// set bit of the mask at a time ([`pdep_portable`](super::portable::pdep_portable)). Only
/// used from functions compiled with `#[target_feature(enable = "avx2")]` after
/// [`super::avx2_available`].
pub(crate) struct Avx2RunWindow<const BMI2_PDEP: bool>;

/// [`Avx2RunWindow`] with BMI2's `pdep`.
pub(crate) type Avx2Window = Avx2RunWindow<true>;

/// [`Avx2RunWindow`] with the bit-loop `pdep`: for CPUs whose BMI2 `pdep` is microcoded (AMD
/// before Zen 3), where a field end costs a few instructions but a `pdep` dozens of cycles or
/// more.
pub(crate) type Avx2SoftWindow = Avx2RunWindow<false>;

/// The 64 bits of one per-byte test over both 32-byte halves of a block.
macro_rules! both {
    ($lo:ident, $hi:ident, $v:ident => $test:expr) => {{
        use std::arch::x86_64::_mm256_movemask_epi8;
        let l = {
            let $v = $lo;
            _mm256_movemask_epi8($test) as u32
        };
        let h = {
            let $v = $hi;
            _mm256_movemask_epi8($test) as u32
        };
        u64::from(l) | (u64::from(h) << 32)
    }};
}

impl Avx2Window {
    /// The two halves of `data[pos..pos + 64]`, with a prefetch of the bytes 4 KiB ahead.
    #[inline(always)]
    fn load(data: &[u8], pos: usize) -> (std::arch::x86_64::__m256i, std::arch::x86_64::__m256i) {
        use std::arch::x86_64::{__m256i, _MM_HINT_T0, _mm_prefetch, _mm256_loadu_si256};
        let bytes = &data[pos..pos + 64];
        // The hardware prefetcher stops at page boundaries; a software prefetch one cache
        // of blocks ahead keeps the stream of a memory-mapped file flowing.
        if let Some(ahead) = data.get(pos + PREFETCH_AHEAD) {
            // SAFETY: a prefetch hint of an address inside `data`; it never faults.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(ahead).cast::<i8>()) };
        }
        // SAFETY: `bytes` holds 64 bytes, read as two unaligned 32-byte vectors; callers only
        // reach this impl on CPUs with AVX2 (checked at run time before the generic loop is
        // entered through an `avx2` target-feature function).
        unsafe {
            (
                _mm256_loadu_si256(bytes.as_ptr().cast::<__m256i>()),
                _mm256_loadu_si256(bytes.as_ptr().add(32).cast::<__m256i>()),
            )
        }
    }
}

impl<const BMI2_PDEP: bool> Window<CSV> for Avx2RunWindow<BMI2_PDEP> {
    const ENABLED: bool = true;

    #[inline(always)]
    fn block(data: &[u8], pos: usize, delim: u8) -> [u64; CSV] {
        Avx2Window::csv_block::<true>(data, pos, delim)
    }

    #[inline(always)]
    fn inside(quotes: u64) -> u64 {
        clmul_prefix_xor(quotes)
    }

    #[inline(always)]
    fn pdep(x: u64, mask: u64) -> u64 {
        if BMI2_PDEP {
            // SAFETY: this impl is only used on CPUs with BMI2 (`avx2_available` checks it).
            unsafe { std::arch::x86_64::_pdep_u64(x, mask) }
        } else {
            super::portable::pdep_portable(x, mask)
        }
    }
}

/// AVX2 masks without the classes that only runs of records read (left empty: `-`, `.`,
/// `\r` of delimited text, `:`, `-`, `.` of JSON): for CPUs whose `pdep` is slow, which
/// read no runs.
pub(crate) struct Avx2LeanWindow;

impl Window<CSV> for Avx2LeanWindow {
    const ENABLED: bool = true;
    const RUNS: bool = false;

    #[inline(always)]
    fn block(data: &[u8], pos: usize, delim: u8) -> [u64; CSV] {
        Avx2Window::csv_block::<false>(data, pos, delim)
    }
}

impl Avx2Window {
    /// The delimited-text classes of `data[pos..pos + 64]`; the run classes only when `RUNS`.
    #[inline(always)]
    fn csv_block<const RUNS: bool>(data: &[u8], pos: usize, delim: u8) -> [u64; CSV] {
        use std::arch::x86_64::{
            _mm256_cmpeq_epi8, _mm256_min_epu8, _mm256_set1_epi8, _mm256_sub_epi8,
        };
        let (lo, hi) = Self::load(data, pos);
        // SAFETY: register-only AVX2 operations, on CPUs with AVX2 (see `load`).
        unsafe {
            let d = _mm256_set1_epi8(delim as i8);
            let n = _mm256_set1_epi8(b'\n' as i8);
            let q = _mm256_set1_epi8(b'"' as i8);
            let zero = _mm256_set1_epi8(b'0' as i8);
            let nine = _mm256_set1_epi8(9);
            let minus = _mm256_set1_epi8(b'-' as i8);
            let dot = _mm256_set1_epi8(b'.' as i8);
            let cr = _mm256_set1_epi8(b'\r' as i8);
            [
                both!(lo, hi, v => _mm256_cmpeq_epi8(v, d)),
                both!(lo, hi, v => _mm256_cmpeq_epi8(v, n)),
                both!(lo, hi, v => _mm256_cmpeq_epi8(v, q)),
                // A digit minus '0' is 0..=9, which an unsigned min with 9 leaves unchanged.
                !both!(lo, hi, v => {
                    let x = _mm256_sub_epi8(v, zero);
                    _mm256_cmpeq_epi8(_mm256_min_epu8(x, nine), x)
                }),
                both!(lo, hi, v => v),
                if RUNS {
                    both!(lo, hi, v => _mm256_cmpeq_epi8(v, minus))
                } else {
                    0
                },
                if RUNS {
                    both!(lo, hi, v => _mm256_cmpeq_epi8(v, dot))
                } else {
                    0
                },
                if RUNS {
                    both!(lo, hi, v => _mm256_cmpeq_epi8(v, cr))
                } else {
                    0
                },
            ]
        }
    }
}

/// Without BMI2's `pdep`, JSON lines take no runs: a template's skeleton is compared by eight
/// `pdep`s per block, which the bit loop made six times slower than the per-line path (flat
/// NDJSON on a Zen 1 EPYC).
impl<const BMI2_PDEP: bool> Window<JSON> for Avx2RunWindow<BMI2_PDEP> {
    const ENABLED: bool = true;
    const RUNS: bool = BMI2_PDEP;

    #[inline(always)]
    fn inside(quotes: u64) -> u64 {
        clmul_prefix_xor(quotes)
    }

    #[inline(always)]
    fn block(data: &[u8], pos: usize, _: u8) -> [u64; JSON] {
        Avx2Window::json_block::<BMI2_PDEP>(data, pos)
    }

    #[inline(always)]
    fn pdep(x: u64, mask: u64) -> u64 {
        <Self as Window<CSV>>::pdep(x, mask)
    }
}

impl Window<JSON> for Avx2LeanWindow {
    const ENABLED: bool = true;
    const RUNS: bool = false;

    #[inline(always)]
    fn inside(quotes: u64) -> u64 {
        clmul_prefix_xor(quotes)
    }

    #[inline(always)]
    fn block(data: &[u8], pos: usize, _: u8) -> [u64; JSON] {
        Avx2Window::json_block::<false>(data, pos)
    }
}

impl Avx2Window {
    /// The JSON classes of `data[pos..pos + 64]`; the run classes only when `RUNS`.
    #[inline(always)]
    fn json_block<const RUNS: bool>(data: &[u8], pos: usize) -> [u64; JSON] {
        use std::arch::x86_64::{
            _mm256_cmpeq_epi8, _mm256_min_epu8, _mm256_set1_epi8, _mm256_sub_epi8,
        };
        let (lo, hi) = Self::load(data, pos);
        // SAFETY: register-only AVX2 operations, on CPUs with AVX2 (see `load`).
        unsafe {
            let quote = _mm256_set1_epi8(b'"' as i8);
            let backslash = _mm256_set1_epi8(b'\\' as i8);
            let comma = _mm256_set1_epi8(b',' as i8);
            let close = _mm256_set1_epi8(b'}' as i8);
            let newline = _mm256_set1_epi8(b'\n' as i8);
            let zero = _mm256_set1_epi8(b'0' as i8);
            let nine = _mm256_set1_epi8(9);
            let colon = _mm256_set1_epi8(b':' as i8);
            let minus = _mm256_set1_epi8(b'-' as i8);
            let dot = _mm256_set1_epi8(b'.' as i8);
            [
                both!(lo, hi, v => _mm256_cmpeq_epi8(v, quote)),
                both!(lo, hi, v => _mm256_cmpeq_epi8(v, backslash)),
                both!(lo, hi, v => _mm256_cmpeq_epi8(v, comma)),
                !both!(lo, hi, v => {
                    let x = _mm256_sub_epi8(v, zero);
                    _mm256_cmpeq_epi8(_mm256_min_epu8(x, nine), x)
                }),
                both!(lo, hi, v => v),
                both!(lo, hi, v => _mm256_cmpeq_epi8(v, close)),
                both!(lo, hi, v => _mm256_cmpeq_epi8(v, newline)),
                if RUNS {
                    both!(lo, hi, v => _mm256_cmpeq_epi8(v, colon))
                } else {
                    0
                },
                if RUNS {
                    both!(lo, hi, v => _mm256_cmpeq_epi8(v, minus))
                } else {
                    0
                },
                if RUNS {
                    both!(lo, hi, v => _mm256_cmpeq_epi8(v, dot))
                } else {
                    0
                },
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::portable::{inside_quotes, pdep_portable};
    use crate::simd::{MaskCache, NoWindow, avx2_available, bytewise};

    fn check<const K: usize>(data: &[u8], delim: u8)
    where
        Avx2Window: Window<K>,
    {
        let mut cache = MaskCache::<K>::new();
        for pos in 0..data.len() - 64 {
            let want = bytewise::<K>(&data[pos..], delim);
            assert_eq!(Avx2Window::block(data, pos, delim), want, "at {pos}");
            assert_eq!(
                cache.window::<Avx2Window>(data, pos, delim),
                Some(want),
                "at {pos}"
            );
        }
        // Windows out of order and across refills agree too.
        for pos in (0..data.len() - 64).rev().step_by(37) {
            let want = bytewise::<K>(&data[pos..], delim);
            assert_eq!(
                cache.window::<Avx2Window>(data, pos, delim),
                Some(want),
                "at {pos}"
            );
        }
        assert_eq!(
            cache.window::<Avx2Window>(data, data.len() - 63, delim),
            None
        );
    }

    #[test]
    fn vector_masks_equal_bytewise_masks() {
        if std::arch::is_x86_feature_detected!("avx2") {
            let alphabet = b",;\n\"09/:-.a\xc3\xa9\x80\xff\t\\{}[] \r";
            let data = crate::testutil::byte_soup(0x1234_5678_9abc_def1, 4096, alphabet);
            for delim in [b',', b'\t', b';'] {
                check::<CSV>(&data, delim);
            }
            check::<JSON>(&data, 0);
        }
        let mut cache = MaskCache::<CSV>::new();
        assert_eq!(cache.window::<NoWindow>(&[0; 100], 0, b','), None);
    }

    #[test]
    fn prefix_xor_marks_string_insides() {
        let q = 0b1000_0100_0010_0001u64;
        assert_eq!(inside_quotes(q), 0b0111_1100_0001_1111);
        if avx2_available() {
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            for _ in 0..1000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                assert_eq!(clmul_prefix_xor(x), inside_quotes(x));
            }
        }
    }

    #[test]
    fn pdep_deposits_the_low_bits() {
        assert_eq!(pdep_portable(0b101, 0b1110_0000), 0b1010_0000);
        assert_eq!(pdep_portable(u64::MAX, 0), 0);
        assert_eq!(pdep_portable(1, 1 << 63), 1 << 63);
        if avx2_available() {
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            for _ in 0..1000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let mask = x.rotate_left(23) & x.rotate_left(41);
                let want = pdep_portable(x, mask);
                assert_eq!(<Avx2Window as Window<CSV>>::pdep(x, mask), want);
            }
        }
    }
}
