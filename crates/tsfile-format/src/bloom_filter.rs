//! The Bloom filter over series paths stored in TsFileMetadata (reference §7.7).
//!
//! ```text
//! BloomFilter := UVarInt nbytes, nbytes × u8 bitset, [UVarInt size_in_bits, UVarInt hash_count]
//! ```
//!
//! In V4 the two trailing varints exist only when `nbytes > 0` (an absent filter is the single
//! byte `00`); in V3 they always follow. The bit set is Java's `BitSet.toByteArray()`: bit `p`
//! is byte `p / 8`, mask `1 << (p % 8)`, and trailing zero bytes are dropped.
//!
//! Positions come from a 128-bit x64 MurmurHash3 whose tail bytes Java sign-extends and the
//! C++ library zero-extends; [`BloomFilter::add`] follows Java (what a Java-compatible writer
//! must do) and [`BloomFilter::might_contain`] accepts either, so that non-ASCII paths written
//! by either library are found.

use crate::cursor::{Cursor, Writer};
use crate::error::Result;

/// Seeds of the hash functions; a filter uses the first `hash_count` of them.
pub const SEEDS: [i32; 8] = [5, 7, 11, 19, 31, 37, 43, 59];
/// Smallest filter size in bits.
pub const MIN_SIZE_IN_BITS: u32 = 256;
/// Largest number of hash functions.
pub const MAX_HASH_COUNT: u32 = 8;

/// A Bloom filter as written in the file: the bit set bytes exactly as stored, the size in
/// bits and the number of hash functions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BloomFilter {
    /// The bit set bytes as stored (LSB-first, trailing zero bytes dropped by the writers).
    pub bits: Vec<u8>,
    /// Filter size in bits (the modulus of the positions).
    pub size_in_bits: u32,
    /// Number of hash functions (seeds used).
    pub hash_count: u32,
}

impl BloomFilter {
    /// An empty filter sized for `entries` paths at `error_rate` (clamped to [0.01, 0.1]),
    /// with the libraries' formulas: `size = max(256, floor(-n·ln e / ln²2) + 1)` and
    /// `k = min(8, floor(-ln e / ln 2) + 1)`.
    pub fn with_capacity(entries: usize, error_rate: f64) -> Self {
        let e = error_rate.clamp(0.01, 0.1);
        let ln2 = std::f64::consts::LN_2;
        let bits = (-(entries as f64) * e.ln() / (ln2 * ln2)).floor() + 1.0;
        let size_in_bits = (bits.min(f64::from(u32::MAX)) as u32).max(MIN_SIZE_IN_BITS);
        let hash_count = ((-e.ln() / ln2).floor() as u32 + 1).min(MAX_HASH_COUNT);
        Self {
            bits: Vec::new(),
            size_in_bits,
            hash_count,
        }
    }

    /// True when the filter holds no bit set (written as the single byte `00` in V4).
    pub fn is_empty(&self) -> bool {
        self.bits.is_empty()
    }

    /// Adds a series path (`device + "." + measurement`), hashing like Java.
    pub fn add(&mut self, path: &str) {
        for p in self.positions(path.as_bytes(), TailBytes::SignExtended) {
            let byte = (p / 8) as usize;
            if self.bits.len() <= byte {
                self.bits.resize(byte + 1, 0);
            }
            self.bits[byte] |= 1 << (p % 8);
        }
    }

    /// False only when `path` was certainly not added, by the Java or the C++ hash variant.
    /// A filter of size 0 (absent) answers `true`, since it proves nothing.
    pub fn might_contain(&self, path: &str) -> bool {
        if self.size_in_bits == 0 || self.hash_count == 0 {
            return true;
        }
        [TailBytes::SignExtended, TailBytes::ZeroExtended]
            .into_iter()
            .any(|tail| self.positions(path.as_bytes(), tail).all(|p| self.bit(p)))
    }

    fn bit(&self, p: u32) -> bool {
        self.bits
            .get((p / 8) as usize)
            .is_some_and(|b| b & (1 << (p % 8)) != 0)
    }

    /// The bit positions of `path` for one hash variant.
    fn positions<'p>(&self, path: &'p [u8], tail: TailBytes) -> impl Iterator<Item = u32> + 'p {
        let size = self.size_in_bits.max(1);
        let k = self.hash_count.min(MAX_HASH_COUNT) as usize;
        SEEDS[..k].iter().map(move |&seed| {
            let h = murmur3_x64_128_low32(path, seed, tail);
            // Java: `Math.abs(h) % size`, after mapping INT32_MIN (whose abs overflows) to 0.
            let h = if h == i32::MIN { 0 } else { h };
            h.unsigned_abs() % size
        })
    }

    /// Reads a V4 filter: the varints follow only when `nbytes > 0`.
    pub fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        let bits = Self::read_bits(c)?;
        if bits.is_empty() {
            return Ok(Self::default());
        }
        Ok(Self {
            bits,
            size_in_bits: c.read_uvarint("bloom filter size")?,
            hash_count: c.read_uvarint("bloom filter hash count")?,
        })
    }

    /// Writes the V4 form (an empty filter is the single byte `00`).
    pub fn encode(&self, w: &mut Writer) {
        w.write_uvarint(self.bits.len() as u32);
        w.write_bytes(&self.bits);
        if !self.bits.is_empty() {
            w.write_uvarint(self.size_in_bits);
            w.write_uvarint(self.hash_count);
        }
    }

    /// Reads a V3 filter: the size and hash count always follow the bytes.
    pub fn decode_v3(c: &mut Cursor<'_>) -> Result<Self> {
        Ok(Self {
            bits: Self::read_bits(c)?,
            size_in_bits: c.read_uvarint("bloom filter size")?,
            hash_count: c.read_uvarint("bloom filter hash count")?,
        })
    }

    /// Writes the V3 form.
    pub fn encode_v3(&self, w: &mut Writer) {
        w.write_uvarint(self.bits.len() as u32);
        w.write_bytes(&self.bits);
        w.write_uvarint(self.size_in_bits);
        w.write_uvarint(self.hash_count);
    }

    fn read_bits(c: &mut Cursor<'_>) -> Result<Vec<u8>> {
        let at = c.offset();
        let n = c.read_uvarint("bloom filter byte count")?;
        let n = c.check_len(i64::from(n), 1, "bloom filter byte count", at)?;
        Ok(c.take(n, "bloom filter bits")?.to_vec())
    }
}

/// How the MurmurHash3 tail widens bytes: Java sign-extends, C++ 2.5 zero-extends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailBytes {
    /// Java's `(long) byte << n`.
    SignExtended,
    /// C++'s `(uint64_t) byte << n`.
    ZeroExtended,
}

/// The hash of the Bloom filter: 128-bit x64 MurmurHash3 with both lanes seeded by `seed`
/// (sign-extended), returning the low 32 bits of `h1 + h2`.
pub fn murmur3_x64_128_low32(key: &[u8], seed: i32, tail: TailBytes) -> i32 {
    const C1: u64 = 0x87c3_7b91_1142_53d5;
    const C2: u64 = 0x4cf5_ad43_2745_937f;
    let mut h1 = i64::from(seed) as u64;
    let mut h2 = h1;
    let mut blocks = key.chunks_exact(16);
    for block in &mut blocks {
        let (a, b) = block.split_at(8);
        let mut k1 = u64::from_le_bytes(a.try_into().unwrap_or([0; 8]));
        let mut k2 = u64::from_le_bytes(b.try_into().unwrap_or([0; 8]));
        k1 = k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 ^= k1;
        h1 = h1
            .rotate_left(27)
            .wrapping_add(h2)
            .wrapping_mul(5)
            .wrapping_add(0x52dc_e729);
        k2 = k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 ^= k2;
        h2 = h2
            .rotate_left(31)
            .wrapping_add(h1)
            .wrapping_mul(5)
            .wrapping_add(0x3849_5ab5);
    }
    let rest = blocks.remainder();
    let widen = |b: u8| match tail {
        TailBytes::SignExtended => i64::from(b as i8) as u64,
        TailBytes::ZeroExtended => u64::from(b),
    };
    let (mut k1, mut k2) = (0u64, 0u64);
    // The fall-through of the reference switch: XOR byte i in at bit 8·(i mod 8), highest
    // index first. With sign extension a high byte's ones also cover the bits above it.
    for i in (8..rest.len()).rev() {
        k2 ^= widen(rest[i]) << (8 * (i - 8));
    }
    if rest.len() > 8 {
        k2 = k2.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        h2 ^= k2;
    }
    for i in (0..rest.len().min(8)).rev() {
        k1 ^= widen(rest[i]) << (8 * i);
    }
    if !rest.is_empty() {
        k1 = k1.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        h1 ^= k1;
    }
    let len = key.len() as u64;
    h1 ^= len;
    h2 ^= len;
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1 = fmix64(h1);
    h2 = fmix64(h2);
    h1 = h1.wrapping_add(h2);
    h2 = h2.wrapping_add(h1);
    h1.wrapping_add(h2) as i32
}

fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^= k >> 33;
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_hash_values_and_positions() {
        let expected = [683377795, -1101245839, -1674461903, 1759486009, 207413566];
        for (seed, want) in SEEDS.iter().zip(expected) {
            assert_eq!(
                murmur3_x64_128_low32(b"t.d1.v", *seed, TailBytes::SignExtended),
                want
            );
        }
        let f = BloomFilter {
            bits: Vec::new(),
            size_in_bits: 256,
            hash_count: 5,
        };
        let mut p: Vec<u32> = f.positions(b"t.d1.v", TailBytes::SignExtended).collect();
        p.sort_unstable();
        assert_eq!(p, [57, 62, 131, 143, 207]);
        let mut p: Vec<u32> = f.positions(b"t.d1.", TailBytes::SignExtended).collect();
        p.sort_unstable();
        assert_eq!(p, [28, 69, 128, 164, 246]);
    }

    #[test]
    fn tail_quirk_matches_both_libraries() {
        let f = BloomFilter {
            bits: Vec::new(),
            size_in_bits: 256,
            hash_count: 5,
        };
        let path = "tbl.温度x".as_bytes();
        let mut java: Vec<u32> = f.positions(path, TailBytes::SignExtended).collect();
        let mut cpp: Vec<u32> = f.positions(path, TailBytes::ZeroExtended).collect();
        java.sort_unstable();
        cpp.sort_unstable();
        assert_eq!(java, [25, 108, 145, 157, 252]);
        assert_eq!(cpp, [18, 31, 148, 186, 250]);
    }

    #[test]
    fn tv9_bloom_filter_bytes() {
        let mut f = BloomFilter::with_capacity(1, 0.05);
        assert_eq!((f.size_in_bits, f.hash_count), (256, 5));
        f.add("t.d1.v");
        f.add("t.d1.");
        let mut w = Writer::new();
        f.encode(&mut w);
        // The 31 bytes of TV9, then 256 bits and 5 hash functions.
        let hex = "1f00000010000000422000000000000000098000001000000000800000000040800205";
        let want: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        assert_eq!(w.as_bytes(), want);
        let back = BloomFilter::decode(&mut Cursor::new(&want, 0)).unwrap();
        assert_eq!(back, f);
        assert!(back.might_contain("t.d1.v") && back.might_contain("t.d1."));
        assert!(!back.might_contain("t.d1.w"));
    }

    #[test]
    fn sizing_follows_the_formula() {
        assert_eq!(BloomFilter::with_capacity(100, 0.05).size_in_bits, 624);
        assert_eq!(BloomFilter::with_capacity(0, 0.5).hash_count, 4);
        assert_eq!(BloomFilter::with_capacity(0, 0.0).hash_count, 7);
    }

    #[test]
    fn empty_forms() {
        let mut w = Writer::new();
        BloomFilter::default().encode(&mut w);
        assert_eq!(w.as_bytes(), [0x00]);
        assert!(BloomFilter::default().might_contain("anything"));
        let mut w = Writer::new();
        BloomFilter::default().encode_v3(&mut w);
        assert_eq!(w.as_bytes(), [0x00, 0x00, 0x00]);
        assert_eq!(
            BloomFilter::decode_v3(&mut Cursor::new(&[0, 0, 0], 0)).unwrap(),
            BloomFilter::default()
        );
    }
}
