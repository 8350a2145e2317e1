//! GORILLA_V1 (§8.10), read only: the legacy XOR encoding of FLOAT/DOUBLE. The first value
//! is 4/8 bytes little-endian; then `0` = same value, `10` + the XOR bits between the
//! previous *value*'s leading and trailing zeros, `11` + leading zeros (5/6 bits) + length
//! (6/7 bits) + bits. The stream ends at a NaN.

use super::bits::BitReader;
use super::{Decoder, FloatValue, IntValue};
use crate::error::{Error, Result};

/// The GORILLA_V1 decoder of `F` (f32 or f64).
#[derive(Debug)]
pub struct GorillaV1Decoder<'a, F> {
    data: &'a [u8],
    base: u64,
    r: BitReader<'a>,
    prev: u64,
    started: bool,
    done: bool,
    _f: std::marker::PhantomData<F>,
}

impl<'a, F: FloatValue> GorillaV1Decoder<'a, F> {
    /// A decoder over a value stream at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self {
            data,
            base,
            r: BitReader::new(&[], base),
            prev: 0,
            started: false,
            done: data.is_empty(),
            _f: std::marker::PhantomData,
        }
    }

    fn is_nan(bits: u64) -> bool {
        let f = F::from_int(<F::Int as IntValue>::from_bits(bits));
        #[allow(clippy::eq_op)]
        let nan = f != f;
        nan
    }

    fn next_bits(&mut self) -> Result<u64> {
        let w = <F::Int as IntValue>::BITS;
        let (lz_bits, len_bits) = if w == 32 { (5, 6) } else { (6, 7) };
        if !self.r.read_bit("GORILLA_V1 control bit")? {
            return Ok(self.prev);
        }
        let value_lz = (self.prev << (64 - w)).leading_zeros().min(w);
        let value_tz = if self.prev == 0 {
            w
        } else {
            self.prev.trailing_zeros().min(w)
        };
        let x = if !self.r.read_bit("GORILLA_V1 control bit")? {
            let n = w.saturating_sub(value_lz + value_tz);
            if value_lz + value_tz > w {
                0
            } else {
                self.r
                    .read_bits(n, "GORILLA_V1 value")?
                    .checked_shl(value_tz)
                    .unwrap_or(0)
            }
        } else {
            let lz = self.r.read_bits(lz_bits, "GORILLA_V1 leading zeros")? as u32;
            let len = self.r.read_bits(len_bits, "GORILLA_V1 length")? as u32;
            if lz + len > w {
                return Err(Error::Invalid {
                    what: "GORILLA_V1 stream",
                    offset: self.r.offset(),
                    reason: format!("{lz} leading zeros and {len} bits exceed {w}"),
                });
            }
            self.r
                .read_bits(len, "GORILLA_V1 value")?
                .checked_shl(w - lz - len)
                .unwrap_or(0)
        };
        self.prev ^= x;
        Ok(self.prev)
    }
}

impl<F: FloatValue> Decoder<F> for GorillaV1Decoder<'_, F> {
    fn decode(&mut self, out: &mut Vec<F>, max: usize) -> Result<usize> {
        let w = <F::Int as IntValue>::BITS;
        let mut n = 0;
        if self.done || max == 0 {
            return Ok(0);
        }
        if !self.started {
            let nbytes = w as usize / 8;
            let Some(b) = self.data.get(..nbytes) else {
                return Err(Error::Truncated {
                    what: "GORILLA_V1 first value",
                    offset: self.base,
                    needed: nbytes as u64,
                    available: self.data.len() as u64,
                });
            };
            self.prev = b
                .iter()
                .rev()
                .fold(0u64, |acc, &x| (acc << 8) | u64::from(x));
            self.r = BitReader::new(&self.data[nbytes..], self.base + nbytes as u64);
            self.started = true;
            if Self::is_nan(self.prev) {
                self.done = true;
                return Ok(0);
            }
            out.push(F::from_int(<F::Int as IntValue>::from_bits(self.prev)));
            n += 1;
        }
        while n < max {
            if self.r.remaining_bits() == 0 {
                self.done = true;
                break;
            }
            let bits = self.next_bits()?;
            if Self::is_nan(bits) {
                self.done = true;
                break;
            }
            out.push(F::from_int(<F::Int as IntValue>::from_bits(bits)));
            n += 1;
        }
        Ok(n)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        super::skip_by_decoding(self, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::bits::BitWriter;

    #[test]
    fn decodes_a_hand_built_stream() {
        // 1.5f32 LE, then '0' (1.5 again), then '11' + lz + len + bits to reach 2.0, NaN.
        let first = 1.5f32.to_bits();
        let mut bytes = first.to_le_bytes().to_vec();
        let mut w = BitWriter::new();
        w.write_bit(false);
        let x = first ^ 2.0f32.to_bits();
        let lz = x.leading_zeros();
        let tz = x.trailing_zeros();
        let len = 32 - lz - tz;
        w.write_bits(0b11, 2);
        w.write_bits(u64::from(lz), 5);
        w.write_bits(u64::from(len), 6);
        w.write_bits(u64::from(x >> tz), len);
        let y = 2.0f32.to_bits() ^ f32::NAN.to_bits();
        let (lz, tz) = (y.leading_zeros(), y.trailing_zeros());
        let len = 32 - lz - tz;
        w.write_bits(0b11, 2);
        w.write_bits(u64::from(lz), 5);
        w.write_bits(u64::from(len), 6);
        w.write_bits(u64::from(y >> tz), len);
        bytes.extend(w.finish());
        let mut d = GorillaV1Decoder::<f32>::new(&bytes, 0);
        let mut out = Vec::new();
        d.decode_all(&mut out, usize::MAX).unwrap();
        assert_eq!(out, [1.5, 1.5, 2.0]);
    }
}
