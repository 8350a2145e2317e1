//! The portable window paths, for every CPU: [`NoWindow`] (no masks: the callers' word-at-a-
//! time path), the one-bit-at-a-time `pdep`, the shift-and-XOR prefix XOR and the bit-scan
//! flattening that the [`Window`] defaults use, and (for tests) `BytewiseWindow`, the masks
//! computed one byte at a time: the reference every vector path is tested against.

#[cfg(test)]
use super::CSV;
use super::Window;

/// The class masks of up to 64 bytes computed one byte at a time: the reference the vector
/// versions are tested against.
#[cfg(test)]
pub(crate) fn bytewise<const K: usize>(window: &[u8], delim: u8) -> [u64; K] {
    let mut m = [0u64; K];
    for (k, &b) in window.iter().take(64).enumerate() {
        let classes = if K == CSV {
            vec![
                b == delim,
                b == b'\n',
                b == b'"',
                !b.is_ascii_digit(),
                b >= 0x80,
                b == b'-',
                b == b'.',
                b == b'\r',
            ]
        } else {
            vec![
                b == b'"',
                b == b'\\',
                b == b',',
                !b.is_ascii_digit(),
                b >= 0x80,
                b == b'}',
                b == b'\n',
                b == b':',
                b == b'-',
                b == b'.',
            ]
        };
        for (c, &hit) in classes.iter().enumerate() {
            m[c] |= u64::from(hit) << k;
        }
    }
    m
}

/// [`Window::flatten`] with bit scans: eight positions per step whatever the count (one
/// branch per eight positions).
#[inline(always)]
pub(crate) fn flatten_portable(out: &mut [usize; 64], q: usize, mut bits: u64) -> usize {
    let n = bits.count_ones() as usize;
    for chunk in out.chunks_exact_mut(8).take(n.div_ceil(8)) {
        for slot in chunk {
            *slot = q + bits.trailing_zeros() as usize;
            bits &= bits.wrapping_sub(1);
        }
    }
    n
}

/// `pdep` one bit at a time: the reference, and the version of CPUs without BMI2.
#[inline]
pub(crate) fn pdep_portable(x: u64, mut mask: u64) -> u64 {
    // The runs deposit each column type's mask, often of no column at all.
    if x == 0 {
        return 0;
    }
    let mut out = 0;
    let mut k = 0;
    while mask != 0 {
        let low = mask & mask.wrapping_neg();
        if x >> k & 1 != 0 {
            out |= low;
        }
        k += 1;
        mask &= mask - 1;
    }
    out
}

/// The masks computed one byte at a time, with the portable `pdep`: the window
/// paths as a CPU without AVX2 or BMI2 would run them, for tests.
#[cfg(test)]
pub(crate) struct BytewiseWindow;

#[cfg(test)]
impl<const K: usize> Window<K> for BytewiseWindow {
    const ENABLED: bool = true;

    fn block(data: &[u8], pos: usize, delim: u8) -> [u64; K] {
        bytewise::<K>(&data[pos..pos + 64], delim)
    }
}

/// Computes no masks: the caller takes its portable path for every record.
pub(crate) struct NoWindow;

impl<const K: usize> Window<K> for NoWindow {
    const ENABLED: bool = false;

    #[inline(always)]
    fn block(_: &[u8], _: usize, _: u8) -> [u64; K] {
        [0; K]
    }
}

/// The inside of quoted strings: for every quote bit, the bits from it up to (not
/// including) the next quote bit are set (a prefix XOR of the quote mask).
#[inline(always)]
pub(crate) fn inside_quotes(quotes: u64) -> u64 {
    let mut x = quotes;
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::MaskCache;

    #[test]
    fn portable_bit_operations() {
        assert_eq!(inside_quotes(0b1000_0100_0010_0001), 0b0111_1100_0001_1111);
        assert_eq!(pdep_portable(0b101, 0b1110_0000), 0b1010_0000);
        assert_eq!(pdep_portable(u64::MAX, 0), 0);
        assert_eq!(pdep_portable(1, 1 << 63), 1 << 63);
        let mut out = [0; 64];
        assert_eq!(flatten_portable(&mut out, 100, 0b1001), 2);
        assert_eq!(out[..2], [100, 103]);
        let mut cache = MaskCache::<CSV>::new();
        assert_eq!(cache.window::<NoWindow>(&[0; 100], 0, b','), None);
    }
}
