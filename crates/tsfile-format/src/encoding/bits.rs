//! MSB-first bit reader and writer shared by the bit-stream encodings (TS_2DIFF, RLE,
//! GORILLA, CHIMP, SPRINTZ, RLBE, CAMEL).
//!
//! The reader works a 64-bit word at a time: [`BitReader::peek`] loads the eight bytes at the
//! current byte position (big-endian, zero-padded past the end) and shifts out the bits
//! already consumed, so a read of up to 57 bits costs one unaligned load and one shift. Every
//! read checks the bit budget first and returns [`Error::Truncated`] instead of reading past
//! the end.

use crate::error::{Error, Result};

/// Reads bits MSB-first from a byte slice.
#[derive(Debug, Clone)]
pub struct BitReader<'a> {
    data: &'a [u8],
    /// Position in bits from the start of `data`.
    pos: usize,
    /// Total number of bits in `data`.
    len: usize,
    /// Absolute offset of `data[0]`, for error messages.
    base: u64,
}

impl<'a> BitReader<'a> {
    /// A reader over `data`, whose first byte sits at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self {
            data,
            pos: 0,
            len: data.len() * 8,
            base,
        }
    }

    /// A reader over the first `bits` bits of `data` (at most `data.len() * 8`).
    pub fn with_bit_len(data: &'a [u8], bits: usize, base: u64) -> Self {
        Self {
            data,
            pos: 0,
            len: bits.min(data.len() * 8),
            base,
        }
    }

    /// Bits left to read.
    #[inline]
    pub fn remaining_bits(&self) -> usize {
        self.len - self.pos
    }

    /// The current position in bits.
    #[inline]
    pub fn bit_position(&self) -> usize {
        self.pos
    }

    /// The absolute offset of the byte holding the next bit.
    pub fn offset(&self) -> u64 {
        self.base + (self.pos / 8) as u64
    }

    /// Moves to the next byte boundary (no-op when already aligned).
    #[inline]
    pub fn align_to_byte(&mut self) {
        self.pos = (self.pos + 7) & !7;
        if self.pos > self.len {
            self.pos = self.len;
        }
    }

    /// The byte position of the next unread byte (after aligning up).
    pub fn byte_position(&self) -> usize {
        self.pos.div_ceil(8)
    }

    /// The next 64 bits, left-aligned, zero-padded past the end; does not consume.
    /// At least 57 of them are real bits whenever that many remain.
    #[inline(always)]
    pub fn peek(&self) -> u64 {
        let byte = self.pos >> 3;
        let word = if byte + 8 <= self.data.len() {
            let mut a = [0u8; 8];
            a.copy_from_slice(&self.data[byte..byte + 8]);
            u64::from_be_bytes(a)
        } else {
            let mut a = [0u8; 8];
            let tail = &self.data[byte.min(self.data.len())..];
            a[..tail.len()].copy_from_slice(tail);
            u64::from_be_bytes(a)
        };
        word << (self.pos & 7)
    }

    /// Consumes `n` bits without checking (the caller checked [`Self::remaining_bits`]).
    #[inline(always)]
    pub fn consume(&mut self, n: usize) {
        self.pos += n;
    }

    /// Returns an error naming `what` unless `n` bits remain.
    #[inline(always)]
    pub fn need(&self, n: usize, what: &'static str) -> Result<()> {
        if n > self.remaining_bits() {
            return Err(self.truncated(n, what));
        }
        Ok(())
    }

    /// Reads one bit.
    #[inline(always)]
    pub fn read_bit(&mut self, what: &'static str) -> Result<bool> {
        self.need(1, what)?;
        let byte = self.data[self.pos >> 3];
        let bit = (byte >> (7 - (self.pos & 7))) & 1;
        self.pos += 1;
        Ok(bit != 0)
    }

    /// Reads `n ≤ 64` bits as an unsigned value (the first bit read is the most significant).
    #[inline(always)]
    pub fn read_bits(&mut self, n: u32, what: &'static str) -> Result<u64> {
        if n == 0 {
            return Ok(0);
        }
        self.need(n as usize, what)?;
        if n <= 57 {
            let v = self.peek() >> (64 - n);
            self.pos += n as usize;
            Ok(v)
        } else if n <= 64 {
            let hi = self.peek() >> 32;
            self.pos += 32;
            let lo_bits = n - 32;
            let lo = self.peek() >> (64 - lo_bits);
            self.pos += lo_bits as usize;
            Ok((hi << lo_bits) | lo)
        } else {
            Err(Error::Invalid {
                what,
                offset: self.offset(),
                reason: format!("bit width {n} exceeds 64"),
            })
        }
    }

    /// Reads `n ≤ 57` bits without a bounds check against the budget; bits past the end
    /// read as zero. Use only after [`Self::need`] covered them.
    #[inline(always)]
    pub fn read_bits_unchecked(&mut self, n: u32) -> u64 {
        if n == 0 {
            return 0;
        }
        let v = self.peek() >> (64 - n);
        self.pos += n as usize;
        v
    }

    /// Reads `n ≤ 64` bits without checking the budget (bits past the end read as zero).
    /// Use only after [`Self::need`] (or [`Self::remaining_bits`]) covered them.
    #[inline(always)]
    pub fn read_bits_fast(&mut self, n: u32) -> u64 {
        if n <= 57 {
            self.read_bits_unchecked(n)
        } else {
            let hi = self.read_bits_unchecked(32);
            let lo = self.read_bits_unchecked(n - 32);
            (hi << (n - 32)) | lo
        }
    }

    /// The underlying bytes.
    #[inline(always)]
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Moves to bit `pos` (clamped to the end).
    #[inline(always)]
    pub fn set_bit_position(&mut self, pos: usize) {
        self.pos = pos.min(self.len);
    }

    /// The first bit position from which [`peek128_at`] can no longer load 16 whole bytes
    /// (0 for inputs shorter than 16 bytes), capped at the bit budget minus `item` bits so
    /// that a fast-path item of at most `item` bits never reads past the budget.
    #[inline(always)]
    pub fn fast_end(&self, item: usize) -> usize {
        if self.data.len() < 16 {
            return 0;
        }
        ((self.data.len() - 15) * 8).min(self.len.saturating_sub(item))
    }

    /// Skips `n` bits.
    pub fn skip_bits(&mut self, n: usize, what: &'static str) -> Result<()> {
        self.need(n, what)?;
        self.pos += n;
        Ok(())
    }

    fn truncated(&self, n: usize, what: &'static str) -> Error {
        Error::Truncated {
            what,
            offset: self.offset(),
            needed: n.div_ceil(8) as u64,
            available: (self.remaining_bits() / 8) as u64,
        }
    }
}

/// The 128 bits starting at bit `pos` of `data`, left-aligned (at least 121 of them real).
/// The caller guarantees `pos / 8 + 16 <= data.len()` (see [`BitReader::fast_end`]).
#[inline(always)]
pub fn peek128_at(data: &[u8], pos: usize) -> u128 {
    let b = pos >> 3;
    let mut a = [0u8; 16];
    a.copy_from_slice(&data[b..b + 16]);
    u128::from_be_bytes(a) << (pos & 7)
}

/// Writes bits MSB-first into a byte vector. Bits gather in a 64-bit accumulator that goes
/// to the buffer as one 8-byte word whenever it fills, so a write costs a shift and an or,
/// plus one store per 64 bits.
#[derive(Debug, Clone, Default)]
pub struct BitWriter {
    buf: Vec<u8>,
    /// The pending bits in the low `nbits` bits (higher bits are stale and never written).
    acc: u64,
    /// Pending bits, `0..64`.
    nbits: u32,
}

impl BitWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty writer whose buffer has room for `bytes` bytes.
    pub fn with_capacity(bytes: usize) -> Self {
        Self {
            buf: Vec::with_capacity(bytes),
            acc: 0,
            nbits: 0,
        }
    }

    /// A writer that appends to the bytes of `buf` (as if they had been written aligned).
    pub fn from_vec(buf: Vec<u8>) -> Self {
        Self {
            buf,
            acc: 0,
            nbits: 0,
        }
    }

    /// Writes the low `n ≤ 64` bits of `value`, most significant first.
    #[inline(always)]
    pub fn write_bits(&mut self, value: u64, n: u32) {
        if n == 0 {
            return;
        }
        let v = value & (u64::MAX >> (64 - n));
        let free = 64 - self.nbits;
        if n < free {
            self.acc = (self.acc << n) | v;
            self.nbits += n;
        } else {
            // The accumulator fills: its `nbits` bits and the first `free` bits of `v` make
            // one whole word; the other `n - free` bits of `v` stay pending.
            let rest = n - free;
            let word = if self.nbits == 0 {
                v
            } else {
                (self.acc << free) | (v >> rest)
            };
            self.buf.extend_from_slice(&word.to_be_bytes());
            self.acc = v;
            self.nbits = rest;
        }
    }

    /// Reserves room for `bytes` more bytes.
    pub fn reserve(&mut self, bytes: usize) {
        self.buf.reserve(bytes);
    }

    /// Writes one bit.
    #[inline(always)]
    pub fn write_bit(&mut self, bit: bool) {
        self.write_bits(u64::from(bit), 1);
    }

    /// Bits written so far (including the pending partial byte).
    pub fn bit_len(&self) -> usize {
        self.buf.len() * 8 + self.nbits as usize
    }

    /// True when the next bit starts a new byte.
    pub fn is_aligned(&self) -> bool {
        self.nbits.is_multiple_of(8)
    }

    /// Pads the pending partial byte with zero bits (no-op when aligned).
    pub fn align(&mut self) {
        let partial = self.nbits % 8;
        if partial > 0 {
            self.write_bits(0, 8 - partial);
        }
    }

    /// Moves the pending whole bytes to the buffer (the writer must be aligned).
    fn spill(&mut self) {
        let bytes = (self.nbits / 8) as usize;
        if bytes > 0 {
            let word = self.acc << (64 - self.nbits);
            self.buf.extend_from_slice(&word.to_be_bytes()[..bytes]);
        }
        self.acc = 0;
        self.nbits = 0;
    }

    /// Appends whole bytes; the writer must be aligned.
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        debug_assert!(self.is_aligned());
        self.spill();
        self.buf.extend_from_slice(bytes);
    }

    /// Pads to a byte boundary and returns the bytes, leaving the writer empty.
    pub fn finish(&mut self) -> Vec<u8> {
        self.align();
        self.spill();
        std::mem::take(&mut self.buf)
    }

    /// Pads to a byte boundary and appends the bytes to `out`, leaving the writer empty.
    pub fn finish_into(&mut self, out: &mut Vec<u8>) {
        self.align();
        self.spill();
        if out.is_empty() {
            // Hand over the buffer instead of copying it.
            std::mem::swap(out, &mut self.buf);
        } else {
            out.append(&mut self.buf);
        }
    }
}

/// Unpacks `n` values of `width ≤ 64` bits, MSB-first and contiguous, from `packed`, calling
/// `f` with each. The caller guarantees `packed` holds at least `n * width` bits.
#[inline(always)]
pub fn unpack_msb(packed: &[u8], width: u32, n: usize, mut f: impl FnMut(u64)) {
    let mut r = BitReader::new(packed, 0);
    if width == 0 {
        for _ in 0..n {
            f(0);
        }
    } else if width <= 57 {
        for _ in 0..n {
            f(r.read_bits_unchecked(width));
        }
    } else {
        for _ in 0..n {
            let hi = r.read_bits_unchecked(32);
            let lo = r.read_bits_unchecked(width - 32);
            f((hi << (width - 32)) | lo);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writer_and_reader_agree_on_every_width() {
        let mut w = BitWriter::new();
        let mut expected = Vec::new();
        for width in 0..=64u32 {
            let v = 0xA5A5_5A5A_F0F0_0F0Fu64.rotate_left(width) & (u64::MAX >> (64 - width.max(1)));
            let v = if width == 0 { 0 } else { v };
            w.write_bits(v, width);
            expected.push((v, width));
        }
        let bytes = w.finish();
        let mut r = BitReader::new(&bytes, 0);
        for (v, width) in expected {
            assert_eq!(r.read_bits(width, "v").unwrap(), v, "width {width}");
        }
        assert!(r.remaining_bits() < 8);
    }

    /// The bits of a write, one `bool` each, MSB first (the reference the word-wise writer
    /// must match).
    fn naive(bits: &mut Vec<bool>, value: u64, n: u32) {
        for i in (0..n).rev() {
            bits.push((value >> i) & 1 == 1);
        }
    }

    #[test]
    fn word_writer_matches_bit_by_bit_writing() {
        let mut w = BitWriter::new();
        let mut bits = Vec::new();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for step in 0..5000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let n = (x % 65) as u32;
            w.write_bits(x.rotate_left(step), n);
            naive(
                &mut bits,
                x.rotate_left(step) & (u64::MAX >> (64 - n.max(1))),
                n,
            );
            if step % 97 == 0 {
                w.align();
                while bits.len() % 8 != 0 {
                    bits.push(false);
                }
                w.write_bytes(&[0xA5, 0x3C]);
                naive(&mut bits, 0xA53C, 16);
            }
            assert_eq!(w.bit_len(), bits.len());
            assert_eq!(w.is_aligned(), bits.len() % 8 == 0);
        }
        while bits.len() % 8 != 0 {
            bits.push(false);
        }
        let want: Vec<u8> = bits
            .chunks(8)
            .map(|c| c.iter().fold(0u8, |b, &v| (b << 1) | u8::from(v)))
            .collect();
        let mut out = vec![1, 2];
        w.finish_into(&mut out);
        assert_eq!(out[..2], [1, 2]);
        assert_eq!(out[2..], want[..]);
    }

    #[test]
    fn reading_past_the_end_is_a_typed_error() {
        let mut r = BitReader::new(&[0xFF], 10);
        assert_eq!(r.read_bits(7, "x").unwrap(), 0x7F);
        assert!(r.read_bit("x").unwrap());
        assert!(matches!(
            r.read_bit("x"),
            Err(Error::Truncated { offset: 11, .. })
        ));
    }
}
