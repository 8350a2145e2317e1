//! SPRINTZ (§8.9) with the "fire" predictor: blocks of one first value and 8 ZigZag-mapped
//! prediction errors packed at the block's bit width; a trailing partial block of fewer
//! than 9 values is an RLE stream (integers) or a GORILLA stream (floats). Floats predict
//! on their raw bit patterns.

use super::gorilla::{GorillaDecoder, GorillaEncoder};
use super::plain::read_uvarint_at;
use super::rle::{RleDecoder, RleEncoder};
use super::{BitsValue, BlockDecoder, Decoder, Encoder, IntValue, serve_blocks};
use crate::error::{Error, Result};

/// Values per block after the first.
const BLOCK: usize = 8;

/// The "fire" predictor: an adaptive fraction of the last delta.
#[derive(Debug, Default, Clone, Copy)]
struct Fire {
    acc: i32,
    delta: i64,
}

impl Fire {
    /// `prev + ((acc >> s) · delta) >> b`, in the value's width as Java computes it.
    #[inline]
    fn predict<I: IntValue>(&self, prev: I) -> I {
        if I::BITS == 32 {
            let alpha = self.acc >> 2;
            let prod = (i64::from(alpha).wrapping_mul(self.delta)) as i32;
            I::from_bits((prod >> 8) as u32 as u64).wadd(prev)
        } else {
            // The C++ library multiplies in 128 bits (Java's `long` product wraps); the
            // two differ only on overflow, which DOUBLE bit patterns reach, and the C++
            // form is the one real files were written with.
            let alpha = i128::from(self.acc >> 3);
            let diff = ((alpha * i128::from(self.delta)) >> 16) as i64;
            I::from_bits(diff as u64).wadd(prev)
        }
    }

    #[inline]
    fn train<I: IntValue>(&mut self, pre: I, val: I, err: I) {
        let delta = self.delta;
        let positive = if I::BITS == 32 {
            (err.to_bits() as u32 as i32) > 0
        } else {
            (err.to_bits() as i64) > 0
        };
        let gradient = if positive {
            delta.wrapping_neg()
        } else {
            delta
        };
        // Java keeps the accumulator in an `int`: the compound assignment truncates.
        self.acc = i64::from(self.acc).wrapping_sub(gradient) as i32;
        let d = val.wsub(pre).to_bits();
        self.delta = if I::BITS == 32 {
            i64::from(d as u32 as i32)
        } else {
            d as i64
        };
    }
}

/// Signed view of an integer's bits.
#[inline]
fn signed<I: IntValue>(v: I) -> i64 {
    if I::BITS == 32 {
        i64::from(v.to_bits() as u32 as i32)
    } else {
        v.to_bits() as i64
    }
}

/// The SPRINTZ decoder of `V` (i32, i64, f32, f64).
#[derive(Debug)]
pub struct SprintzDecoder<'a, V: BitsValue> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    buf: Vec<V>,
    next: usize,
    done: bool,
}

impl<'a, V: BitsValue> SprintzDecoder<'a, V> {
    /// A decoder over a value stream at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self {
            data,
            pos: 0,
            base,
            buf: Vec::with_capacity(BLOCK + 1),
            next: 0,
            done: false,
        }
    }

    fn block(&mut self) -> Result<bool> {
        self.buf.clear();
        self.next = 0;
        if self.done || self.pos >= self.data.len() {
            return Ok(false);
        }
        let at = self.pos;
        let h = self.data[self.pos];
        self.pos += 1;
        let rest = &self.data[self.pos..];
        let rest_base = self.base + self.pos as u64;
        if h & 0x80 != 0 {
            let count = usize::from(h & 0x7F);
            if V::IS_FLOAT {
                GorillaDecoder::<V>::new(rest, rest_base).decode_all(&mut self.buf, count)?;
            } else {
                let mut ints = Vec::with_capacity(count);
                RleDecoder::<V::Int>::new(rest, rest_base).decode_all(&mut ints, count)?;
                self.buf.extend(ints.into_iter().map(V::from_int));
            }
            if self.buf.len() < count {
                return Err(Error::Truncated {
                    what: "SPRINTZ tail block",
                    offset: self.base + at as u64,
                    needed: count as u64,
                    available: self.buf.len() as u64,
                });
            }
            // The tail ends the page.
            self.done = true;
            return Ok(true);
        }
        let w = u32::from(h);
        let bits = <V::Int as IntValue>::BITS;
        if w > bits {
            return Err(Error::Invalid {
                what: "SPRINTZ bit width",
                offset: self.base + at as u64,
                reason: format!("{w} exceeds {bits}"),
            });
        }
        let first: V::Int = if V::IS_FLOAT || bits == 64 {
            let n = bits as usize / 8;
            let Some(b) = self.data.get(self.pos..self.pos + n) else {
                return Err(Error::Truncated {
                    what: "SPRINTZ first value",
                    offset: self.base + self.pos as u64,
                    needed: n as u64,
                    available: (self.data.len() - self.pos) as u64,
                });
            };
            self.pos += n;
            <V::Int as IntValue>::read_be(b)
        } else {
            let raw = read_uvarint_at(
                self.data,
                &mut self.pos,
                5,
                self.base,
                "SPRINTZ first value",
            )?;
            <V::Int as IntValue>::from_bits(raw)
        };
        let nbytes = w as usize;
        let Some(packed) = self.data.get(self.pos..self.pos + nbytes) else {
            return Err(Error::Truncated {
                what: "SPRINTZ packed block",
                offset: self.base + self.pos as u64,
                needed: nbytes as u64,
                available: (self.data.len() - self.pos) as u64,
            });
        };
        self.pos += nbytes;
        let mut errs = [<V::Int as Default>::default(); BLOCK];
        let mut i = 0;
        super::bits::unpack_msb(packed, w, BLOCK, |u| {
            let v = if bits == 32 {
                i64::from(u as u32 as i32)
            } else {
                u as i64
            };
            // The writer maps e ↦ 2e − 1 (e > 0) or −2e; undo it with the reader's
            // signed arithmetic.
            let e = if v % 2 == 0 {
                v.wrapping_neg() / 2
            } else {
                v.wrapping_add(1) / 2
            };
            errs[i] = <V::Int as IntValue>::from_bits(e as u64);
            i += 1;
        });
        let mut fire = Fire::default();
        let mut prev = first;
        self.buf.push(V::from_int(first));
        for e in errs {
            let pred = fire.predict(prev);
            let cur = pred.wadd(e);
            fire.train(prev, cur, e);
            self.buf.push(V::from_int(cur));
            prev = cur;
        }
        Ok(true)
    }
}

impl<V: BitsValue> BlockDecoder<V> for SprintzDecoder<'_, V> {
    fn buffered(&mut self) -> (&[V], &mut usize) {
        (&self.buf, &mut self.next)
    }

    fn next_block(&mut self) -> Result<bool> {
        self.block()
    }
}

impl<V: BitsValue> Decoder<V> for SprintzDecoder<'_, V> {
    fn decode(&mut self, out: &mut Vec<V>, max: usize) -> Result<usize> {
        serve_blocks(self, Some(out), max)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        serve_blocks(self, None, n)
    }
}

/// The SPRINTZ encoder (fire predictor, as both libraries default to).
#[derive(Debug)]
pub struct SprintzEncoder<V> {
    out: Vec<u8>,
    values: Vec<V>,
}

impl<V> Default for SprintzEncoder<V> {
    fn default() -> Self {
        Self {
            out: Vec::new(),
            values: Vec::with_capacity(BLOCK + 1),
        }
    }
}

impl<V: BitsValue> SprintzEncoder<V> {
    fn write_block(&mut self) {
        let bits = <V::Int as IntValue>::BITS;
        let first = self.values[0].to_int();
        let mut fire = Fire::default();
        let mut prev = first;
        let mut mapped = [0u64; BLOCK];
        for (i, v) in self.values[1..].iter().enumerate() {
            let cur = v.to_int();
            let pred = fire.predict(prev);
            let err = cur.wsub(pred);
            fire.train(prev, cur, err);
            let e = signed(err);
            let m = if e <= 0 {
                e.wrapping_mul(-2)
            } else {
                e.wrapping_mul(2).wrapping_sub(1)
            };
            mapped[i] = (m as u64) & (u64::MAX >> (64 - bits));
            prev = cur;
        }
        let width = mapped
            .iter()
            .map(|m| 64 - m.leading_zeros())
            .max()
            .unwrap_or(0)
            .max(1);
        self.out.push(width as u8);
        if V::IS_FLOAT || bits == 64 {
            first.write_be(&mut self.out);
        } else {
            let mut w = crate::cursor::Writer::from_vec(std::mem::take(&mut self.out));
            w.write_uvarint(first.to_bits() as u32);
            self.out = w.into_inner();
        }
        let mut w = super::bits::BitWriter::new();
        for m in mapped {
            w.write_bits(m, width);
        }
        w.finish_into(&mut self.out);
        self.values.clear();
    }
}

impl<V: BitsValue> Encoder<V> for SprintzEncoder<V>
where
    RleEncoder<V::Int>: Encoder<V::Int>,
{
    fn put(&mut self, v: &V) {
        self.values.push(*v);
        if self.values.len() == BLOCK + 1 {
            self.write_block();
        }
    }

    fn flush(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.out);
        if !self.values.is_empty() {
            out.push(0x80 | self.values.len() as u8);
            if V::IS_FLOAT {
                let mut g = GorillaEncoder::<V>::default();
                g.put_slice(&self.values);
                g.flush(out);
            } else {
                let mut r = RleEncoder::<V::Int>::default();
                for v in &self.values {
                    r.put(&v.to_int());
                }
                r.flush(out);
            }
            self.values.clear();
        }
    }

    fn estimated_size(&self) -> usize {
        self.out.len() + 1 + self.values.len() * (<V::Int as IntValue>::BITS as usize / 8 + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_int32_example() {
        let vals = [5i32, 7, 9, 9, 9, 100, -3, 0, 1, 2];
        let expected = [
            0x08, 0x05, 0x03, 0x03, 0x00, 0x00, 0xb5, 0xce, 0x0c, 0x01, 0x81, 0x05, 0x02, 0x03,
            0x01, 0x80, 0x00,
        ];
        let mut d = SprintzDecoder::<i32>::new(&expected, 0);
        let mut back = Vec::new();
        d.decode_all(&mut back, usize::MAX).unwrap();
        assert_eq!(back, vals);
        let mut e = SprintzEncoder::<i32>::default();
        e.put_slice(&vals);
        let mut out = Vec::new();
        e.flush(&mut out);
        assert_eq!(out, expected);
    }

    #[test]
    fn skips_and_decodes_across_blocks() {
        let vals: Vec<i64> = (0..5_000i64).map(|i| (i * 37) % 1001 - 500).collect();
        let mut e = SprintzEncoder::<i64>::default();
        e.put_slice(&vals);
        let mut out = Vec::new();
        e.flush(&mut out);
        let mut d = SprintzDecoder::<i64>::new(&out, 0);
        assert_eq!(d.skip(1_234).unwrap(), 1_234);
        let mut some = Vec::new();
        assert_eq!(d.decode(&mut some, 100).unwrap(), 100);
        assert_eq!(some, vals[1_234..1_334]);
        assert_eq!(d.skip(usize::MAX).unwrap(), vals.len() - 1_334);
        assert_eq!(d.skip(1).unwrap(), 0);
        assert_eq!(d.decode(&mut some, 1).unwrap(), 0);
    }
}
