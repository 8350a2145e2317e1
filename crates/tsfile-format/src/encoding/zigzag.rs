//! ZIGZAG (§8.7) for INT32/INT64: blocks of `UVarInt byte_len, UVarInt count`, then `count`
//! ZigZag varints (64-bit varints for INT64).

use super::plain::read_uvarint_at;
use super::{Decoder, Encoder, IntValue};
use crate::error::{Error, Result};

/// The ZIGZAG decoder of `T` (i32 or i64).
#[derive(Debug)]
pub struct ZigzagDecoder<'a, T> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    /// Values left in the current block and its end.
    left: usize,
    block_end: usize,
    _t: std::marker::PhantomData<T>,
}

impl<'a, T: IntValue> ZigzagDecoder<'a, T> {
    /// A decoder over a value stream at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self {
            data,
            pos: 0,
            base,
            left: 0,
            block_end: 0,
            _t: std::marker::PhantomData,
        }
    }

    fn next_block(&mut self) -> Result<bool> {
        if self.pos < self.block_end {
            return Err(Error::LengthMismatch {
                what: "ZIGZAG block",
                offset: self.base + self.pos as u64,
                expected: self.block_end as u64,
                actual: self.pos as u64,
            });
        }
        if self.pos >= self.data.len() {
            return Ok(false);
        }
        let at = self.pos;
        let len = read_uvarint_at(
            self.data,
            &mut self.pos,
            5,
            self.base,
            "ZIGZAG block length",
        )? as usize;
        let count =
            read_uvarint_at(self.data, &mut self.pos, 5, self.base, "ZIGZAG value count")? as usize;
        let avail = self.data.len() - self.pos;
        if len > avail || count > len {
            return Err(Error::LengthOutOfBounds {
                what: "ZIGZAG block",
                offset: self.base + at as u64,
                declared: len.max(count) as i64,
                available: avail as u64,
            });
        }
        self.block_end = self.pos + len;
        self.left = count;
        Ok(true)
    }

    #[inline(always)]
    fn one(&mut self) -> Result<T> {
        let max = if T::BITS == 32 { 5 } else { 10 };
        let raw = read_uvarint_at(
            &self.data[..self.block_end],
            &mut self.pos,
            max,
            self.base,
            "ZIGZAG value",
        )?;
        self.left -= 1;
        Ok(T::from_bits((raw >> 1) ^ (0u64.wrapping_sub(raw & 1))))
    }
}

impl<T: IntValue> Decoder<T> for ZigzagDecoder<'_, T> {
    fn decode(&mut self, out: &mut Vec<T>, max: usize) -> Result<usize> {
        let mut n = 0;
        while n < max {
            if self.left == 0 && !self.next_block()? {
                break;
            }
            let k = self.left.min(max - n);
            out.reserve(k);
            for _ in 0..k {
                let v = self.one()?;
                out.push(v);
            }
            n += k;
        }
        Ok(n)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        let mut done = 0;
        while done < n {
            if self.left == 0 && !self.next_block()? {
                break;
            }
            let k = self.left.min(n - done);
            for _ in 0..k {
                self.one()?;
            }
            done += k;
        }
        Ok(done)
    }
}

/// The ZIGZAG encoder: one block per page.
#[derive(Debug, Default)]
pub struct ZigzagEncoder<T> {
    bytes: crate::cursor::Writer,
    count: u32,
    _t: std::marker::PhantomData<T>,
}

impl<T: IntValue> Encoder<T> for ZigzagEncoder<T> {
    fn put(&mut self, v: &T) {
        let bits = v.to_bits();
        let zz = if T::BITS == 32 {
            let x = bits as u32 as i32;
            u64::from(((x << 1) ^ (x >> 31)) as u32)
        } else {
            let x = bits as i64;
            ((x << 1) ^ (x >> 63)) as u64
        };
        self.bytes.write_uvarint64(zz);
        self.count += 1;
    }

    fn flush(&mut self, out: &mut Vec<u8>) {
        if self.count == 0 {
            return;
        }
        let body = std::mem::take(&mut self.bytes).into_inner();
        let mut w = crate::cursor::Writer::from_vec(std::mem::take(out));
        w.write_uvarint(body.len() as u32);
        w.write_uvarint(self.count);
        w.write_bytes(&body);
        *out = w.into_inner();
        self.count = 0;
    }

    fn estimated_size(&self) -> usize {
        self.bytes.len() + 10
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tv11_int32() {
        let mut e = ZigzagEncoder::<i32>::default();
        e.put_slice(&[-1, 1]);
        let mut out = Vec::new();
        e.flush(&mut out);
        assert_eq!(out, [0x02, 0x02, 0x01, 0x02]);
        let mut d = ZigzagDecoder::<i32>::new(&out, 0);
        let mut back = Vec::new();
        d.decode_all(&mut back, usize::MAX).unwrap();
        assert_eq!(back, [-1, 1]);
    }
}
