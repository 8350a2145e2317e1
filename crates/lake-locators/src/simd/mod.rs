//! The SIMD layer: byte-class bitmasks of 64-byte windows of a row-format file, one bit per
//! byte: where the delimiters (commas and closing braces for JSON), line feeds, quotes and (for
//! JSON) backslashes are, which bytes are not ASCII digits and which are not ASCII at all. The
//! row indexers find a whole record's fields and classify its numbers from these masks with a
//! few bit operations per field, instead of reading each field byte by byte.
//!
//! The masks come from a [`Window`] implementation chosen once per file: AVX2 where the CPU
//! has it (two 32-byte compares per class, [`avx2`]), AVX-512 (one compare per class,
//! [`avx512`]), or [`NoWindow`], which computes none so that the caller keeps its portable
//! word-at-a-time path ([`portable`]). A class set is an array of `K` masks in the order of the
//! index constants of [`csv_class`] and [`json_class`].
//!
//! Every intrinsic of the crate lives here: besides the windows, [`sse2`] holds the 16- and
//! 64-byte masks of the record skip and of the nested JSON walk (SSE2 is part of every
//! x86-64 CPU), [`avx512`] also the eight-lane number keys of `crate::text::keys`, and
//! [`with_bmi2`] compiles a fold with BMI1 and BMI2.
//!
//! This module is the one place that detects CPU features ([`avx2_available`],
//! [`avx512_available`], [`avx512_keys_available`], [`bmi2_available`], [`pdep_is_fast`])
//! and picks a loop ([`pick_loop`], [`dispatch`]). Every x86 path is compiled on x86_64 only; elsewhere (an
//! aarch64 NEON module would sit beside [`avx2`]) the portable path runs. Every vector path is
//! tested against the byte-wise masks of `portable::BytewiseWindow` (`every_window`, in tests).

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;
pub(crate) mod portable;
#[cfg(target_arch = "x86_64")]
pub(crate) mod sse2;

#[cfg(target_arch = "x86_64")]
pub(crate) use avx2::{Avx2LeanWindow, Avx2SoftWindow, Avx2Window};
#[cfg(target_arch = "x86_64")]
pub(crate) use avx512::Avx512Window;
pub(crate) use portable::NoWindow;
#[cfg(test)]
pub(crate) use portable::{BytewiseWindow, bytewise};
use portable::{flatten_portable, inside_quotes, pdep_portable};

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

/// A way to compute the `K` class masks of 64 bytes; the indexing loops are generic over it
/// so that the vector version compiles into a loop of its own with the CPU feature enabled.
pub(crate) trait Window<const K: usize> {
    /// False for [`NoWindow`], which computes nothing.
    const ENABLED: bool;

    /// False when the classes that only runs of records read are left empty (see
    /// [`crate::text::rowshape`]): the caller must not read runs.
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

/// Blocks of masks computed ahead in one tight loop.
pub(crate) const CACHED_BLOCKS: usize = 64;

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

/// True when the CPU runs the AVX-512 loops: AVX-512F, BW and VBMI2 (byte expansion),
/// besides what [`avx2_available`] requires.
#[cfg(target_arch = "x86_64")]
pub(crate) fn avx512_available() -> bool {
    avx2_available()
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vbmi2")
}

/// True when the indexing loop is the AVX-512 one ([`crate::simd::pick_loop`], so that
/// `BAZAN_SIMD` picks the keys with the masks) and the CPU also has AVX-512CD, which
/// [`avx512::strided_key_bounds`] is compiled with besides F and BW.
#[cfg(target_arch = "x86_64")]
pub(crate) fn avx512_keys_available() -> bool {
    pick_loop() == Loop::Avx512
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512cd")
}

/// True when the CPU has BMI2 (and so BMI1: every CPU with BMI2 has it), for the key folds
/// compiled with them.
#[cfg(target_arch = "x86_64")]
pub(crate) fn bmi2_available() -> bool {
    std::arch::is_x86_feature_detected!("bmi2")
}

/// `f()` compiled with BMI1 and BMI2 (shifts by a register without flags, `bzhi`, `tzcnt`)
/// where the CPU has them ([`bmi2_available`]), plainly elsewhere. `f` must be an
/// `#[inline(always)]` closure, so that its body is compiled into the function with the
/// features: inlined into the indexing loops, whose state takes every register, the key
/// folds kept their bounds on the stack.
#[inline(always)]
pub(crate) fn with_bmi2<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if bmi2_available() {
        // SAFETY: the CPU has BMI1 and BMI2 (every CPU with BMI2 has BMI1), checked above.
        return unsafe { run_bmi2(f) };
    }
    f()
}

/// [`with_bmi2`]'s function of its own, compiled with the features.
///
/// # Safety
/// The CPU must support BMI1 and BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi1,bmi2")]
#[inline(never)]
unsafe fn run_bmi2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

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

/// The indexing loop of a row-format file on this CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Loop {
    /// AVX-512 masks with the run classes ([`Avx512Window`]).
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// AVX2 masks with the run classes ([`Avx2Window`]).
    #[cfg(target_arch = "x86_64")]
    Avx2Runs,
    /// AVX2 masks with the run classes and a `pdep` without BMI2 ([`Avx2SoftWindow`]).
    #[cfg(target_arch = "x86_64")]
    Avx2SoftRuns,
    /// AVX2 masks without them ([`Avx2LeanWindow`]).
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// No masks ([`NoWindow`]).
    Portable,
}

/// The loop to index a file with: runs of records or lines (see [`crate::text::rowshape`]),
/// with BMI2's `pdep` where it is fast and one set bit at a time where it is microcoded (AMD
/// before Zen 3; see `docs/ARCHITECTURE.md` for the figures); the AVX-512 masks where the CPU
/// has them. A variant other than [`Loop::Portable`] is only returned when the CPU has the
/// features its loop is compiled with.
///
/// `BAZAN_SIMD=portable|avx2|avx2-runs|avx2-soft|avx512` picks another loop among those this CPU has
/// (for benchmarks and for checking one loop's maps against another's); a loop the CPU lacks,
/// or any other value, leaves the default.
pub(crate) fn pick_loop() -> Loop {
    static PICKED: std::sync::OnceLock<Loop> = std::sync::OnceLock::new();
    if let Some(forced) = FORCED.with(std::cell::Cell::get) {
        return forced;
    }
    *PICKED.get_or_init(|| {
        let asked = std::env::var("BAZAN_SIMD").ok();
        asked
            .as_deref()
            .and_then(named_loop)
            .unwrap_or_else(default_loop)
    })
}

thread_local! {
    /// The loop [`with_loop`] runs its closure with on this thread.
    static FORCED: std::cell::Cell<Option<Loop>> = const { std::cell::Cell::new(None) };
}

/// Every loop this CPU can run, the one [`pick_loop`] would choose among them.
pub(crate) fn available_loops() -> Vec<Loop> {
    let mut loops = vec![Loop::Portable];
    #[cfg(target_arch = "x86_64")]
    if avx2_available() {
        loops.extend([Loop::Avx2, Loop::Avx2Runs, Loop::Avx2SoftRuns]);
        if avx512_available() {
            loops.push(Loop::Avx512);
        }
    }
    loops
}

/// `f()` with [`pick_loop`] returning `l` on this thread (the fuzz checks run each of
/// [`available_loops`] so). `l` must be one of [`available_loops`]: the dispatch trusts it.
pub(crate) fn with_loop<R>(l: Loop, f: impl FnOnce() -> R) -> R {
    assert!(available_loops().contains(&l), "{l:?} is not available");
    struct Restore(Option<Loop>);
    impl Drop for Restore {
        fn drop(&mut self) {
            FORCED.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(FORCED.with(|c| c.replace(Some(l))));
    f()
}

/// The loop `name` ([`pick_loop`]'s `BAZAN_SIMD`) when this CPU has its features.
fn named_loop(name: &str) -> Option<Loop> {
    match name {
        "portable" => Some(Loop::Portable),
        #[cfg(target_arch = "x86_64")]
        "avx2" if avx2_available() => Some(Loop::Avx2),
        #[cfg(target_arch = "x86_64")]
        "avx2-runs" if avx2_available() => Some(Loop::Avx2Runs),
        #[cfg(target_arch = "x86_64")]
        "avx2-soft" if avx2_available() => Some(Loop::Avx2SoftRuns),
        #[cfg(target_arch = "x86_64")]
        "avx512" if avx512_available() => Some(Loop::Avx512),
        _ => None,
    }
}

/// The loop this CPU runs best (see [`pick_loop`]).
fn default_loop() -> Loop {
    #[cfg(target_arch = "x86_64")]
    if avx2_available() {
        return if !pdep_is_fast() {
            Loop::Avx2SoftRuns
        } else if avx512_available() {
            Loop::Avx512
        } else {
            Loop::Avx2Runs
        };
    }
    Loop::Portable
}

/// True unless the CPU runs BMI2's `pdep` in microcode: AMD (and Hygon) CPUs before Zen 3
/// (family 19h) take up to hundreds of cycles per `pdep`, where the runs of records of
/// [`crate::text::rowshape`] would be far slower than the per-field path.
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

/// An indexing loop generic over its window masks: what [`dispatch`] runs with the masks
/// of this CPU (and `every_window` with each of them, in tests).
pub(crate) trait Kernel<const K: usize>: Sized {
    /// What the loop returns.
    type Output;

    /// Runs the loop over masks `W`. Implementations are `#[inline(always)]`, so that the
    /// loop compiles into the target-feature function that calls it.
    fn run<W: Window<K>>(self) -> Self::Output;
}

/// Runs `kernel` with the masks of the loop [`pick_loop`] chooses for this CPU, compiled with
/// the CPU features of that loop: the one dispatch point of the row-format indexers.
#[cfg(target_arch = "x86_64")]
pub(crate) fn dispatch<const K: usize, F: Kernel<K>>(kernel: F) -> F::Output
where
    Avx2Window: Window<K>,
    Avx2LeanWindow: Window<K>,
    Avx2SoftWindow: Window<K>,
    Avx512Window: Window<K>,
{
    match pick_loop() {
        // SAFETY: `pick_loop` returns `Avx512` only when `avx512_available` found every
        // feature `run_avx512` is compiled with.
        Loop::Avx512 => unsafe { run_avx512::<K, Avx512Window, F>(kernel) },
        // SAFETY: `pick_loop` returns `Avx2Runs` only when `avx2_available` found every
        // feature `run_avx2` is compiled with.
        Loop::Avx2Runs => unsafe { run_avx2::<K, Avx2Window, F>(kernel) },
        // SAFETY: as for `Avx2Runs`: `Avx2` is only returned after `avx2_available`.
        Loop::Avx2 => unsafe { run_avx2::<K, Avx2LeanWindow, F>(kernel) },
        // SAFETY: as for `Avx2Runs`: `Avx2SoftRuns` is only returned after `avx2_available`.
        Loop::Avx2SoftRuns => unsafe { run_avx2::<K, Avx2SoftWindow, F>(kernel) },
        Loop::Portable => kernel.run::<NoWindow>(),
    }
}

/// Runs `kernel` on the portable path: no vector masks exist for this architecture yet (an
/// aarch64 NEON window would be dispatched here).
#[cfg(not(target_arch = "x86_64"))]
pub(crate) fn dispatch<const K: usize, F: Kernel<K>>(kernel: F) -> F::Output {
    match pick_loop() {
        Loop::Portable => kernel.run::<NoWindow>(),
    }
}

/// `kernel` run over AVX2 masks `W`, compiled with AVX2 and the bit instructions of the same
/// CPUs (BMI1's `tzcnt`, BMI2's `pdep` and shifts, `popcnt`, PCLMULQDQ's prefix XOR).
///
/// # Safety
/// The CPU must support AVX2, BMI1, BMI2, POPCNT and PCLMULQDQ ([`avx2_available`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt,pclmulqdq")]
pub(crate) unsafe fn run_avx2<const K: usize, W: Window<K>, F: Kernel<K>>(kernel: F) -> F::Output {
    kernel.run::<W>()
}

/// `kernel` run over AVX-512 masks `W`, compiled with AVX-512F, BW and VBMI2 besides the
/// features of [`run_avx2`].
///
/// # Safety
/// The CPU must support AVX-512F, AVX-512BW, AVX-512VBMI2, AVX2, BMI1, BMI2, POPCNT and
/// PCLMULQDQ ([`avx512_available`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,avx2,bmi1,bmi2,popcnt,pclmulqdq")]
pub(crate) unsafe fn run_avx512<const K: usize, W: Window<K>, F: Kernel<K>>(
    kernel: F,
) -> F::Output {
    kernel.run::<W>()
}

/// `kernel` run over every window this CPU can compute besides [`NoWindow`] (the portable
/// reference the callers compare with): the byte-wise masks with the portable `pdep`, then
/// each vector path the CPU has, each named.
#[cfg(all(test, target_arch = "x86_64"))]
pub(crate) fn every_window<const K: usize, F: Kernel<K> + Copy>(
    kernel: F,
) -> Vec<(&'static str, F::Output)>
where
    Avx2Window: Window<K>,
    Avx2LeanWindow: Window<K>,
    Avx2SoftWindow: Window<K>,
    Avx512Window: Window<K>,
{
    let mut out = vec![("bytewise", kernel.run::<BytewiseWindow>())];
    if avx2_available() {
        // SAFETY: `avx2_available` just found AVX2, BMI1, BMI2, POPCNT and PCLMULQDQ, the
        // features `run_avx2` is compiled with.
        out.push(("avx2", unsafe { run_avx2::<K, Avx2Window, F>(kernel) }));
        // SAFETY: the same `avx2_available` check covers this second `run_avx2` (the lean
        // masks use a subset of the same instructions).
        out.push(("avx2-lean", unsafe {
            run_avx2::<K, Avx2LeanWindow, F>(kernel)
        }));
        // SAFETY: as for `avx2-lean`.
        out.push(("avx2-soft", unsafe {
            run_avx2::<K, Avx2SoftWindow, F>(kernel)
        }));
    }
    if avx512_available() {
        // SAFETY: `avx512_available` just found AVX-512F, BW and VBMI2 besides every AVX2
        // feature: all the features `run_avx512` is compiled with.
        out.push(("avx512", unsafe {
            run_avx512::<K, Avx512Window, F>(kernel)
        }));
    }
    out
}

/// `kernel` run over every window this CPU can compute besides [`NoWindow`]: on this
/// architecture only the byte-wise masks.
#[cfg(all(test, not(target_arch = "x86_64")))]
pub(crate) fn every_window<const K: usize, F: Kernel<K> + Copy>(
    kernel: F,
) -> Vec<(&'static str, F::Output)> {
    vec![("bytewise", kernel.run::<BytewiseWindow>())]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel that reads the masks of every block of its data through a [`MaskCache`].
    #[derive(Clone, Copy)]
    struct AllMasks<'a>(&'a [u8]);

    impl Kernel<JSON> for AllMasks<'_> {
        type Output = Vec<[u64; JSON]>;

        #[inline(always)]
        fn run<W: Window<JSON>>(self) -> Self::Output {
            let mut cache = MaskCache::<JSON>::new();
            (0..self.0.len().saturating_sub(63))
                .map(|pos| {
                    cache
                        .window::<W>(self.0, pos, 0)
                        .unwrap_or_else(|| bytewise::<JSON>(&self.0[pos..], 0))
                })
                .collect()
        }
    }

    #[test]
    fn every_window_agrees_with_the_bytewise_masks() {
        let alphabet = b",;\n\"09/:-.a\xc3\xa9\x80\xff\t\\{}[] \r";
        let data = crate::testutil::byte_soup(0x0d15_7a7c_4000_0001, 1024, alphabet);
        // No masks from the portable path: the callers' word-at-a-time path runs instead.
        let portable = dispatch(AllMasks(&[0; 100]));
        assert_eq!(portable.len(), 37);
        let want = AllMasks(&data).run::<BytewiseWindow>();
        for (name, got) in every_window(AllMasks(&data)) {
            // The lean AVX2 masks leave the run classes empty, and so do the bit-loop `pdep`
            // ones for JSON (which take no runs there).
            let json = got.first().is_some_and(|m| m.len() == JSON);
            if name == "avx2-lean" || (name == "avx2-soft" && json) {
                continue;
            }
            assert_eq!(got, want, "{name}");
        }
        let mut cache = MaskCache::<CSV>::new();
        assert_eq!(cache.window::<NoWindow>(&[0; 100], 0, b','), None);
    }
}
