//! RLE (§8.4): the run-length / bit-packing hybrid of INT32, DATE, INT64, TIMESTAMP and
//! BOOLEAN (and, through the §8.3 wrapper, of Java's FLOAT/DOUBLE).
//!
//! A stream is one or more length-prefixed blocks `UVarInt byte_len, u8 bit_width, Run*`.
//! A run header is a UVarInt: even = RLE run of `header >> 1` copies of one value
//! (`ceil(bit_width / 8)` bytes, little-endian for 32-bit types and big-endian for 64-bit
//! types — a Java quirk kept for compatibility); odd = bit-packed run of `header >> 1`
//! groups of 8 values, a `last_count` byte, then the groups MSB-first.

use super::bits::BitWriter;
use super::plain::read_uvarint_at;
use super::{Decoder, Encoder, IntValue};
use crate::error::{Error, Result};

/// Values per bit-packed group.
const GROUP: usize = 8;
/// Largest count of an RLE run (Java's `RLE_MAX_REPEATED_NUM`).
const MAX_REPEAT: usize = 0x7FFF;
/// Largest number of groups in one bit-packed run.
const MAX_GROUPS: usize = 63;

#[derive(Debug, Clone, Copy)]
enum Run {
    None,
    Repeat {
        value: u64,
        left: usize,
    },
    Packed {
        start: usize,
        bit: usize,
        left: usize,
    },
}

/// The RLE decoder of 32-bit (`T = i32`) and 64-bit (`T = i64`) values.
#[derive(Debug)]
pub struct RleDecoder<'a, T> {
    data: &'a [u8],
    /// Next unread byte.
    pos: usize,
    /// End of the current block.
    block_end: usize,
    width: u32,
    base: u64,
    run: Run,
    _t: std::marker::PhantomData<T>,
}

impl<'a, T: IntValue> RleDecoder<'a, T> {
    /// A decoder over a value stream at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self {
            data,
            pos: 0,
            block_end: 0,
            width: 0,
            base,
            run: Run::None,
            _t: std::marker::PhantomData,
        }
    }

    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    pub(crate) fn advance(&mut self, n: usize) {
        self.pos += n;
    }

    pub(crate) fn data_len(&self) -> usize {
        self.data.len()
    }

    fn err_at(&self, pos: usize, what: &'static str, reason: String) -> Error {
        Error::Invalid {
            what,
            offset: self.base + pos as u64,
            reason,
        }
    }

    /// Loads the next run; returns false at the end of the stream.
    fn next_run(&mut self) -> Result<bool> {
        loop {
            if self.pos >= self.block_end {
                if self.pos >= self.data.len() {
                    return Ok(false);
                }
                let at = self.pos;
                let len =
                    read_uvarint_at(self.data, &mut self.pos, 5, self.base, "RLE block length")?
                        as usize;
                let left = self.data.len() - self.pos;
                if len > left || len == 0 {
                    return Err(Error::LengthOutOfBounds {
                        what: "RLE block",
                        offset: self.base + at as u64,
                        declared: len as i64,
                        available: left as u64,
                    });
                }
                self.block_end = self.pos + len;
                let w = u32::from(self.data[self.pos]);
                if w > T::BITS {
                    return Err(self.err_at(
                        self.pos,
                        "RLE bit width",
                        format!("{w} exceeds {}", T::BITS),
                    ));
                }
                self.width = w;
                self.pos += 1;
                continue;
            }
            let at = self.pos;
            let block = &self.data[..self.block_end];
            let header =
                read_uvarint_at(block, &mut self.pos, 5, self.base, "RLE run header")? as usize;
            let count = header >> 1;
            if header & 1 == 0 {
                let nbytes = self.width.div_ceil(8) as usize;
                let Some(bytes) = block.get(self.pos..self.pos + nbytes) else {
                    return Err(Error::Truncated {
                        what: "RLE run value",
                        offset: self.base + self.pos as u64,
                        needed: nbytes as u64,
                        available: (self.block_end - self.pos) as u64,
                    });
                };
                let mut v = 0u64;
                if T::BITS == 32 {
                    for (i, b) in bytes.iter().enumerate() {
                        v |= u64::from(*b) << (8 * i);
                    }
                } else {
                    for b in bytes {
                        v = (v << 8) | u64::from(*b);
                    }
                }
                self.pos += nbytes;
                if count == 0 {
                    continue;
                }
                self.run = Run::Repeat {
                    value: v,
                    left: count,
                };
                return Ok(true);
            }
            let Some(&last) = block.get(self.pos) else {
                return Err(Error::Truncated {
                    what: "RLE bit-packed last count",
                    offset: self.base + self.pos as u64,
                    needed: 1,
                    available: 0,
                });
            };
            self.pos += 1;
            if count == 0 || last > 8 {
                return Err(self.err_at(
                    at,
                    "RLE bit-packed run",
                    format!("{count} groups with last group of {last} values"),
                ));
            }
            let nbytes = count * self.width as usize;
            if nbytes > self.block_end - self.pos {
                return Err(Error::LengthOutOfBounds {
                    what: "RLE bit-packed run",
                    offset: self.base + at as u64,
                    declared: nbytes as i64,
                    available: (self.block_end - self.pos) as u64,
                });
            }
            let values = (count - 1) * GROUP + usize::from(last);
            let start = self.pos;
            self.pos += nbytes;
            if values == 0 {
                continue;
            }
            self.run = Run::Packed {
                start,
                bit: 0,
                left: values,
            };
            return Ok(true);
        }
    }

    #[inline(always)]
    fn take(&mut self, k: usize, mut f: impl FnMut(T)) {
        match &mut self.run {
            Run::None => {}
            Run::Repeat { value, left } => {
                let v = T::from_bits(*value);
                for _ in 0..k {
                    f(v);
                }
                *left -= k;
                if *left == 0 {
                    self.run = Run::None;
                }
            }
            Run::Packed { start, bit, left } => {
                let w = self.width;
                let mut r = super::bits::BitReader::new(&self.data[*start..], 0);
                r.consume(*bit);
                if w <= 57 {
                    for _ in 0..k {
                        f(T::from_bits(r.read_bits_unchecked(w)));
                    }
                } else {
                    for _ in 0..k {
                        let hi = r.read_bits_unchecked(32);
                        let lo = r.read_bits_unchecked(w - 32);
                        f(T::from_bits((hi << (w - 32)) | lo));
                    }
                }
                *bit = r.bit_position();
                *left -= k;
                if *left == 0 {
                    self.run = Run::None;
                }
            }
        }
    }

    fn run_left(&self) -> usize {
        match self.run {
            Run::None => 0,
            Run::Repeat { left, .. } | Run::Packed { left, .. } => left,
        }
    }
}

impl<T: IntValue> Decoder<T> for RleDecoder<'_, T> {
    fn decode(&mut self, out: &mut Vec<T>, max: usize) -> Result<usize> {
        let mut n = 0;
        while n < max {
            if self.run_left() == 0 && !self.next_run()? {
                break;
            }
            let k = self.run_left().min(max - n);
            out.reserve(k);
            self.take(k, |v| out.push(v));
            n += k;
        }
        Ok(n)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        let mut done = 0;
        while done < n {
            if self.run_left() == 0 && !self.next_run()? {
                break;
            }
            let k = self.run_left().min(n - done);
            match &mut self.run {
                Run::Repeat { left, .. } => *left -= k,
                Run::Packed { bit, left, .. } => {
                    *bit += k * self.width as usize;
                    *left -= k;
                }
                Run::None => {}
            }
            if self.run_left() == 0 {
                self.run = Run::None;
            }
            done += k;
        }
        Ok(done)
    }
}

/// BOOLEAN over the INT32 RLE codec (0 = false, anything else = true).
#[derive(Debug)]
pub struct BoolRleDecoder<'a> {
    inner: RleDecoder<'a, i32>,
    scratch: Vec<i32>,
}

impl<'a> BoolRleDecoder<'a> {
    /// A decoder over a value stream at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self {
            inner: RleDecoder::new(data, base),
            scratch: Vec::new(),
        }
    }
}

impl Decoder<bool> for BoolRleDecoder<'_> {
    fn decode(&mut self, out: &mut Vec<bool>, max: usize) -> Result<usize> {
        self.scratch.clear();
        let n = self.inner.decode(&mut self.scratch, max)?;
        out.extend(self.scratch.iter().map(|&v| v != 0));
        Ok(n)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        self.inner.skip(n)
    }
}

/// The RLE encoder, replaying Java's `RleEncoder` state machine so that its output is
/// byte-identical: groups of 8 buffered values, a value repeated 8 times or more becomes an
/// RLE run (capped at 0x7FFF), at most 63 groups per bit-packed run.
#[derive(Debug, Default)]
pub struct RleEncoder<T> {
    values: Vec<T>,
}

struct RleState<T> {
    width: u32,
    cache: Vec<u8>,
    pre: T,
    repeat: usize,
    buffered: [T; GROUP],
    nbuf: usize,
    packed: Vec<u8>,
    groups: usize,
    in_packed_run: bool,
}

impl<T: IntValue> RleState<T> {
    fn end_packed_run(&mut self, last: usize) {
        if !self.in_packed_run {
            return;
        }
        self.cache.push(((self.groups << 1) | 1) as u8);
        self.cache.push(last as u8);
        self.cache.append(&mut self.packed);
        self.in_packed_run = false;
        self.groups = 0;
    }

    fn write_rle_run(&mut self) {
        self.end_packed_run(GROUP);
        let mut w = crate::cursor::Writer::from_vec(std::mem::take(&mut self.cache));
        w.write_uvarint((self.repeat << 1) as u32);
        self.cache = w.into_inner();
        let nbytes = self.width.div_ceil(8) as usize;
        let bits = self.pre.to_bits();
        if T::BITS == 32 {
            for i in 0..nbytes {
                self.cache.push((bits >> (8 * i)) as u8);
            }
        } else {
            for i in (0..nbytes).rev() {
                self.cache.push((bits >> (8 * i)) as u8);
            }
        }
        self.repeat = 0;
        self.nbuf = 0;
    }

    fn write_or_append_packed(&mut self) {
        if self.groups >= MAX_GROUPS {
            self.end_packed_run(GROUP);
        }
        self.in_packed_run = true;
        let mut w = BitWriter::new();
        for v in &self.buffered {
            w.write_bits(v.to_bits(), self.width);
        }
        w.finish_into(&mut self.packed);
        self.nbuf = 0;
        self.repeat = 0;
        self.groups += 1;
    }

    fn encode(&mut self, v: T) {
        if v == self.pre {
            self.repeat += 1;
            if self.repeat >= GROUP && self.repeat <= MAX_REPEAT {
                return;
            } else if self.repeat == MAX_REPEAT + 1 {
                self.repeat = MAX_REPEAT;
                self.write_rle_run();
                self.repeat = 1;
                self.pre = v;
            }
        } else {
            if self.repeat >= GROUP {
                self.write_rle_run();
            }
            self.repeat = 1;
            self.pre = v;
        }
        self.buffered[self.nbuf] = v;
        self.nbuf += 1;
        if self.nbuf == GROUP {
            self.write_or_append_packed();
        }
    }

    fn finish(&mut self) {
        let last = self.nbuf;
        if self.repeat >= GROUP {
            self.write_rle_run();
        } else if self.nbuf > 0 {
            for i in self.nbuf..GROUP {
                self.buffered[i] = T::default();
            }
            self.write_or_append_packed();
            self.end_packed_run(last);
        } else {
            self.end_packed_run(GROUP);
        }
    }
}

/// The bit width RLE uses for `values`: the largest significant-bit count, at least 1.
fn bit_width<T: IntValue>(values: &[T]) -> u32 {
    values
        .iter()
        .map(|v| T::BITS - v.lz())
        .max()
        .unwrap_or(1)
        .max(1)
}

impl<T: IntValue> RleEncoder<T> {
    /// Encodes `values` as one flushed block.
    fn write(values: &[T], out: &mut Vec<u8>) {
        let width = bit_width(values);
        let mut st = RleState {
            width,
            cache: vec![width as u8],
            pre: T::default(),
            repeat: 0,
            buffered: [T::default(); GROUP],
            nbuf: 0,
            packed: Vec::new(),
            groups: 0,
            in_packed_run: false,
        };
        for &v in values {
            st.encode(v);
        }
        st.finish();
        let mut w = crate::cursor::Writer::from_vec(std::mem::take(out));
        w.write_uvarint(st.cache.len() as u32);
        w.write_bytes(&st.cache);
        *out = w.into_inner();
    }
}

impl<T: IntValue> Encoder<T> for RleEncoder<T> {
    fn put(&mut self, v: &T) {
        self.values.push(*v);
    }

    fn flush(&mut self, out: &mut Vec<u8>) {
        if self.values.is_empty() {
            return;
        }
        Self::write(&self.values, out);
        self.values.clear();
    }

    fn estimated_size(&self) -> usize {
        let w = bit_width(&self.values) as usize;
        8 + (self.values.len() * w).div_ceil(8) + self.values.len() / 8
    }
}

/// BOOLEAN over the INT32 RLE encoder (Java's default BOOLEAN encoding).
#[derive(Debug, Default)]
pub struct BoolRleEncoder {
    inner: RleEncoder<i32>,
}

impl Encoder<bool> for BoolRleEncoder {
    fn put(&mut self, v: &bool) {
        self.inner.put(&i32::from(*v));
    }

    fn flush(&mut self, out: &mut Vec<u8>) {
        self.inner.flush(out);
    }

    fn estimated_size(&self) -> usize {
        self.inner.estimated_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T: IntValue>(vals: &[T]) -> Vec<u8> {
        let mut e = RleEncoder::<T>::default();
        e.put_slice(vals);
        let mut enc = Vec::new();
        e.flush(&mut enc);
        let mut d = RleDecoder::<T>::new(&enc, 0);
        let mut out = Vec::new();
        d.decode_all(&mut out, usize::MAX).unwrap();
        assert_eq!(out, vals);
        enc
    }

    #[test]
    fn tv11_int32() {
        assert_eq!(
            round_trip(&[1i32, 2, 3]),
            [0x05, 0x02, 0x03, 0x03, 0x6c, 0x00]
        );
    }

    #[test]
    fn spec_width_32_example() {
        let enc = round_trip(&[5i32, 7, 9, 9, 9, 100, -3, 0, 1, 2]);
        assert_eq!(&enc[..4], &[0x43, 0x20, 0x05, 0x02]);
        assert_eq!(enc.len(), 4 + 64);
    }

    #[test]
    fn runs_and_limits() {
        let mut v: Vec<i64> = vec![7; 40_000];
        v.extend((0..600).map(|i| i % 5));
        v.extend([i64::MIN, i64::MAX, -1]);
        let enc = round_trip(&v);
        let mut d = RleDecoder::<i64>::new(&enc, 0);
        assert_eq!(d.skip(39_999).unwrap(), 39_999);
        let mut out = Vec::new();
        d.decode(&mut out, 3).unwrap();
        assert_eq!(out, [7, 0, 1]);
    }
}
