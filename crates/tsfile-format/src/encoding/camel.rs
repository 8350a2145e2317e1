//! CAMEL (§8.10), read only: the C++ library's DOUBLE encoding. A page is a sequence of
//! blocks `VarInt bit_count` + that many bits (zero-padded to a byte). In a block the first
//! value is 64 raw bits; each next one is a sign bit and a type bit, then either a decimal
//! (the integer part as a ZigZag varint difference to the previous integer part, a decimal
//! count, an optional XOR correction and the decimal digits) or a Gorilla item.

use super::Decoder;
use super::bits::BitReader;
use super::plain::read_uvarint_at;
use crate::error::{Error, Result};

const POWERS_10: [i64; 15] = [
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    100_000_000_000,
    1_000_000_000_000,
    10_000_000_000_000,
    100_000_000_000_000,
    1_000_000_000_000_000,
];

/// Java `(long) d`: truncation with saturation, NaN to 0.
fn java_to_long(d: f64) -> i64 {
    if d.is_nan() { 0 } else { d as i64 }
}

/// Java `Double.doubleToLongBits` (canonical NaN).
fn java_bits(d: f64) -> u64 {
    if d.is_nan() {
        0x7ff8_0000_0000_0000
    } else {
        d.to_bits()
    }
}

/// Java `Math.round` on a double.
fn java_round(d: f64) -> i64 {
    if d.is_nan() {
        0
    } else {
        java_to_long((d + 0.5).floor())
    }
}

/// The CAMEL decoder of DOUBLE.
#[derive(Debug)]
pub struct CamelDecoder<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    r: BitReader<'a>,
    first: bool,
    stored_val: i64,
    prev: u64,
    scale: f64,
    lz: u32,
    tz: u32,
}

impl<'a> CamelDecoder<'a> {
    /// A decoder over a value stream at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self {
            data,
            pos: 0,
            base,
            r: BitReader::new(&[], base),
            first: true,
            stored_val: 0,
            prev: 0,
            scale: 1.0,
            lz: u32::MAX,
            tz: 0,
        }
    }

    fn bad(&self, reason: String) -> Error {
        Error::Invalid {
            what: "CAMEL block",
            offset: self.r.offset(),
            reason,
        }
    }

    /// Opens the next block; false at the end of the page.
    fn open_block(&mut self) -> Result<bool> {
        if self.pos >= self.data.len() {
            return Ok(false);
        }
        let at = self.pos;
        let raw =
            read_uvarint_at(self.data, &mut self.pos, 5, self.base, "CAMEL block size")? as u32;
        let bits = ((raw >> 1) as i32) ^ -((raw & 1) as i32);
        let avail = self.data.len() - self.pos;
        if bits <= 0 || (bits as usize).div_ceil(8) > avail {
            return Err(Error::LengthOutOfBounds {
                what: "CAMEL block",
                offset: self.base + at as u64,
                declared: i64::from(bits),
                available: avail as u64,
            });
        }
        let nbytes = (bits as usize).div_ceil(8);
        let block = &self.data[self.pos..self.pos + nbytes];
        // The reader sees exactly `bits` bits: the padding is not part of the block.
        self.r = BitReader::with_bit_len(block, bits as usize, self.base + self.pos as u64);
        self.pos += nbytes;
        self.first = true;
        self.stored_val = 0;
        self.prev = 0;
        self.scale = 1.0;
        self.lz = u32::MAX;
        self.tz = 0;
        Ok(true)
    }

    /// A ZigZag varint written as 7-bit groups, each followed by a "more" bit.
    fn read_var_long(&mut self) -> Result<i64> {
        let mut result = 0u64;
        let mut shift = 0;
        loop {
            let chunk = self.r.read_bits(7, "CAMEL varint")?;
            let more = self.r.read_bit("CAMEL varint")?;
            result |= chunk << shift;
            shift += 7;
            if !more {
                break;
            }
            if shift >= 64 {
                return Err(self.bad("varint longer than 64 bits".into()));
            }
        }
        Ok(((result >> 1) ^ 0u64.wrapping_sub(result & 1)) as i64)
    }

    fn read_decimal(&mut self) -> Result<f64> {
        let count = self.r.read_bits(4, "CAMEL decimal count")? as usize + 1;
        if count > POWERS_10.len() {
            return Err(self.bad(format!("decimal count {count}")));
        }
        let has_xor = self.r.read_bit("CAMEL xor flag")?;
        let xor = if has_xor {
            self.r.read_bits(count as u32, "CAMEL xor")? << (52 - count)
        } else {
            0
        };
        let m = self.read_var_long()?;
        let pow = POWERS_10[count - 1];
        let frac = if has_xor {
            let base = m as f64 / pow as f64 + 1.0;
            f64::from_bits(xor ^ java_bits(base)) - 1.0
        } else {
            m as f64 / pow as f64
        };
        self.scale = pow as f64;
        Ok(java_round(frac * self.scale) as f64)
    }

    fn read_gorilla(&mut self) -> Result<f64> {
        if !self.r.read_bit("CAMEL control bit")? {
            return Ok(f64::from_bits(self.prev));
        }
        let x = if !self.r.read_bit("CAMEL control bit")? {
            let sig = 64u32.wrapping_sub(self.lz).wrapping_sub(self.tz);
            if self.lz == u32::MAX || sig > 64 {
                return Err(self.bad("'10' item before any '11' item".into()));
            }
            if sig == 0 {
                return Ok(f64::from_bits(self.prev));
            }
            self.r.read_bits(sig, "CAMEL value")? << self.tz
        } else {
            let lz = self.r.read_bits(6, "CAMEL leading zeros")? as u32;
            let sig = self.r.read_bits(6, "CAMEL significant bits")? as u32 + 1;
            if lz + sig > 64 {
                return Err(self.bad("leading zeros and significant bits exceed 64".into()));
            }
            self.lz = lz;
            self.tz = 64 - lz - sig;
            self.r.read_bits(sig, "CAMEL value")? << self.tz
        };
        self.prev ^= x;
        Ok(f64::from_bits(self.prev))
    }

    fn next_value(&mut self) -> Result<f64> {
        if self.first {
            let bits = self.r.read_bits(64, "CAMEL first value")?;
            let v = f64::from_bits(bits);
            self.stored_val = java_to_long(v);
            self.first = false;
            self.prev = java_bits(v);
            return Ok(v);
        }
        let negative = self.r.read_bit("CAMEL sign")?;
        let decimal = self.r.read_bit("CAMEL type")?;
        let sign = if negative { -1.0 } else { 1.0 };
        let v = if decimal {
            let diff = self.read_var_long()?;
            self.stored_val = self.stored_val.wrapping_add(diff);
            let int_part = self.stored_val;
            let dec = self.read_decimal()?;
            let abs = if int_part >= 0 {
                (int_part as f64 * self.scale + dec) / self.scale
            } else {
                -(int_part as f64 * self.scale + dec) / self.scale
            };
            sign * abs
        } else {
            sign * self.read_gorilla()?
        };
        self.prev = java_bits(v);
        Ok(v)
    }
}

impl Decoder<f64> for CamelDecoder<'_> {
    fn decode(&mut self, out: &mut Vec<f64>, max: usize) -> Result<usize> {
        let mut n = 0;
        while n < max {
            if self.r.remaining_bits() == 0 && !self.open_block()? {
                break;
            }
            let v = self.next_value()?;
            out.push(v);
            n += 1;
        }
        Ok(n)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        super::skip_by_decoding(self, n)
    }
}
