//! TS_2DIFF (§8.2): blocks of one first value and up to 128 deltas, packed at the block's
//! bit width after subtracting the minimum delta; and the lossy fixed-point wrapper that
//! carries FLOAT/DOUBLE through the integer TS_2DIFF or RLE codec (§8.3).

use super::bits::{BitReader, BitWriter};
use super::plain::read_uvarint_at;
use super::rle::{RleDecoder, RleEncoder};
use super::{Decoder, Encoder, FloatValue, IntValue};
use crate::error::{Error, Result};

/// Deltas per block written by both libraries.
pub const BLOCK_SIZE: usize = 128;

/// The TS_2DIFF decoder of INT32/DATE (`T = i32`) and INT64/TIMESTAMP (`T = i64`).
#[derive(Debug)]
pub struct Ts2DiffDecoder<'a, T> {
    data: &'a [u8],
    /// Byte position of the next block header.
    pos: usize,
    base: u64,
    /// Deltas left in the current block.
    left: usize,
    width: u32,
    min: T,
    prev: T,
    /// The first value of the block, not yet emitted.
    pending_first: bool,
    /// The current block's packed bytes and the bit position in them.
    packed: &'a [u8],
    bit: usize,
    /// In a FLOAT/DOUBLE page, stop at a block boundary whose bytes do not look like a
    /// block header (a new wrapper prefix follows there).
    segmented: bool,
    blocks_read: usize,
}

impl<'a, T: IntValue> Ts2DiffDecoder<'a, T> {
    /// A decoder over a value stream at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self {
            data,
            pos: 0,
            base,
            left: 0,
            width: 0,
            min: T::default(),
            prev: T::default(),
            pending_first: false,
            packed: &[],
            bit: 0,
            segmented: false,
            blocks_read: 0,
        }
    }

    /// True when a complete block header fits at `pos` and its count and width are in the
    /// range the writers use (the probe of the C++ reader).
    fn looks_like_header(&self, pos: usize) -> bool {
        let Some(h) = self.data.get(pos..pos + 8) else {
            return false;
        };
        let n = i32::read_be(&h[..4]);
        let w = i32::read_be(&h[4..]);
        (0..=BLOCK_SIZE as i32).contains(&n) && (0..=T::BITS as i32).contains(&w)
    }

    /// The bytes after the current block (valid at a block boundary).
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    /// Advances past `n` bytes at a block boundary (a wrapper prefix).
    pub(crate) fn advance(&mut self, n: usize) {
        self.pos += n;
    }

    fn at_boundary(&self) -> bool {
        self.left == 0 && !self.pending_first
    }

    /// Reads the next block header; returns false at the end of the stream or, in
    /// segmented mode, at a segment boundary.
    fn next_block(&mut self) -> Result<bool> {
        if self.pos >= self.data.len() {
            return Ok(false);
        }
        if self.segmented && self.blocks_read > 0 && !self.looks_like_header(self.pos) {
            return Ok(false);
        }
        let at = self.base + self.pos as u64;
        let word = T::BITS as usize / 8;
        let header_len = 8 + 2 * word;
        let Some(h) = self.data.get(self.pos..self.pos + header_len) else {
            return Err(Error::Truncated {
                what: "TS_2DIFF block header",
                offset: at,
                needed: header_len as u64,
                available: (self.data.len() - self.pos) as u64,
            });
        };
        let n = i32::read_be(&h[..4]);
        let w = i32::read_be(&h[4..8]);
        if n < 0 {
            return Err(Error::Invalid {
                what: "TS_2DIFF block header",
                offset: at,
                reason: format!("negative delta count {n}"),
            });
        }
        if w < 0 || w as u32 > T::BITS {
            return Err(Error::Invalid {
                what: "TS_2DIFF block header",
                offset: at + 4,
                reason: format!("bit width {w} outside 0..={}", T::BITS),
            });
        }
        let min = T::read_be(&h[8..8 + word]);
        let first = T::read_be(&h[8 + word..]);
        let packed_len = (n as u64 * w as u64).div_ceil(8);
        let start = self.pos + header_len;
        let avail = (self.data.len() - start) as u64;
        if packed_len > avail {
            return Err(Error::LengthOutOfBounds {
                what: "TS_2DIFF packed deltas",
                offset: at,
                declared: packed_len as i64,
                available: avail,
            });
        }
        // The reader may look past the packed bytes (into the next header) to load whole
        // words; only the block's own bits are ever used.
        self.packed = &self.data[start..];
        self.pos = start + packed_len as usize;
        self.bit = 0;
        self.left = n as usize;
        self.width = w as u32;
        self.min = min;
        self.prev = first;
        self.pending_first = true;
        self.blocks_read += 1;
        Ok(true)
    }

    /// Decodes `k ≤ left` deltas of the current block, feeding each value to `f`.
    #[inline(always)]
    fn run(&mut self, k: usize, mut f: impl FnMut(T)) {
        let mut prev = self.prev;
        let min = self.min;
        let w = self.width;
        if w == 0 {
            for _ in 0..k {
                prev = prev.wadd(min);
                f(prev);
            }
        } else {
            let mut r = BitReader::new(self.packed, 0);
            r.consume(self.bit);
            if w <= 57 {
                for _ in 0..k {
                    let v = r.read_bits_unchecked(w);
                    prev = prev.wadd(min).wadd(T::from_bits(v));
                    f(prev);
                }
            } else {
                for _ in 0..k {
                    let hi = r.read_bits_unchecked(32);
                    let lo = r.read_bits_unchecked(w - 32);
                    prev = prev.wadd(min).wadd(T::from_bits((hi << (w - 32)) | lo));
                    f(prev);
                }
            }
            self.bit = r.bit_position();
        }
        self.prev = prev;
        self.left -= k;
    }
}

impl<T: IntValue> Decoder<T> for Ts2DiffDecoder<'_, T> {
    fn decode(&mut self, out: &mut Vec<T>, max: usize) -> Result<usize> {
        let mut n = 0;
        while n < max {
            if self.pending_first {
                out.push(self.prev);
                self.pending_first = false;
                n += 1;
                continue;
            }
            if self.left == 0 {
                if !self.next_block()? {
                    break;
                }
                continue;
            }
            let k = self.left.min(max - n);
            out.reserve(k);
            // Writing through a raw spare-capacity slice keeps the loop free of the
            // capacity checks of `push`.
            let spare = &mut out.spare_capacity_mut()[..k];
            let mut i = 0;
            self.run(k, |v| {
                spare[i].write(v);
                i += 1;
            });
            // SAFETY: `run` wrote exactly `k` values into the first `k` spare slots.
            unsafe { out.set_len(out.len() + k) };
            n += k;
        }
        Ok(n)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        let mut done = 0;
        while done < n {
            if self.pending_first {
                self.pending_first = false;
                done += 1;
                continue;
            }
            if self.left == 0 {
                if !self.next_block()? {
                    break;
                }
                continue;
            }
            let k = self.left.min(n - done);
            if k == self.left && !self.pending_first {
                // Dropping the rest of the block: the next block restarts from its own
                // first value, so the running value need not be computed.
                self.left = 0;
            } else {
                self.run(k, |_| {});
            }
            done += k;
        }
        Ok(done)
    }
}

/// The TS_2DIFF encoder (Java `DeltaBinaryEncoder`): blocks of 128 deltas; a single-value
/// block carries `min_delta = MAX` as Java writes it.
#[derive(Debug)]
pub struct Ts2DiffEncoder<T> {
    out: Vec<u8>,
    started: bool,
    first: T,
    prev: T,
    min: T,
    deltas: Vec<T>,
}

impl<T: IntValue> Default for Ts2DiffEncoder<T> {
    fn default() -> Self {
        Self {
            out: Vec::new(),
            started: false,
            first: T::default(),
            prev: T::default(),
            min: T::MAX,
            deltas: Vec::with_capacity(BLOCK_SIZE),
        }
    }
}

impl<T: IntValue> Ts2DiffEncoder<T> {
    fn write_block(&mut self) {
        if !self.started {
            return;
        }
        let n = self.deltas.len();
        let mask = u64::MAX >> (64 - T::BITS);
        let min = self.min;
        // The widest packed delta has as many bits as the or of them all.
        let all = self
            .deltas
            .iter()
            .fold(0u64, |acc, d| acc | (d.wsub(min).to_bits() & mask));
        let width = 64 - all.leading_zeros();
        self.out.extend_from_slice(&(n as i32).to_be_bytes());
        self.out.extend_from_slice(&(width as i32).to_be_bytes());
        min.write_be(&mut self.out);
        self.first.write_be(&mut self.out);
        if width > 0 {
            self.out.reserve((n * width as usize).div_ceil(8) + 8);
            let mut w = BitWriter::from_vec(std::mem::take(&mut self.out));
            for d in &self.deltas {
                w.write_bits(d.wsub(min).to_bits() & mask, width);
            }
            self.out = w.finish();
        }
        self.started = false;
        self.min = T::MAX;
        self.deltas.clear();
    }
}

impl<T: IntValue> Encoder<T> for Ts2DiffEncoder<T> {
    fn put(&mut self, v: &T) {
        self.put_slice(std::slice::from_ref(v));
    }

    fn put_slice(&mut self, values: &[T]) {
        let mut rest = values;
        while let Some((&v, tail)) = rest.split_first() {
            if !self.started {
                self.started = true;
                self.first = v;
                self.prev = v;
                rest = tail;
                continue;
            }
            // The deltas up to the end of the block, in one tight loop.
            let k = (BLOCK_SIZE - self.deltas.len()).min(rest.len());
            let (mut prev, mut min) = (self.prev, self.min);
            for &v in &rest[..k] {
                let d = v.wsub(prev);
                min = min.min(d);
                self.deltas.push(d);
                prev = v;
            }
            self.prev = prev;
            self.min = min;
            rest = &rest[k..];
            if self.deltas.len() == BLOCK_SIZE {
                self.write_block();
            }
        }
    }

    fn flush(&mut self, out: &mut Vec<u8>) {
        self.write_block();
        if out.is_empty() {
            std::mem::swap(out, &mut self.out);
        } else {
            out.append(&mut self.out);
        }
    }

    fn estimated_size(&self) -> usize {
        self.out.len() + 24 + self.deltas.len() * (T::BITS as usize / 8)
    }
}

/// The integer codec under the FLOAT/DOUBLE wrapper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inner {
    /// TS_2DIFF blocks.
    Ts2Diff,
    /// The RLE hybrid (Java only; the C++ writer refuses RLE on floats).
    Rle,
}

/// Marker of Form 2: some values rounded, none raw (Java's `Integer.MAX_VALUE`).
const FORM_ROUNDED: u32 = 0x7FFF_FFFF;
/// Marker of Form 3: some values stored as raw bits (Java's `Integer.MAX_VALUE - 1`).
const FORM_RAW: u32 = 0x7FFF_FFFE;

/// A float type the wrapper carries, with its scaling rules.
pub trait WrapFloat: FloatValue {
    /// Decodes a scaled (or, with `s = 1`, rounded) integer.
    fn from_scaled(i: Self::Int, s: f64) -> Self;
    /// The integer of `round(self · s)` when it fits `Self::Int`.
    fn scaled(self, s: f64) -> Option<Self::Int>;
}

/// Java `Math.round`: `floor(x + 0.5)`, or `None` when not finite or out of `[lo, hi]`.
fn java_round(x: f64, lo: f64, hi: f64) -> Option<f64> {
    let r = (x + 0.5).floor();
    (r.is_finite() && r >= lo && r <= hi).then_some(r)
}

impl WrapFloat for f32 {
    fn from_scaled(i: i32, s: f64) -> Self {
        (f64::from(i) / s) as f32
    }
    fn scaled(self, s: f64) -> Option<i32> {
        java_round(f64::from(self) * s, i32::MIN as f64, i32::MAX as f64).map(|r| r as i32)
    }
}

impl WrapFloat for f64 {
    fn from_scaled(i: i64, s: f64) -> Self {
        i as f64 / s
    }
    fn scaled(self, s: f64) -> Option<i64> {
        // 2^63 itself does not fit; the largest double below it does.
        java_round(
            self * s,
            i64::MIN as f64,
            // The largest double below 2^63.
            f64::from_bits((i64::MAX as f64).to_bits() - 1),
        )
        .map(|r| r as i64)
    }
}

enum InnerDecoder<'a, I> {
    Ts2Diff(Ts2DiffDecoder<'a, I>),
    Rle(RleDecoder<'a, I>),
}

/// The FLOAT/DOUBLE decoder of TS_2DIFF and RLE pages (§8.3), all three forms. A new
/// prefix may start at any TS_2DIFF block boundary (the C++ reader accepts that too), and a
/// page without prefix (legacy C++ raw bits) is recognised as the C++ reader does.
pub struct FloatWrapDecoder<'a, F: FloatValue> {
    inner: InnerDecoder<'a, F::Int>,
    base: u64,
    s: f64,
    /// Bitmaps of the current segment (LSB-first), empty in Form 1.
    scaled_bm: &'a [u8],
    raw_bm: &'a [u8],
    form: u32,
    seg_pos: usize,
    legacy_raw: bool,
    need_prefix: bool,
    scratch: Vec<F::Int>,
}

impl<F: FloatValue> std::fmt::Debug for FloatWrapDecoder<'_, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FloatWrapDecoder")
            .field("form", &self.form)
            .finish()
    }
}

impl<'a, F: WrapFloat> FloatWrapDecoder<'a, F> {
    /// A decoder over a value stream at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64, inner: Inner) -> Result<Self> {
        let inner = match inner {
            Inner::Ts2Diff => {
                let mut d = Ts2DiffDecoder::new(data, base);
                d.segmented = true;
                InnerDecoder::Ts2Diff(d)
            }
            Inner::Rle => InnerDecoder::Rle(RleDecoder::new(data, base)),
        };
        Ok(Self {
            inner,
            base,
            s: 1.0,
            scaled_bm: &[],
            raw_bm: &[],
            form: 0,
            seg_pos: 0,
            legacy_raw: false,
            need_prefix: true,
            scratch: Vec::new(),
        })
    }

    fn rest(&self) -> &'a [u8] {
        match &self.inner {
            InnerDecoder::Ts2Diff(d) => d.rest(),
            InnerDecoder::Rle(d) => d.rest(),
        }
    }

    fn rest_offset(&self) -> u64 {
        let data_len = match &self.inner {
            InnerDecoder::Ts2Diff(d) => d.data.len(),
            InnerDecoder::Rle(d) => d.data_len(),
        };
        self.base + (data_len - self.rest().len()) as u64
    }

    fn parse_prefix(&mut self) -> Result<()> {
        let rest = self.rest();
        let at = self.rest_offset();
        let mut pos = 0;
        let tag = read_uvarint_at(rest, &mut pos, 5, at, "float wrapper prefix")? as u32;
        self.scaled_bm = &[];
        self.raw_bm = &[];
        self.seg_pos = 0;
        let p = if tag == FORM_ROUNDED || tag == FORM_RAW {
            let count = read_uvarint_at(rest, &mut pos, 5, at, "float wrapper count")? as usize;
            let bm_len = count / 8 + 1;
            let nbm = if tag == FORM_RAW { 2 } else { 1 };
            if bm_len * nbm > rest.len() - pos {
                return Err(Error::LengthOutOfBounds {
                    what: "float wrapper bitmaps",
                    offset: at,
                    declared: (bm_len * nbm) as i64,
                    available: (rest.len() - pos) as u64,
                });
            }
            self.scaled_bm = &rest[pos..pos + bm_len];
            pos += bm_len;
            if tag == FORM_RAW {
                self.raw_bm = &rest[pos..pos + bm_len];
                pos += bm_len;
            }
            read_uvarint_at(rest, &mut pos, 5, at, "float wrapper max point number")? as u32
        } else {
            if let InnerDecoder::Ts2Diff(d) = &self.inner
                && !d.looks_like_header(d.pos + pos)
                && d.looks_like_header(d.pos)
            {
                // No prefix at all: the legacy C++ form of raw bit patterns.
                self.legacy_raw = true;
                self.form = 0;
                return Ok(());
            }
            tag
        };
        self.form = tag;
        self.s = if p == 0 || p > 300 {
            1.0
        } else {
            10f64.powi(p as i32)
        };
        match &mut self.inner {
            InnerDecoder::Ts2Diff(d) => d.advance(pos),
            InnerDecoder::Rle(d) => d.advance(pos),
        }
        Ok(())
    }

    #[inline]
    fn convert(&self, i: F::Int, k: usize) -> F {
        if self.legacy_raw {
            return F::from_int(i);
        }
        let bit = |bm: &[u8]| bm.get(k / 8).is_some_and(|b| b & (1 << (k % 8)) != 0);
        match self.form {
            FORM_RAW if bit(self.raw_bm) => F::from_int(i),
            FORM_RAW | FORM_ROUNDED if !bit(self.scaled_bm) => F::from_scaled(i, 1.0),
            _ => F::from_scaled(i, self.s),
        }
    }
}

impl<F: WrapFloat> Decoder<F> for FloatWrapDecoder<'_, F> {
    fn decode(&mut self, out: &mut Vec<F>, max: usize) -> Result<usize> {
        let mut n = 0;
        while n < max {
            if self.need_prefix {
                if self.rest().is_empty() {
                    break;
                }
                self.parse_prefix()?;
                self.need_prefix = false;
            }
            let mut scratch = std::mem::take(&mut self.scratch);
            scratch.clear();
            let k = match &mut self.inner {
                InnerDecoder::Ts2Diff(d) => d.decode(&mut scratch, max - n)?,
                InnerDecoder::Rle(d) => d.decode(&mut scratch, max - n)?,
            };
            out.reserve(k);
            for (j, &i) in scratch.iter().enumerate() {
                out.push(self.convert(i, self.seg_pos + j));
            }
            self.seg_pos += k;
            self.scratch = scratch;
            n += k;
            if k == 0 {
                let boundary = match &self.inner {
                    InnerDecoder::Ts2Diff(d) => d.at_boundary(),
                    InnerDecoder::Rle(_) => false,
                };
                if boundary && !self.legacy_raw && !self.rest().is_empty() {
                    self.need_prefix = true;
                    continue;
                }
                break;
            }
        }
        Ok(n)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        super::skip_by_decoding(self, n)
    }
}

/// The FLOAT/DOUBLE encoder of TS_2DIFF and RLE (§8.3): buffers the page, then writes Form
/// 1 when every value scales, Form 2 when some only round, Form 3 when some must keep their
/// raw bits (NaN, infinities, huge values), followed by one integer stream.
#[derive(Debug)]
pub struct FloatWrapEncoder<F> {
    p: u32,
    inner: Inner,
    values: Vec<F>,
}

impl<F> FloatWrapEncoder<F> {
    /// An encoder with `max_point_number = p`.
    pub fn new(p: u32, inner: Inner) -> Self {
        Self {
            p,
            inner,
            values: Vec::new(),
        }
    }
}

impl<F: WrapFloat> Encoder<F> for FloatWrapEncoder<F>
where
    Ts2DiffEncoder<F::Int>: Encoder<F::Int>,
    RleEncoder<F::Int>: Encoder<F::Int>,
{
    fn put(&mut self, v: &F) {
        self.values.push(*v);
    }

    fn flush(&mut self, out: &mut Vec<u8>) {
        if self.values.is_empty() {
            return;
        }
        let s = if self.p == 0 {
            1.0
        } else {
            10f64.powi(self.p as i32)
        };
        let count = self.values.len();
        let mut ints = Vec::with_capacity(count);
        let mut scaled_bm = vec![0u8; count / 8 + 1];
        let mut raw_bm = vec![0u8; count / 8 + 1];
        let (mut any_rounded, mut any_raw) = (false, false);
        for (k, v) in self.values.iter().enumerate() {
            if let Some(i) = v.scaled(s) {
                scaled_bm[k / 8] |= 1 << (k % 8);
                ints.push(i);
            } else if let Some(i) = v.scaled(1.0) {
                any_rounded = true;
                ints.push(i);
            } else {
                any_raw = true;
                raw_bm[k / 8] |= 1 << (k % 8);
                ints.push(v.to_int());
            }
        }
        let mut w = crate::cursor::Writer::from_vec(std::mem::take(out));
        if any_raw {
            w.write_uvarint(FORM_RAW);
            w.write_uvarint(count as u32);
            w.write_bytes(&scaled_bm);
            w.write_bytes(&raw_bm);
        } else if any_rounded {
            w.write_uvarint(FORM_ROUNDED);
            w.write_uvarint(count as u32);
            w.write_bytes(&scaled_bm);
        }
        w.write_uvarint(self.p);
        *out = w.into_inner();
        match self.inner {
            Inner::Ts2Diff => {
                let mut e = Ts2DiffEncoder::<F::Int>::default();
                e.put_slice(&ints);
                e.flush(out);
            }
            Inner::Rle => {
                let mut e = RleEncoder::<F::Int>::default();
                e.put_slice(&ints);
                e.flush(out);
            }
        }
        self.values.clear();
    }

    fn estimated_size(&self) -> usize {
        16 + self.values.len() * std::mem::size_of::<F>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cursor::hex;

    #[test]
    fn tv11_int64_block() {
        let bytes = hex("00000002 00000001 0000000000000001 0000000000000064 40");
        let mut d = Ts2DiffDecoder::<i64>::new(&bytes, 0);
        let mut out = Vec::new();
        d.decode_all(&mut out, usize::MAX).unwrap();
        assert_eq!(out, [100, 101, 103]);
        let mut e = Ts2DiffEncoder::<i64>::default();
        e.put_slice(&[100, 101, 103]);
        let mut enc = Vec::new();
        e.flush(&mut enc);
        assert_eq!(enc, bytes);
    }

    #[test]
    fn spec_int32_example() {
        let bytes = hex("00000009 00000008 ffffff99 00000005 69 69 67 67 c2 00 6a 68 68");
        let vals = [5, 7, 9, 9, 9, 100, -3, 0, 1, 2];
        let mut d = Ts2DiffDecoder::<i32>::new(&bytes, 0);
        let mut out = Vec::new();
        d.decode_all(&mut out, usize::MAX).unwrap();
        assert_eq!(out, vals);
        let mut e = Ts2DiffEncoder::<i32>::default();
        e.put_slice(&vals);
        let mut enc = Vec::new();
        e.flush(&mut enc);
        assert_eq!(enc, bytes);
    }

    #[test]
    fn tv11_float_form2() {
        let bytes =
            hex("ff ff ff ff 07 03 05 02 00000002 0000001a fe363d48 00000096 e4 e1 68 80 00 00 00");
        let mut d = FloatWrapDecoder::<f32>::new(&bytes, 0, Inner::Ts2Diff).unwrap();
        let mut out = Vec::new();
        d.decode_all(&mut out, usize::MAX).unwrap();
        assert_eq!(out, [1.5f32, 3e7, 2.0]);
        let mut e = FloatWrapEncoder::<f32>::new(2, Inner::Ts2Diff);
        e.put_slice(&[1.5f32, 3e7, 2.0]);
        let mut enc = Vec::new();
        e.flush(&mut enc);
        assert_eq!(enc, bytes);
    }

    #[test]
    fn spec_float_form3_prefix() {
        let vals = [1.5f32, 3e30, f32::NAN, 2.0];
        let mut e = FloatWrapEncoder::<f32>::new(2, Inner::Ts2Diff);
        e.put_slice(&vals);
        let mut enc = Vec::new();
        e.flush(&mut enc);
        assert_eq!(&enc[..9], hex("fe ff ff ff 07 04 09 06 02"));
        let mut d = FloatWrapDecoder::<f32>::new(&enc, 0, Inner::Ts2Diff).unwrap();
        let mut out = Vec::new();
        d.decode_all(&mut out, usize::MAX).unwrap();
        let bits: Vec<u32> = out.iter().map(|f| f.to_bits()).collect();
        let want: Vec<u32> = vals.iter().map(|f| f.to_bits()).collect();
        assert_eq!(bits, want);
    }

    #[test]
    fn skip_inside_and_across_blocks() {
        let vals: Vec<i64> = (0..300).map(|i| i * i - 7).collect();
        let mut e = Ts2DiffEncoder::<i64>::default();
        e.put_slice(&vals);
        let mut enc = Vec::new();
        e.flush(&mut enc);
        let mut d = Ts2DiffDecoder::<i64>::new(&enc, 0);
        assert_eq!(d.skip(5).unwrap(), 5);
        let mut out = Vec::new();
        d.decode(&mut out, 3).unwrap();
        assert_eq!(out, &vals[5..8]);
        assert_eq!(d.skip(200).unwrap(), 200);
        out.clear();
        d.decode_all(&mut out, usize::MAX).unwrap();
        assert_eq!(out, &vals[208..]);
    }
}
