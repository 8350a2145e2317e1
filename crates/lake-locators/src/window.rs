//! Byte-class bitmasks of a 64-byte window of a row-format file, one bit per byte: where the
//! delimiters, line feeds and quotes are, which bytes are not ASCII digits and which are not
//! ASCII at all. The delimited indexer finds a whole record's fields and classifies its
//! numbers from these masks with a few bit operations per field, instead of reading each
//! field again.
//!
//! The masks come from a [`Window`] implementation chosen once per file: AVX2 where the CPU
//! has it (two 32-byte compares per class), or [`NoWindow`], which yields none so that the
//! caller keeps its portable word-at-a-time path.

/// The byte classes of `data[pos..pos + 64]`; bit k stands for byte `pos + k`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Masks {
    /// The delimiter byte.
    pub(crate) delim: u64,
    /// `\n`.
    pub(crate) newline: u64,
    /// `"`.
    pub(crate) quote: u64,
    /// Every byte other than `0`–`9`.
    pub(crate) non_digit: u64,
    /// Bytes with the high bit set (not ASCII).
    pub(crate) high: u64,
}

impl Masks {
    /// The masks computed one byte at a time: the reference the vector versions are tested
    /// against.
    #[cfg(test)]
    pub(crate) fn bytewise(window: &[u8], delim: u8) -> Masks {
        let mut m = Masks {
            delim: 0,
            newline: 0,
            quote: 0,
            non_digit: 0,
            high: 0,
        };
        for (k, &b) in window.iter().take(64).enumerate() {
            let bit = 1u64 << k;
            m.delim |= if b == delim { bit } else { 0 };
            m.newline |= if b == b'\n' { bit } else { 0 };
            m.quote |= if b == b'"' { bit } else { 0 };
            m.non_digit |= if b.is_ascii_digit() { 0 } else { bit };
            m.high |= if b >= 0x80 { bit } else { 0 };
        }
        m
    }
}

/// A way to compute the [`Masks`] of 64 bytes; the indexing loop is generic over it so
/// that the vector version compiles into a loop of its own with the CPU feature enabled.
pub(crate) trait Window {
    /// False for [`NoWindow`], which computes nothing.
    const ENABLED: bool;

    /// The masks of `data[pos..pos + 64]`, which must be in bounds.
    fn block(data: &[u8], pos: usize, delim: u8) -> Masks;
}

/// Computes no masks: the caller takes its portable path for every record.
pub(crate) struct NoWindow;

impl Window for NoWindow {
    const ENABLED: bool = false;

    #[inline(always)]
    fn block(_: &[u8], _: usize, _: u8) -> Masks {
        Masks::default()
    }
}

/// Blocks of masks computed ahead in one tight loop.
const CACHED_BLOCKS: usize = 64;

/// The masks of up to [`CACHED_BLOCKS`] consecutive 64-byte blocks from `base`, computed in
/// one pass ahead of the record loop. Computing a window's masks at each record start would
/// chain every load to the previous record's line end; blocks at fixed addresses let the
/// loads run ahead, and a window at any position is two blocks shifted together.
pub(crate) struct MaskCache {
    base: usize,
    blocks: usize,
    delim: [u64; CACHED_BLOCKS],
    newline: [u64; CACHED_BLOCKS],
    quote: [u64; CACHED_BLOCKS],
    non_digit: [u64; CACHED_BLOCKS],
    high: [u64; CACHED_BLOCKS],
}

impl MaskCache {
    /// An empty cache.
    pub(crate) fn new() -> Self {
        MaskCache {
            base: 0,
            blocks: 0,
            delim: [0; CACHED_BLOCKS],
            newline: [0; CACHED_BLOCKS],
            quote: [0; CACHED_BLOCKS],
            non_digit: [0; CACHED_BLOCKS],
            high: [0; CACHED_BLOCKS],
        }
    }

    /// The masks of the 64 bytes at `pos`, or `None` when fewer than 64 bytes remain or `W`
    /// computes none.
    #[inline(always)]
    pub(crate) fn window<W: Window>(
        &mut self,
        data: &[u8],
        pos: usize,
        delim: u8,
    ) -> Option<Masks> {
        if !W::ENABLED {
            return None;
        }
        let mut off = pos.wrapping_sub(self.base);
        if pos < self.base || off + 64 > self.blocks * 64 {
            self.refill::<W>(data, pos, delim);
            if self.blocks == 0 {
                return None;
            }
            off = 0;
        }
        let (k, o) = (off / 64, (off % 64) as u32);
        if o == 0 {
            return Some(Masks {
                delim: self.delim[k],
                newline: self.newline[k],
                quote: self.quote[k],
                non_digit: self.non_digit[k],
                high: self.high[k],
            });
        }
        // `off + 64 <= blocks * 64` with `o > 0` puts block `k + 1` in the cache.
        let join = |m: &[u64; CACHED_BLOCKS]| (m[k] >> o) | (m[k + 1] << (64 - o));
        Some(Masks {
            delim: join(&self.delim),
            newline: join(&self.newline),
            quote: join(&self.quote),
            non_digit: join(&self.non_digit),
            high: join(&self.high),
        })
    }

    #[inline(always)]
    fn refill<W: Window>(&mut self, data: &[u8], pos: usize, delim: u8) {
        let blocks = (data.len().saturating_sub(pos) / 64).min(CACHED_BLOCKS);
        self.base = pos;
        self.blocks = blocks;
        for b in 0..blocks {
            let m = W::block(data, pos + 64 * b, delim);
            self.delim[b] = m.delim;
            self.newline[b] = m.newline;
            self.quote[b] = m.quote;
            self.non_digit[b] = m.non_digit;
            self.high[b] = m.high;
        }
    }
}

/// AVX2 masks. Only used from functions compiled with `#[target_feature(enable = "avx2")]`
/// after `is_x86_feature_detected!("avx2")`.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Avx2Window;

#[cfg(target_arch = "x86_64")]
impl Window for Avx2Window {
    const ENABLED: bool = true;

    #[inline(always)]
    fn block(data: &[u8], pos: usize, delim: u8) -> Masks {
        use std::arch::x86_64::{
            __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_min_epu8, _mm256_movemask_epi8,
            _mm256_set1_epi8, _mm256_sub_epi8,
        };
        let bytes = &data[pos..pos + 64];
        // SAFETY: `bytes` holds 64 bytes, read as two unaligned 32-byte vectors; callers only
        // reach this impl on CPUs with AVX2 (checked at run time before the generic loop is
        // entered through an `avx2` target-feature function).
        unsafe {
            let lo = _mm256_loadu_si256(bytes.as_ptr().cast::<__m256i>());
            let hi = _mm256_loadu_si256(bytes.as_ptr().add(32).cast::<__m256i>());
            // The 64 bits of one per-byte test over both halves.
            macro_rules! both {
                ($v:ident => $test:expr) => {{
                    let l = {
                        let $v = lo;
                        _mm256_movemask_epi8($test) as u32
                    };
                    let h = {
                        let $v = hi;
                        _mm256_movemask_epi8($test) as u32
                    };
                    u64::from(l) | (u64::from(h) << 32)
                }};
            }
            let d = _mm256_set1_epi8(delim as i8);
            let n = _mm256_set1_epi8(b'\n' as i8);
            let q = _mm256_set1_epi8(b'"' as i8);
            let zero = _mm256_set1_epi8(b'0' as i8);
            let nine = _mm256_set1_epi8(9);
            Masks {
                delim: both!(v => _mm256_cmpeq_epi8(v, d)),
                newline: both!(v => _mm256_cmpeq_epi8(v, n)),
                quote: both!(v => _mm256_cmpeq_epi8(v, q)),
                // A digit minus '0' is 0..=9, which an unsigned min with 9 leaves unchanged.
                non_digit: !both!(v => {
                    let x = _mm256_sub_epi8(v, zero);
                    _mm256_cmpeq_epi8(_mm256_min_epu8(x, nine), x)
                }),
                high: both!(v => v),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_masks_equal_bytewise_masks() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            let mut x: u64 = 0x1234_5678_9abc_def1;
            let alphabet = b",;\n\"09/:-.a\xc3\xa9\x80\xff\t";
            let data: Vec<u8> = (0..4096)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    alphabet[(x % alphabet.len() as u64) as usize]
                })
                .collect();
            for delim in [b',', b'\t', b';'] {
                let mut cache = MaskCache::new();
                for pos in 0..data.len() - 64 {
                    let want = Masks::bytewise(&data[pos..], delim);
                    assert_eq!(Avx2Window::block(&data, pos, delim), want, "at {pos}");
                    assert_eq!(
                        cache.window::<Avx2Window>(&data, pos, delim),
                        Some(want),
                        "at {pos}"
                    );
                }
                // Windows out of order and across refills agree too.
                for pos in (0..data.len() - 64).rev().step_by(37) {
                    let want = Masks::bytewise(&data[pos..], delim);
                    assert_eq!(
                        cache.window::<Avx2Window>(&data, pos, delim),
                        Some(want),
                        "at {pos}"
                    );
                }
                assert_eq!(
                    cache.window::<Avx2Window>(&data, data.len() - 63, delim),
                    None
                );
            }
        }
        let mut cache = MaskCache::new();
        assert_eq!(cache.window::<NoWindow>(&[0; 100], 0, b','), None);
    }
}
