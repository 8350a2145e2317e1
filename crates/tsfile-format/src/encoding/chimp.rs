//! CHIMP (§8.8): the Chimp128 XOR variant with a ring of previous values (64 entries for
//! 32-bit, 128 for 64-bit values) and leading zeros rounded to eight classes; terminated
//! in-band like GORILLA.

use super::bits::{BitReader, BitWriter, peek128_at};
use super::{BitsValue, Decoder, Encoder, IntValue};
use crate::error::{Error, Result};

/// Leading-zero classes (decoding table).
const LEADING: [u32; 8] = [0, 8, 12, 16, 18, 20, 22, 24];

/// Class of a leading-zero count (encoding table).
fn class_of(lz: u32) -> u32 {
    match lz {
        0..=7 => 0,
        8..=11 => 1,
        12..=15 => 2,
        16..=17 => 3,
        18..=19 => 4,
        20..=21 => 5,
        22..=23 => 6,
        _ => 7,
    }
}

struct Params {
    w: u32,
    ring: usize,
    ix: u32,
    threshold: u32,
    sig_bits: u32,
}

const fn params(w: u32) -> Params {
    if w == 32 {
        Params {
            w,
            ring: 64,
            ix: 6,
            threshold: 11,
            sig_bits: 5,
        }
    } else {
        Params {
            w,
            ring: 128,
            ix: 7,
            threshold: 13,
            sig_bits: 6,
        }
    }
}

/// The CHIMP decoder of `V` (i32, i64, f32, f64).
#[derive(Debug)]
pub struct ChimpDecoder<'a, V> {
    r: BitReader<'a>,
    ring: [u64; 128],
    current: usize,
    stored: u64,
    lead: u32,
    started: bool,
    done: bool,
    _v: std::marker::PhantomData<V>,
}

impl<'a, V: BitsValue> ChimpDecoder<'a, V> {
    /// A decoder over a value stream at absolute offset `base`.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self {
            r: BitReader::new(data, base),
            ring: [0; 128],
            current: 0,
            stored: 0,
            lead: u32::MAX,
            started: false,
            done: data.is_empty(),
            _v: std::marker::PhantomData,
        }
    }

    fn bad(&self, reason: &str) -> Error {
        Error::Invalid {
            what: "CHIMP stream",
            offset: self.r.offset(),
            reason: reason.into(),
        }
    }

    #[inline(always)]
    fn next_bits(&mut self) -> Result<u64> {
        let p = params(<V::Int as IntValue>::BITS);
        // The longest item is '01' + index + class + length + W bits: when that many bits
        // remain, every read below skips its budget check.
        let fast = self.r.remaining_bits() >= (2 + p.ix + 3 + p.sig_bits + p.w) as usize;
        macro_rules! rd {
            ($n:expr, $what:expr) => {
                if fast {
                    self.r.read_bits_fast($n)
                } else {
                    self.r.read_bits($n, $what)?
                }
            };
        }
        let control = rd!(2, "CHIMP control bits");
        match control {
            3 => {
                let class = rd!(3, "CHIMP leading class") as usize;
                self.lead = LEADING[class];
                let x = rd!(p.w - self.lead, "CHIMP value");
                self.stored ^= x;
            }
            2 => {
                if self.lead > p.w {
                    return Err(self.bad("'10' item without a stored leading class"));
                }
                let x = rd!(p.w - self.lead, "CHIMP value");
                self.stored ^= x;
            }
            1 => {
                let meta = rd!(p.ix + 3 + p.sig_bits, "CHIMP metadata");
                let index = (meta >> (3 + p.sig_bits)) as usize & (p.ring - 1);
                self.lead = LEADING[((meta >> p.sig_bits) & 7) as usize];
                let mut sig = (meta & ((1 << p.sig_bits) - 1)) as u32;
                if sig == 0 {
                    sig = p.w;
                }
                if sig + self.lead > p.w {
                    return Err(self.bad("significant bits exceed the width"));
                }
                let tz = p.w - sig - self.lead;
                self.stored = self.ring[index];
                let x = rd!(sig, "CHIMP value");
                self.stored ^= x << tz;
            }
            _ => {
                let index = rd!(p.ix, "CHIMP ring index") as usize;
                self.stored = self.ring[index];
            }
        }
        self.current = (self.current + 1) & (p.ring - 1);
        self.ring[self.current] = self.stored;
        Ok(self.stored)
    }
}

impl<V: BitsValue> ChimpDecoder<'_, V> {
    /// Decodes items while 16 whole bytes remain, with one 128-bit load per item (the
    /// longest, '01' + index + class + length + W bits, is at most 82 bits).
    #[inline(always)]
    fn decode_fast(&mut self, out: &mut Vec<V>, max: usize) -> usize {
        let p = params(<V::Int as IntValue>::BITS);
        let data = self.r.data();
        let end = self.r.fast_end((2 + p.ix + 3 + p.sig_bits + p.w) as usize);
        let mut pos = self.r.bit_position();
        let (mut stored, mut lead, mut current) = (self.stored, self.lead, self.current);
        let ring_mask = p.ring - 1;
        let mut n = 0;
        out.reserve(max.min(1 << 16));
        while n < max && pos < end {
            let x = peek128_at(data, pos);
            match (x >> 126) as u32 {
                3 => {
                    lead = LEADING[((x >> 123) & 7) as usize];
                    let sig = p.w - lead;
                    stored ^= ((x << 5) >> (128 - sig)) as u64;
                    pos += 5 + sig as usize;
                }
                2 => {
                    if lead > p.w {
                        break;
                    }
                    let sig = p.w - lead;
                    stored ^= ((x << 2) >> (128 - sig)) as u64;
                    pos += 2 + sig as usize;
                }
                1 => {
                    let meta_bits = p.ix + 3 + p.sig_bits;
                    let meta = ((x << 2) >> (128 - meta_bits)) as u32;
                    let index = (meta >> (3 + p.sig_bits)) as usize & ring_mask;
                    lead = LEADING[((meta >> p.sig_bits) & 7) as usize];
                    let mut sig = meta & ((1 << p.sig_bits) - 1);
                    if sig == 0 {
                        sig = p.w;
                    }
                    if sig + lead > p.w {
                        break;
                    }
                    let tz = p.w - sig - lead;
                    let v = ((x << (2 + meta_bits)) >> (128 - sig)) as u64;
                    stored = self.ring[index] ^ (v << tz);
                    pos += (2 + meta_bits + sig) as usize;
                }
                _ => {
                    let index = ((x << 2) >> (128 - p.ix)) as usize;
                    stored = self.ring[index & ring_mask];
                    pos += 2 + p.ix as usize;
                }
            }
            current = (current + 1) & ring_mask;
            self.ring[current] = stored;
            if stored == V::TERMINATOR {
                self.done = true;
                break;
            }
            out.push(V::from_int(<V::Int as IntValue>::from_bits(stored)));
            n += 1;
        }
        self.r.set_bit_position(pos);
        self.stored = stored;
        self.lead = lead;
        self.current = current;
        n
    }
}

impl<V: BitsValue> Decoder<V> for ChimpDecoder<'_, V> {
    fn decode(&mut self, out: &mut Vec<V>, max: usize) -> Result<usize> {
        let w = <V::Int as IntValue>::BITS;
        let mut n = 0;
        if self.done || max == 0 {
            return Ok(0);
        }
        if !self.started {
            self.stored = self.r.read_bits(w, "CHIMP first value")?;
            self.ring[0] = self.stored;
            self.started = true;
            out.push(V::from_int(<V::Int as IntValue>::from_bits(self.stored)));
            n += 1;
        }
        n += self.decode_fast(out, max - n);
        while n < max && !self.done {
            let bits = self.next_bits()?;
            if bits == V::TERMINATOR {
                self.done = true;
                break;
            }
            out.push(V::from_int(<V::Int as IntValue>::from_bits(bits)));
            n += 1;
        }
        Ok(n)
    }

    fn skip(&mut self, n: usize) -> Result<usize> {
        super::skip_by_decoding(self, n)
    }
}

/// The CHIMP encoder (Java `IntChimpEncoder`/`LongChimpEncoder`/...).
#[derive(Debug)]
pub struct ChimpEncoder<V> {
    w: BitWriter,
    started: bool,
    ring: [u64; 128],
    indices: Vec<usize>,
    index: usize,
    current: usize,
    lead: u32,
    _v: std::marker::PhantomData<V>,
}

impl<V: BitsValue> Default for ChimpEncoder<V> {
    fn default() -> Self {
        let p = params(<V::Int as IntValue>::BITS);
        Self {
            w: BitWriter::new(),
            started: false,
            ring: [0; 128],
            indices: vec![0; 1 << (p.threshold + 1)],
            index: 0,
            current: 0,
            lead: u32::MAX,
            _v: std::marker::PhantomData,
        }
    }
}

impl<V: BitsValue> ChimpEncoder<V> {
    fn put_bits(&mut self, value: u64) {
        let p = params(<V::Int as IntValue>::BITS);
        let key = (value & ((1 << (p.threshold + 1)) - 1)) as usize;
        if !self.started {
            self.started = true;
            self.ring[self.current] = value;
            self.indices[key] = self.index;
            self.w.write_bits(value, p.w);
            return;
        }
        let curr_index = self.indices[key];
        let mut trailing = 0;
        let (prev_index, xor) = if self.index - curr_index < p.ring {
            let t = value ^ self.ring[curr_index % p.ring];
            trailing = if t == 0 {
                p.w
            } else {
                t.trailing_zeros().min(p.w)
            };
            if trailing > p.threshold {
                (curr_index % p.ring, t)
            } else {
                let pi = self.index % p.ring;
                (pi, self.ring[pi] ^ value)
            }
        } else {
            let pi = self.index % p.ring;
            (pi, self.ring[pi] ^ value)
        };
        if xor == 0 {
            self.w.write_bits(prev_index as u64, p.ix + 2);
            self.lead = p.w + 1;
        } else {
            let lz = (xor << (64 - p.w)).leading_zeros();
            let class = class_of(lz);
            let lead = LEADING[class as usize];
            if trailing > p.threshold {
                let sig = p.w - lead - trailing;
                let meta = ((p.ring + prev_index) as u64) << (3 + p.sig_bits)
                    | u64::from(class) << p.sig_bits
                    | u64::from(sig & ((1 << p.sig_bits) - 1));
                self.w.write_bits(meta, p.ix + 5 + p.sig_bits);
                self.w.write_bits(xor >> trailing, sig);
                self.lead = p.w + 1;
            } else if lead == self.lead {
                self.w.write_bits(0b10, 2);
                self.w.write_bits(xor, p.w - lead);
            } else {
                self.lead = lead;
                self.w.write_bits(24 + u64::from(class), 5);
                self.w.write_bits(xor, p.w - lead);
            }
        }
        self.current = (self.current + 1) % p.ring;
        self.ring[self.current] = value;
        self.index += 1;
        self.indices[key] = self.index;
    }
}

impl<V: BitsValue> Encoder<V> for ChimpEncoder<V> {
    fn put(&mut self, v: &V) {
        self.put_bits(v.to_int().to_bits());
    }

    fn flush(&mut self, out: &mut Vec<u8>) {
        if !self.started {
            return;
        }
        self.put_bits(V::TERMINATOR);
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

    #[test]
    fn round_trips_repeats_and_ring_hits() {
        let vals: Vec<f64> = (0..500).map(|i| ((i % 37) as f64) * 0.25).collect();
        let mut e = ChimpEncoder::<f64>::default();
        e.put_slice(&vals);
        let mut out = Vec::new();
        e.flush(&mut out);
        let mut d = ChimpDecoder::<f64>::new(&out, 0);
        let mut back = Vec::new();
        d.decode_all(&mut back, usize::MAX).unwrap();
        assert_eq!(back, vals);
    }
}
