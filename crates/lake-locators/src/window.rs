//! Byte-class bitmasks of 64-byte windows of a row-format file, one bit per byte: where the
//! delimiters (commas and closing braces for JSON), line feeds, quotes and (for JSON)
//! backslashes are, which bytes are not ASCII digits and which are not ASCII at all. The row
//! indexers find a whole record's fields and classify its numbers from these masks with a few
//! bit operations per field, instead of reading each field byte by byte.
//!
//! The masks come from a [`Window`] implementation chosen once per file: AVX2 where the CPU
//! has it (two 32-byte compares per class), or [`NoWindow`], which computes none so that the
//! caller keeps its portable word-at-a-time path. A class set is an array of `K` masks in the
//! order of the index constants of [`csv_class`] and [`json_class`].

/// Number of classes of a delimited-text window.
pub(crate) const CSV: usize = 8;
/// Number of classes of a JSON-lines window.
pub(crate) const JSON: usize = 10;

/// Indices of the classes of a JSON-lines window ([`JSON`] of them).
pub(crate) mod json_class {
    /// `"`.
    pub(crate) const QUOTE: usize = 0;
    /// `\`.
    pub(crate) const BACKSLASH: usize = 1;
    /// `,`.
    pub(crate) const COMMA: usize = 2;
    /// Every byte other than `0`–`9`.
    pub(crate) const NON_DIGIT: usize = 3;
    /// Bytes with the high bit set (not ASCII).
    pub(crate) const HIGH: usize = 4;
    /// `}`.
    pub(crate) const CLOSE: usize = 5;
    /// `\n` (never inside a valid JSON string).
    pub(crate) const NEWLINE: usize = 6;
    /// `:`.
    pub(crate) const COLON: usize = 7;
    /// `-`.
    pub(crate) const MINUS: usize = 8;
    /// `.`.
    pub(crate) const DOT: usize = 9;
}

/// Indices of the classes of a delimited-text window ([`CSV`] of them).
pub(crate) mod csv_class {
    /// The delimiter byte.
    pub(crate) const DELIM: usize = 0;
    /// `\n`.
    pub(crate) const NEWLINE: usize = 1;
    /// `"`.
    pub(crate) const QUOTE: usize = 2;
    /// Every byte other than `0`–`9`.
    pub(crate) const NON_DIGIT: usize = 3;
    /// Bytes with the high bit set (not ASCII).
    pub(crate) const HIGH: usize = 4;
    /// `-`.
    pub(crate) const MINUS: usize = 5;
    /// `.`.
    pub(crate) const DOT: usize = 6;
    /// `\r`.
    pub(crate) const CR: usize = 7;
}

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

/// A way to compute the `K` class masks of 64 bytes; the indexing loops are generic over it
/// so that the vector version compiles into a loop of its own with the CPU feature enabled.
pub(crate) trait Window<const K: usize> {
    /// False for [`NoWindow`], which computes nothing.
    const ENABLED: bool;

    /// False when the classes that only runs of records read are left empty (see
    /// [`crate::rowshape`]): the caller must not read runs.
    const RUNS: bool = true;

    /// The masks of `data[pos..pos + 64]`, which must be in bounds (`delim` is the
    /// delimiter of a delimited-text window).
    fn block(data: &[u8], pos: usize, delim: u8) -> [u64; K];

    /// The low bits of `x` deposited at the set bits of `mask` (BMI2 `pdep`).
    #[inline(always)]
    fn pdep(x: u64, mask: u64) -> u64 {
        pdep_portable(x, mask)
    }

    /// [`inside_quotes`] of `quotes`; a carry-less multiplication by all ones where the CPU
    /// has one.
    #[inline(always)]
    fn inside(quotes: u64) -> u64 {
        inside_quotes(quotes)
    }

    /// Writes `q + k` for each set bit `k` of `bits`, lowest first, to the first slots of
    /// `out` (later slots may be overwritten); returns how many.
    #[inline(always)]
    fn flatten(out: &mut [usize; 64], q: usize, bits: u64) -> usize {
        flatten_portable(out, q, bits)
    }

    /// True when the bytes of `block` at the set bits of `keep` are the first bytes of
    /// `stream`, in order: per 8-byte word, [`Window::pdep`] spreads the next bytes of
    /// `stream` over the word's kept lanes.
    #[inline(always)]
    fn expand_equals(block: &[u8; 64], stream: &[u8; 72], keep: u64) -> bool {
        let word = |bytes: &[u8]| {
            let mut w = [0u8; 8];
            w.copy_from_slice(bytes);
            u64::from_le_bytes(w)
        };
        let mut diff = 0u64;
        // Bytes of `stream` taken so far: at most 56 before the last word.
        let mut taken = 0usize;
        for (w, have) in block.chunks_exact(8).enumerate() {
            let bits = ((keep >> (8 * w)) & 0xFF) as usize;
            let lanes = BYTE_LANES[bits];
            let from = taken & 63;
            let want = Self::pdep(word(&stream[from..from + 8]), lanes);
            diff |= (word(have) ^ want) & lanes;
            taken += bits.count_ones() as usize;
        }
        diff == 0
    }
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

/// For each 8-bit mask, the mask of the bytes of a word whose bits are set.
const BYTE_LANES: [u64; 256] = {
    let mut lanes = [0u64; 256];
    let mut m = 0;
    while m < 256 {
        let mut b = 0;
        while b < 8 {
            if m & (1 << b) != 0 {
                lanes[m] |= 0xFF << (8 * b);
            }
            b += 1;
        }
        m += 1;
    }
    lanes
};

/// `pdep` one bit at a time: the reference, and the version of CPUs without BMI2.
#[inline]
pub(crate) fn pdep_portable(x: u64, mut mask: u64) -> u64 {
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

/// Blocks of masks computed ahead in one tight loop.
const CACHED_BLOCKS: usize = 64;

/// How far ahead of the block being classified its bytes are prefetched.
#[cfg(target_arch = "x86_64")]
const PREFETCH_AHEAD: usize = 64 * CACHED_BLOCKS;

/// The masks of up to [`CACHED_BLOCKS`] consecutive 64-byte blocks from `base`, computed in
/// one pass ahead of the record loop. Computing a window's masks at each record start would
/// chain every load to the previous record's line end; blocks at fixed addresses let the
/// loads run ahead, and a window at any position is two blocks shifted together.
pub(crate) struct MaskCache<const K: usize> {
    base: usize,
    blocks: usize,
    masks: [[u64; CACHED_BLOCKS]; K],
}

impl<const K: usize> MaskCache<K> {
    /// An empty cache.
    pub(crate) fn new() -> Self {
        MaskCache {
            base: 0,
            blocks: 0,
            masks: [[0; CACHED_BLOCKS]; K],
        }
    }

    /// The masks of the 64 bytes at `pos`, or `None` when fewer than 64 bytes remain or `W`
    /// computes none.
    #[inline(always)]
    pub(crate) fn window<W: Window<K>>(
        &mut self,
        data: &[u8],
        pos: usize,
        delim: u8,
    ) -> Option<[u64; K]> {
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
        let mut out = [0u64; K];
        if o == 0 {
            for (c, m) in out.iter_mut().zip(&self.masks) {
                *c = m[k];
            }
        } else {
            // `off + 64 <= blocks * 64` with `o > 0` puts block `k + 1` in the cache.
            for (c, m) in out.iter_mut().zip(&self.masks) {
                *c = (m[k] >> o) | (m[k + 1] << (64 - o));
            }
        }
        Some(out)
    }

    #[inline(always)]
    fn refill<W: Window<K>>(&mut self, data: &[u8], pos: usize, delim: u8) {
        let blocks = (data.len().saturating_sub(pos) / 64).min(CACHED_BLOCKS);
        self.base = pos;
        self.blocks = blocks;
        for b in 0..blocks {
            let m = W::block(data, pos + 64 * b, delim);
            for (c, &bits) in self.masks.iter_mut().zip(&m) {
                c[b] = bits;
            }
        }
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

/// [`inside_quotes`] as one carry-less multiplication by all ones (PCLMULQDQ): bit `i` of
/// the product is the XOR of the bits of `quotes` up to `i`.
#[cfg(target_arch = "x86_64")]
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

/// True when the CPU runs the AVX2 indexing loops: AVX2, and BMI1, BMI2, POPCNT and PCLMULQDQ
/// for the bit operations on the masks (`tzcnt`, shifts by a register without `cl`, `pdep`,
/// `popcnt`, prefix XOR by carry-less multiplication: every AVX2 CPU has them, but each is
/// its own feature flag).
#[cfg(target_arch = "x86_64")]
pub(crate) fn avx2_available() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("popcnt")
        && std::arch::is_x86_feature_detected!("pclmulqdq")
}

/// The indexing loop of a row-format file on this CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loop {
    /// AVX-512 masks with the run classes ([`crate::window512::Avx512Window`]).
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// AVX2 masks with the run classes ([`Avx2Window`]).
    #[cfg(target_arch = "x86_64")]
    Avx2Runs,
    /// AVX2 masks without them ([`Avx2LeanWindow`]).
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// No masks ([`NoWindow`]).
    Portable,
}

/// The loop to index a file with: runs of records or lines (see [`crate::rowshape`]) when
/// the CPU's `pdep` is fast; the AVX-512 masks where the CPU has them. A variant other than
/// [`Loop::Portable`] is only returned when the CPU has the features its loop is compiled
/// with.
pub(crate) fn pick_loop() -> Loop {
    #[cfg(target_arch = "x86_64")]
    if avx2_available() {
        return if !pdep_is_fast() {
            Loop::Avx2
        } else if crate::window512::avx512_available() {
            Loop::Avx512
        } else {
            Loop::Avx2Runs
        };
    }
    Loop::Portable
}

/// True unless the CPU runs BMI2's `pdep` in microcode: AMD (and Hygon) CPUs before Zen 3
/// (family 19h) take up to hundreds of cycles per `pdep`, where the runs of records of
/// [`crate::rowshape`] would be far slower than the per-field path.
#[cfg(target_arch = "x86_64")]
pub(crate) fn pdep_is_fast() -> bool {
    static FAST: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FAST.get_or_init(|| {
        use std::arch::x86_64::__cpuid;
        let id = __cpuid(0);
        let vendor: Vec<u8> = [id.ebx, id.edx, id.ecx]
            .iter()
            .flat_map(|r| r.to_le_bytes())
            .collect();
        if vendor != b"AuthenticAMD" && vendor != b"HygonGenuine" {
            return true;
        }
        let eax = __cpuid(1).eax;
        let (base, extended) = ((eax >> 8) & 0xF, (eax >> 20) & 0xFF);
        let family = if base == 0xF { base + extended } else { base };
        family >= 0x19
    })
}

/// AVX2 masks. Only used from functions compiled with `#[target_feature(enable = "avx2")]`
/// after `is_x86_feature_detected!("avx2")`.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Avx2Window;

/// The 64 bits of one per-byte test over both 32-byte halves of a block.
#[cfg(target_arch = "x86_64")]
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

#[cfg(target_arch = "x86_64")]
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

#[cfg(target_arch = "x86_64")]
impl Window<CSV> for Avx2Window {
    const ENABLED: bool = true;

    #[inline(always)]
    fn block(data: &[u8], pos: usize, delim: u8) -> [u64; CSV] {
        Self::csv_block::<true>(data, pos, delim)
    }

    #[inline(always)]
    fn pdep(x: u64, mask: u64) -> u64 {
        // SAFETY: this impl is only used on CPUs with BMI2 (`avx2_available` checks it).
        unsafe { std::arch::x86_64::_pdep_u64(x, mask) }
    }
}

/// AVX2 masks without the classes that only runs of records read (left empty: `-`, `.`,
/// `\r` of delimited text, `:`, `-`, `.` of JSON): for CPUs whose `pdep` is slow, which
/// read no runs.
#[cfg(target_arch = "x86_64")]
pub(crate) struct Avx2LeanWindow;

#[cfg(target_arch = "x86_64")]
impl Window<CSV> for Avx2LeanWindow {
    const ENABLED: bool = true;
    const RUNS: bool = false;

    #[inline(always)]
    fn block(data: &[u8], pos: usize, delim: u8) -> [u64; CSV] {
        Avx2Window::csv_block::<false>(data, pos, delim)
    }
}

#[cfg(target_arch = "x86_64")]
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

#[cfg(target_arch = "x86_64")]
impl Window<JSON> for Avx2Window {
    const ENABLED: bool = true;

    #[inline(always)]
    fn inside(quotes: u64) -> u64 {
        clmul_prefix_xor(quotes)
    }

    #[inline(always)]
    fn block(data: &[u8], pos: usize, _: u8) -> [u64; JSON] {
        Self::json_block::<true>(data, pos)
    }

    #[inline(always)]
    fn pdep(x: u64, mask: u64) -> u64 {
        <Self as Window<CSV>>::pdep(x, mask)
    }
}

#[cfg(target_arch = "x86_64")]
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

#[cfg(target_arch = "x86_64")]
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

    #[cfg(target_arch = "x86_64")]
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
        #[cfg(target_arch = "x86_64")]
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
        #[cfg(target_arch = "x86_64")]
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
        #[cfg(target_arch = "x86_64")]
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
