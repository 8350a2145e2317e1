//! PLAIN (§8.1): BOOLEAN one byte, INT32/DATE ZigZag VarInt, INT64/TIMESTAMP i64 BE,
//! FLOAT/DOUBLE IEEE BE, TEXT/STRING/BLOB VarInt length + bytes.

use super::{Decoder, Encoder};
use crate::error::{Error, Result};

/// The PLAIN decoder of fixed-width big-endian values (INT64, TIMESTAMP, FLOAT, DOUBLE).
#[derive(Debug)]
pub struct PlainFixedDecoder<'a, T> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    _t: std::marker::PhantomData<T>,
}

/// A fixed-width value PLAIN stores big-endian.
pub trait FixedBe: Copy {
    /// Size in bytes.
    const SIZE: usize;
    /// Reads from exactly `SIZE` bytes.
    fn from_be(bytes: &[u8]) -> Self;
    /// Appends the big-endian bytes.
    fn put_be(self, out: &mut Vec<u8>);
}

macro_rules! fixed_be {
    ($t:ty, $n:expr) => {
        impl FixedBe for $t {
            const SIZE: usize = $n;
            #[inline(always)]
            fn from_be(bytes: &[u8]) -> Self {
                let mut a = [0u8; $n];
                a.copy_from_slice(bytes);
                <$t>::from_be_bytes(a)
            }
            #[inline(always)]
            fn put_be(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_be_bytes());
            }
        }
    };
}
fixed_be!(i64, 8);
fixed_be!(f32, 4);
fixed_be!(f64, 8);

impl<'a, T: FixedBe> PlainFixedDecoder<'a, T> {
    /// A decoder over a value stream at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self {
            data,
            pos: 0,
            base,
            _t: std::marker::PhantomData,
        }
    }

    fn check_tail(&self) -> Result<()> {
        let left = self.data.len() - self.pos;
        if left > 0 && left < T::SIZE {
            return Err(Error::Truncated {
                what: "PLAIN value",
                offset: self.base + self.pos as u64,
                needed: T::SIZE as u64,
                available: left as u64,
            });
        }
        Ok(())
    }
}

impl<T: FixedBe> Decoder<T> for PlainFixedDecoder<'_, T> {
    fn decode(&mut self, out: &mut Vec<T>, max: usize) -> Result<usize> {
        let n = ((self.data.len() - self.pos) / T::SIZE).min(max);
        if n == 0 {
            self.check_tail()?;
            return Ok(0);
        }
        let bytes = &self.data[self.pos..self.pos + n * T::SIZE];
        out.reserve(n);
        out.extend(bytes.chunks_exact(T::SIZE).map(T::from_be));
        self.pos += n * T::SIZE;
        Ok(n)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        let k = ((self.data.len() - self.pos) / T::SIZE).min(n);
        self.pos += k * T::SIZE;
        if k < n {
            self.check_tail()?;
        }
        Ok(k)
    }
}

/// The PLAIN decoder of BOOLEAN (one byte per value, non-zero = true).
#[derive(Debug)]
pub struct PlainBoolDecoder<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> PlainBoolDecoder<'a> {
    /// A decoder over a value stream.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }
}

impl Decoder<bool> for PlainBoolDecoder<'_> {
    fn decode(&mut self, out: &mut Vec<bool>, max: usize) -> Result<usize> {
        let n = (self.data.len() - self.pos).min(max);
        out.extend(self.data[self.pos..self.pos + n].iter().map(|&b| b != 0));
        self.pos += n;
        Ok(n)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        let k = (self.data.len() - self.pos).min(n);
        self.pos += k;
        Ok(k)
    }
}

/// Reads one unsigned LEB128 varint of up to `max_bytes` bytes from `data[*pos..]`.
#[inline(always)]
pub(crate) fn read_uvarint_at(
    data: &[u8],
    pos: &mut usize,
    max_bytes: usize,
    base: u64,
    what: &'static str,
) -> Result<u64> {
    let start = *pos;
    // One-byte values dominate real data; take them without entering the loop.
    if let Some(&b) = data.get(start)
        && b < 0x80
    {
        *pos = start + 1;
        return Ok(u64::from(b));
    }
    let mut value = 0u64;
    for i in 0..max_bytes {
        let Some(&b) = data.get(start + i) else {
            return Err(Error::Truncated {
                what,
                offset: base + start as u64,
                needed: (i + 1) as u64,
                available: (data.len() - start) as u64,
            });
        };
        value |= u64::from(b & 0x7F) << (7 * i);
        if b & 0x80 == 0 {
            *pos = start + i + 1;
            return Ok(value);
        }
    }
    Err(Error::Invalid {
        what,
        offset: base + start as u64,
        reason: format!("varint longer than {max_bytes} bytes"),
    })
}

/// The PLAIN decoder of INT32/DATE: one ZigZag VarInt per value.
#[derive(Debug)]
pub struct PlainVarIntDecoder<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> PlainVarIntDecoder<'a> {
    /// A decoder over a value stream at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self { data, pos: 0, base }
    }
}

impl Decoder<i32> for PlainVarIntDecoder<'_> {
    fn decode(&mut self, out: &mut Vec<i32>, max: usize) -> Result<usize> {
        // Every value takes at least one byte, so the bytes left bound the count.
        let cap = (self.data.len() - self.pos).min(max);
        out.reserve(cap);
        let mut n = 0;
        while n < max && self.pos < self.data.len() {
            let raw =
                read_uvarint_at(self.data, &mut self.pos, 5, self.base, "PLAIN VarInt")? as u32;
            out.push(((raw >> 1) as i32) ^ -((raw & 1) as i32));
            n += 1;
        }
        Ok(n)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        let mut k = 0;
        while k < n && self.pos < self.data.len() {
            read_uvarint_at(self.data, &mut self.pos, 5, self.base, "PLAIN VarInt")?;
            k += 1;
        }
        Ok(k)
    }
}

/// The PLAIN decoder of TEXT/STRING/BLOB: VarInt length + bytes, borrowed from the page.
#[derive(Debug)]
pub struct PlainBinaryDecoder<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> PlainBinaryDecoder<'a> {
    /// A decoder over a value stream at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self { data, pos: 0, base }
    }

    fn next(&mut self) -> Result<&'a [u8]> {
        let at = self.pos;
        let raw =
            read_uvarint_at(self.data, &mut self.pos, 5, self.base, "PLAIN text length")? as u32;
        let len = ((raw >> 1) as i32) ^ -((raw & 1) as i32);
        let left = self.data.len() - self.pos;
        if len < 0 || len as usize > left {
            return Err(Error::LengthOutOfBounds {
                what: "PLAIN text value",
                offset: self.base + at as u64,
                declared: i64::from(len),
                available: left as u64,
            });
        }
        let v = &self.data[self.pos..self.pos + len as usize];
        self.pos += len as usize;
        Ok(v)
    }
}

impl<'a> Decoder<&'a [u8]> for PlainBinaryDecoder<'a> {
    fn decode(&mut self, out: &mut Vec<&'a [u8]>, max: usize) -> Result<usize> {
        let mut n = 0;
        while n < max && self.pos < self.data.len() {
            let v = self.next()?;
            out.push(v);
            n += 1;
        }
        Ok(n)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        let mut k = 0;
        while k < n && self.pos < self.data.len() {
            self.next()?;
            k += 1;
        }
        Ok(k)
    }
}

/// The PLAIN encoder of every type.
#[derive(Debug, Default)]
pub struct PlainEncoder {
    buf: Vec<u8>,
}

impl PlainEncoder {
    /// An empty encoder.
    pub fn new() -> Self {
        Self::default()
    }
}

fn put_varint(buf: &mut Vec<u8>, v: i32) {
    let mut u = ((v << 1) ^ (v >> 31)) as u32;
    while u >= 0x80 {
        buf.push((u as u8 & 0x7F) | 0x80);
        u >>= 7;
    }
    buf.push(u as u8);
}

impl Encoder<bool> for PlainEncoder {
    fn put(&mut self, v: &bool) {
        self.buf.push(u8::from(*v));
    }
    fn flush(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.buf);
    }
    fn estimated_size(&self) -> usize {
        self.buf.len()
    }
}

impl Encoder<i32> for PlainEncoder {
    fn put(&mut self, v: &i32) {
        put_varint(&mut self.buf, *v);
    }
    fn flush(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.buf);
    }
    fn estimated_size(&self) -> usize {
        self.buf.len()
    }
}

macro_rules! plain_fixed_encoder {
    ($t:ty) => {
        impl Encoder<$t> for PlainEncoder {
            fn put(&mut self, v: &$t) {
                v.put_be(&mut self.buf);
            }
            fn put_slice(&mut self, vs: &[$t]) {
                self.buf.reserve(vs.len() * <$t as FixedBe>::SIZE);
                for v in vs {
                    v.put_be(&mut self.buf);
                }
            }
            fn flush(&mut self, out: &mut Vec<u8>) {
                out.append(&mut self.buf);
            }
            fn estimated_size(&self) -> usize {
                self.buf.len()
            }
        }
    };
}
plain_fixed_encoder!(i64);
plain_fixed_encoder!(f32);
plain_fixed_encoder!(f64);

impl Encoder<[u8]> for PlainEncoder {
    fn put(&mut self, v: &[u8]) {
        put_varint(&mut self.buf, v.len() as i32);
        self.buf.extend_from_slice(v);
    }
    fn flush(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.buf);
    }
    fn estimated_size(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int32_is_zigzag_varint() {
        let mut e = PlainEncoder::new();
        for v in [7i32, 8, 9, -1] {
            Encoder::<i32>::put(&mut e, &v);
        }
        let mut out = Vec::new();
        Encoder::<i32>::flush(&mut e, &mut out);
        assert_eq!(out, [0x0e, 0x10, 0x12, 0x01]);
        let mut d = PlainVarIntDecoder::new(&out, 0);
        let mut vals = Vec::new();
        assert_eq!(d.decode(&mut vals, usize::MAX).unwrap(), 4);
        assert_eq!(vals, [7, 8, 9, -1]);
    }

    #[test]
    fn truncated_fixed_value_is_an_error() {
        let mut d = PlainFixedDecoder::<i64>::new(&[0, 0, 0, 0, 0, 0, 0, 1, 2], 5);
        let mut out = Vec::new();
        assert_eq!(d.decode(&mut out, usize::MAX).unwrap(), 1);
        assert!(matches!(
            d.decode(&mut out, usize::MAX),
            Err(Error::Truncated { offset: 13, .. })
        ));
    }

    #[test]
    fn lying_text_length_is_refused() {
        let mut d = PlainBinaryDecoder::new(&[0x7e, b'a'], 0);
        assert!(matches!(
            d.decode(&mut Vec::new(), 1),
            Err(Error::LengthOutOfBounds { declared: 63, .. })
        ));
    }
}
