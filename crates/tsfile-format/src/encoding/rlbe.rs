//! RLBE (§8.10): byte-aligned blocks of up to 10 000 values; each block is a 32-bit count
//! followed by segments of equal-length differences: a length code, the Fibonacci code of
//! the segment's run length, and the differences themselves. Floats are carried by their
//! raw bits with integer differences, as the C++ library writes them.

use super::bits::{BitReader, BitWriter};
use super::{BitsValue, BlockDecoder, Decoder, Encoder, IntValue, serve_blocks};
use crate::error::{Error, Result};

/// Values per block.
pub const BLOCK: usize = 10_000;

/// Bits of the length code: 6 for 32-bit, 7 for 64-bit values.
const fn code_bits(w: u32) -> u32 {
    if w == 32 { 6 } else { 7 }
}

/// The RLBE decoder of `V` (i32, i64, f32, f64).
#[derive(Debug)]
pub struct RlbeDecoder<'a, V> {
    r: BitReader<'a>,
    buf: Vec<V>,
    next: usize,
}

impl<'a, V: BitsValue> RlbeDecoder<'a, V> {
    /// A decoder over a value stream at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self {
            r: BitReader::new(data, base),
            buf: Vec::new(),
            next: 0,
        }
    }

    fn bad(&self, reason: String) -> Error {
        Error::Invalid {
            what: "RLBE block",
            offset: self.r.offset(),
            reason,
        }
    }

    fn block(&mut self) -> Result<bool> {
        self.buf.clear();
        self.next = 0;
        self.r.align_to_byte();
        if self.r.remaining_bits() == 0 {
            return Ok(false);
        }
        let w = <V::Int as IntValue>::BITS;
        let size = self.r.read_bits(32, "RLBE block size")? as usize;
        if size == 0 || size > BLOCK {
            return Err(self.bad(format!("block of {size} values (1..={BLOCK} allowed)")));
        }
        let mut prev = <V::Int as Default>::default();
        while self.buf.len() < size {
            let len = self.r.read_bits(code_bits(w), "RLBE length code")? as u32;
            if len == 0 || len > w {
                return Err(self.bad(format!("length code {len} outside 1..={w}")));
            }
            // Fibonacci code, least significant first, ended by two consecutive ones.
            let left = (size - self.buf.len()) as u64;
            let (mut f1, mut f2) = (1u64, 1u64);
            let mut run = 0u64;
            let mut now = self.r.read_bit("RLBE run length")?;
            let mut first = true;
            loop {
                let next = self.r.read_bit("RLBE run length")?;
                if !first {
                    let f = f1.saturating_add(f2);
                    f1 = f2;
                    f2 = f;
                    // A code whose Fibonacci weights already exceed the values left in the
                    // block cannot end in a valid run (and would overflow).
                    if f1 > left {
                        return Err(
                            self.bad(format!("run length code longer than a block of {size}"))
                        );
                    }
                }
                first = false;
                if now {
                    run += f2;
                    if run > left {
                        return Err(self.bad(format!("run of {run} values overflows the block")));
                    }
                }
                if now && next {
                    break;
                }
                now = next;
            }
            let needed = run as usize * len as usize;
            self.r.need(needed, "RLBE differences")?;
            for _ in 0..run {
                let mut bits = self.r.read_bits(len, "RLBE difference")?;
                if len == w {
                    bits |= 1 << (w - 1);
                }
                let d = <V::Int as IntValue>::from_bits(bits);
                prev = if self.buf.is_empty() { d } else { prev.wadd(d) };
                self.buf.push(V::from_int(prev));
            }
        }
        Ok(true)
    }
}

impl<V: BitsValue> BlockDecoder<V> for RlbeDecoder<'_, V> {
    fn buffered(&mut self) -> (&[V], &mut usize) {
        (&self.buf, &mut self.next)
    }

    fn next_block(&mut self) -> Result<bool> {
        self.block()
    }
}

impl<V: BitsValue> Decoder<V> for RlbeDecoder<'_, V> {
    fn decode(&mut self, out: &mut Vec<V>, max: usize) -> Result<usize> {
        serve_blocks(self, Some(out), max)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        serve_blocks(self, None, n)
    }
}

/// The RLBE encoder (the C++ `RLBEEncoder`).
#[derive(Debug)]
pub struct RlbeEncoder<V> {
    out: Vec<u8>,
    diffs: Vec<u64>,
    prev: u64,
    _v: std::marker::PhantomData<V>,
}

impl<V> Default for RlbeEncoder<V> {
    fn default() -> Self {
        Self {
            out: Vec::new(),
            diffs: Vec::new(),
            prev: 0,
            _v: std::marker::PhantomData,
        }
    }
}

impl<V: BitsValue> RlbeEncoder<V> {
    fn length(bits: u64) -> u32 {
        let w = <V::Int as IntValue>::BITS;
        if bits == 0 {
            1
        } else {
            w - (bits << (64 - w)).leading_zeros()
        }
    }

    fn write_block(&mut self) {
        if self.diffs.is_empty() {
            return;
        }
        let w = <V::Int as IntValue>::BITS;
        let mut bw = BitWriter::new();
        bw.write_bits(self.diffs.len() as u64, 32);
        let mut i = 0;
        while i < self.diffs.len() {
            let len = Self::length(self.diffs[i]);
            let mut j = i;
            while j < self.diffs.len() && Self::length(self.diffs[j]) == len {
                j += 1;
            }
            bw.write_bits(u64::from(len), code_bits(w));
            // Zeckendorf representation of the run length over 1, 2, 3, 5, 8, ...
            let run = (j - i) as u64;
            let mut fib = vec![1u64, 2];
            while *fib.last().unwrap_or(&1) <= run {
                let n = fib[fib.len() - 1] + fib[fib.len() - 2];
                fib.push(n);
            }
            let mut code = 0u64;
            let mut rem = run;
            for k in (0..fib.len()).rev() {
                if fib[k] <= rem {
                    code |= 1 << k;
                    rem -= fib[k];
                }
            }
            let top = 64 - code.leading_zeros();
            for k in 0..top {
                bw.write_bit((code >> k) & 1 == 1);
            }
            bw.write_bit(true);
            for d in &self.diffs[i..j] {
                bw.write_bits(*d, len);
            }
            i = j;
        }
        bw.finish_into(&mut self.out);
        self.diffs.clear();
    }
}

impl<V: BitsValue> Encoder<V> for RlbeEncoder<V> {
    fn put(&mut self, v: &V) {
        let bits = v.to_int().to_bits();
        let w = <V::Int as IntValue>::BITS;
        let mask = u64::MAX >> (64 - w);
        let d = if self.diffs.is_empty() {
            bits
        } else {
            bits.wrapping_sub(self.prev) & mask
        };
        self.diffs.push(d);
        self.prev = bits;
        if self.diffs.len() == BLOCK {
            self.write_block();
        }
    }

    fn flush(&mut self, out: &mut Vec<u8>) {
        self.write_block();
        out.append(&mut self.out);
    }

    fn estimated_size(&self) -> usize {
        self.out.len() + 4 + self.diffs.len() * (<V::Int as IntValue>::BITS as usize / 8 + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzz_finding_endless_run_code_is_an_error() {
        // A block of 4 values whose run-length code is a long run of zero bits.
        let mut bytes = vec![0, 0, 0, 4, 0b0000_0100];
        bytes.extend([0u8; 40]);
        let mut d = RlbeDecoder::<i32>::new(&bytes, 0);
        assert!(d.decode_all(&mut Vec::new(), 10).is_err());
    }

    #[test]
    fn round_trip_runs_and_blocks() {
        let vals: Vec<i64> = (0..25_000i64)
            .map(|i| if i % 1000 < 500 { i } else { -i * 7919 })
            .collect();
        let mut e = RlbeEncoder::<i64>::default();
        e.put_slice(&vals);
        let mut out = Vec::new();
        e.flush(&mut out);
        let mut d = RlbeDecoder::<i64>::new(&out, 0);
        let mut back = Vec::new();
        d.decode_all(&mut back, usize::MAX).unwrap();
        assert_eq!(back, vals);
        // Skips cross block boundaries and stop at the end of the stream.
        let mut d = RlbeDecoder::<i64>::new(&out, 0);
        assert_eq!(d.skip(12_345).unwrap(), 12_345);
        let mut some = Vec::new();
        assert_eq!(d.decode(&mut some, 10).unwrap(), 10);
        assert_eq!(some, vals[12_345..12_355]);
        assert_eq!(d.skip(usize::MAX).unwrap(), vals.len() - 12_355);
        assert_eq!(d.skip(1).unwrap(), 0);
        assert_eq!(d.decode(&mut some, 1).unwrap(), 0);
    }
}
