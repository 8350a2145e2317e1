//! GORILLA (§8.5), the Gorilla V2 XOR encoding of every numeric type (floats by their raw
//! bits), with its in-band terminator (INT_MIN, LONG_MIN or the canonical NaN).

use super::bits::{BitReader, BitWriter, peek128_at};
use super::{BitsValue, Decoder, Encoder, IntValue, XorItems, decode_xor};
use crate::error::{Error, Result};

/// Bits of the leading-zero and significant-bit fields: 5 for 32-bit, 6 for 64-bit values.
const fn field_bits(w: u32) -> u32 {
    if w == 32 { 5 } else { 6 }
}

/// The GORILLA decoder of `V` (i32, i64, f32, f64).
#[derive(Debug)]
pub struct GorillaDecoder<'a, V> {
    r: BitReader<'a>,
    prev: u64,
    lz: u32,
    tz: u32,
    started: bool,
    done: bool,
    _v: std::marker::PhantomData<V>,
}

impl<'a, V: BitsValue> GorillaDecoder<'a, V> {
    /// A decoder over a value stream at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self {
            r: BitReader::new(data, base),
            prev: 0,
            lz: u32::MAX,
            tz: 0,
            started: false,
            done: data.is_empty(),
            _v: std::marker::PhantomData,
        }
    }

    /// Decodes the next bit pattern (after the first).
    #[inline(always)]
    fn next_bits(&mut self) -> Result<u64> {
        let w = <V::Int as IntValue>::BITS;
        let fb = field_bits(w);
        // Fast path: the longest item ('11' + two fields + W bits) is in the buffer.
        if self.r.remaining_bits() >= (2 + 2 * fb + w) as usize {
            let peek = self.r.peek();
            if peek >> 63 == 0 {
                self.r.consume(1);
                return Ok(self.prev);
            }
            if (peek >> 62) & 1 == 0 {
                let sig = w.wrapping_sub(self.lz).wrapping_sub(self.tz);
                if self.lz == u32::MAX || sig > w {
                    return Err(self.bad("'10' item before any '11' item"));
                }
                self.r.consume(2);
                let x = self.r.read_bits_fast(sig);
                self.prev ^= x << self.tz;
                return Ok(self.prev);
            }
            let lz = ((peek >> (62 - fb)) & ((1 << fb) - 1)) as u32;
            let sig = ((peek >> (62 - 2 * fb)) & ((1 << fb) - 1)) as u32 + 1;
            self.r.consume((2 + 2 * fb) as usize);
            if lz + sig > w {
                return Err(self.bad("leading zeros and significant bits exceed the width"));
            }
            let x = self.r.read_bits_fast(sig);
            self.lz = lz;
            self.tz = w - lz - sig;
            self.prev ^= x << self.tz;
            return Ok(self.prev);
        }
        if !self.r.read_bit("GORILLA control bit")? {
            return Ok(self.prev);
        }
        if !self.r.read_bit("GORILLA control bit")? {
            let sig = w.wrapping_sub(self.lz).wrapping_sub(self.tz);
            if self.lz == u32::MAX || sig > w {
                return Err(self.bad("'10' item before any '11' item"));
            }
            let x = self.r.read_bits(sig, "GORILLA value")?;
            self.prev ^= x << self.tz;
            return Ok(self.prev);
        }
        let lz = self.r.read_bits(fb, "GORILLA leading zeros")? as u32;
        let sig = self.r.read_bits(fb, "GORILLA significant bits")? as u32 + 1;
        if lz + sig > w {
            return Err(self.bad("leading zeros and significant bits exceed the width"));
        }
        let x = self.r.read_bits(sig, "GORILLA value")?;
        self.lz = lz;
        self.tz = w - lz - sig;
        self.prev ^= x << self.tz;
        Ok(self.prev)
    }

    fn bad(&self, reason: &str) -> Error {
        Error::Invalid {
            what: "GORILLA stream",
            offset: self.r.offset(),
            reason: reason.into(),
        }
    }
}

impl<V: BitsValue> GorillaDecoder<'_, V> {
    /// Decodes items while 16 whole bytes remain, with one 128-bit load per item (the
    /// longest item, '11' + two fields + W bits, is at most 78 bits). Stops early, leaving
    /// the state consistent, on anything unusual; the checked path then takes over.
    #[inline(always)]
    fn decode_fast(&mut self, out: &mut Vec<V>, max: usize) -> usize {
        let w = <V::Int as IntValue>::BITS;
        let fb = field_bits(w);
        let mask = (1u128 << fb) - 1;
        let data = self.r.data();
        let end = self.r.fast_end((2 + 2 * fb + w) as usize);
        let mut pos = self.r.bit_position();
        let (mut prev, mut lz, mut tz) = (self.prev, self.lz, self.tz);
        let mut n = 0;
        out.reserve(max.min(1 << 16));
        while n < max && pos < end {
            let x = peek128_at(data, pos);
            if x >> 127 == 0 {
                pos += 1;
            } else if (x >> 126) & 1 == 0 {
                if lz == u32::MAX {
                    break;
                }
                let sig = w - lz - tz;
                let v = ((x << 2) >> (128 - sig)) as u64;
                pos += 2 + sig as usize;
                prev ^= v << tz;
            } else {
                let l = ((x >> (126 - fb)) & mask) as u32;
                let sig = ((x >> (126 - 2 * fb)) & mask) as u32 + 1;
                if l + sig > w {
                    break;
                }
                let v = ((x << (2 + 2 * fb)) >> (128 - sig)) as u64;
                pos += (2 + 2 * fb + sig) as usize;
                lz = l;
                tz = w - l - sig;
                prev ^= v << tz;
            }
            if prev == V::TERMINATOR {
                self.done = true;
                break;
            }
            out.push(V::from_int(<V::Int as IntValue>::from_bits(prev)));
            n += 1;
        }
        self.r.set_bit_position(pos);
        self.prev = prev;
        self.lz = lz;
        self.tz = tz;
        n
    }
}

impl<V: BitsValue> XorItems<V> for GorillaDecoder<'_, V> {
    fn started(&self) -> bool {
        self.started
    }

    fn done(&self) -> bool {
        self.done
    }

    fn set_done(&mut self) {
        self.done = true;
    }

    fn first(&mut self) -> Result<u64> {
        let w = <V::Int as IntValue>::BITS;
        self.prev = self.r.read_bits(w, "GORILLA first value")?;
        self.started = true;
        Ok(self.prev)
    }

    #[inline(always)]
    fn decode_fast(&mut self, out: &mut Vec<V>, max: usize) -> usize {
        Self::decode_fast(self, out, max)
    }

    #[inline(always)]
    fn next_bits(&mut self) -> Result<u64> {
        Self::next_bits(self)
    }
}

impl<V: BitsValue> Decoder<V> for GorillaDecoder<'_, V> {
    fn decode(&mut self, out: &mut Vec<V>, max: usize) -> Result<usize> {
        decode_xor(self, out, max)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        super::skip_by_decoding(self, n)
    }
}

/// The GORILLA encoder (Java `GorillaEncoderV2`), terminator and trailing byte included.
#[derive(Debug)]
pub struct GorillaEncoder<V> {
    w: BitWriter,
    started: bool,
    prev: u64,
    lz: u32,
    tz: u32,
    _v: std::marker::PhantomData<V>,
}

impl<V> Default for GorillaEncoder<V> {
    fn default() -> Self {
        Self {
            w: BitWriter::new(),
            started: false,
            prev: 0,
            lz: u32::MAX,
            tz: 0,
            _v: std::marker::PhantomData,
        }
    }
}

impl<V: BitsValue> GorillaEncoder<V> {
    #[inline(always)]
    fn put_bits(&mut self, bits: u64) {
        let w = <V::Int as IntValue>::BITS;
        if !self.started {
            self.started = true;
            self.prev = bits;
            self.w.write_bits(bits, w);
            return;
        }
        self.put_next(bits);
    }

    /// Encodes a value after the first.
    #[inline(always)]
    fn put_next(&mut self, bits: u64) {
        let w = <V::Int as IntValue>::BITS;
        let fb = field_bits(w);
        let x = self.prev ^ bits;
        if x == 0 {
            self.w.write_bit(false);
        } else {
            let lz = (x << (64 - w)).leading_zeros();
            let tz = x.trailing_zeros();
            if self.lz != u32::MAX && lz >= self.lz && tz >= self.tz {
                // '10' and the bits inside the previous window.
                let sig = w - self.lz - self.tz;
                let v = x >> self.tz;
                if sig <= 62 {
                    self.w.write_bits((0b10 << sig) | v, 2 + sig);
                } else {
                    self.w.write_bits(0b10, 2);
                    self.w.write_bits(v, sig);
                }
            } else {
                // '11', the leading zeros, the significant bits minus one, then the bits.
                let sig = w - lz - tz;
                let head = (0b11 << (2 * fb)) | (u64::from(lz) << fb) | u64::from(sig - 1);
                if 2 + 2 * fb + sig <= 64 {
                    // One write when the item fits a word (always for 32-bit values).
                    self.w
                        .write_bits((head << sig) | (x >> tz), 2 + 2 * fb + sig);
                } else {
                    self.w.write_bits(head, 2 + 2 * fb);
                    self.w.write_bits(x >> tz, sig);
                }
                self.lz = lz;
                self.tz = tz;
            }
        }
        self.prev = bits;
    }
}

impl<V: BitsValue> Encoder<V> for GorillaEncoder<V> {
    fn put(&mut self, v: &V) {
        self.put_bits(v.to_int().to_bits());
    }

    fn put_slice(&mut self, values: &[V]) {
        // About one value's width per value: most items are shorter, a few are longer.
        self.w
            .reserve(values.len() * (<V::Int as IntValue>::BITS as usize / 8) + 16);
        let mut rest = values;
        if !self.started
            && let Some((first, tail)) = rest.split_first()
        {
            self.put_bits(first.to_int().to_bits());
            rest = tail;
        }
        for v in rest {
            self.put_next(v.to_int().to_bits());
        }
    }

    fn flush(&mut self, out: &mut Vec<u8>) {
        if !self.started {
            return;
        }
        self.put_bits(V::TERMINATOR);
        // Java flips one more byte after the terminator: the partial byte, or a zero byte
        // when the stream was already aligned.
        if self.w.is_aligned() {
            self.w.write_bits(0, 8);
        }
        self.w.finish_into(out);
        *self = Self::default();
    }

    fn estimated_size(&self) -> usize {
        self.w.bit_len() / 8 + 2 + <V::Int as IntValue>::BITS as usize / 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc<V: BitsValue>(vals: &[V]) -> Vec<u8> {
        let mut e = GorillaEncoder::<V>::default();
        e.put_slice(vals);
        let mut out = Vec::new();
        e.flush(&mut out);
        let mut d = GorillaDecoder::<V>::new(&out, 0);
        let mut back = Vec::new();
        d.decode_all(&mut back, usize::MAX).unwrap();
        assert_eq!(back, vals);
        out
    }

    #[test]
    fn tv11_vectors() {
        assert_eq!(
            enc(&[5i32, 7, 9]),
            [
                0, 0, 0, 5, 0xfc, 0x0f, 0xc1, 0x7c, 0x1f, 0x80, 0, 0, 0x09, 0
            ]
        );
        assert_eq!(
            enc(&[1.5f64, 1.5, 2.25]),
            [
                0x3f, 0xf8, 0, 0, 0, 0, 0, 0, 0x60, 0x9b, 0xff, 0xec, 0xff, 0xe8
            ]
        );
    }
}
