//! CHIMP (§8.8): the Chimp128 XOR variant with a ring of previous values (64 entries for
//! 32-bit, 128 for 64-bit values) and leading zeros rounded to eight classes; terminated
//! in-band like GORILLA.

use super::bits::{BitReader, BitWriter};
use super::{BitsValue, Decoder, Encoder, IntValue, XorItems, decode_xor};
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
    /// Decodes items while 16 whole bytes remain at each load and the longest item ('01'
    /// + index + class + length + W bits, at most 82 bits) fits the bit budget.
    ///
    /// Two things bound the speed here. First, real series mix '00' (exact ring hit) and
    /// '01' (ring hit with a short XOR) items almost at random, so a branch per control
    /// code mispredicts on about every other item. Both start with the same ring index,
    /// so they share one branch-free path: a '00' is a '01' whose XOR is empty and whose
    /// header stops after the index. Only '10' and '11', which come in long runs, branch.
    /// Second, each item's position depends on the previous item's header, and a load
    /// from memory is the slowest link of that chain; so items go in pairs, the second
    /// header being read from the 128 bits already loaded for the first (a first item
    /// takes at most 82 of the 121 bits the load guarantees, and a header 18). The XOR
    /// bits of the second item come from a load at their own position, which is off the
    /// chain.
    #[inline(always)]
    fn decode_fast(&mut self, out: &mut Vec<V>, max: usize) -> usize {
        let p = params(<V::Int as IntValue>::BITS);
        let (w, ix, sb) = (p.w, p.ix, p.sig_bits);
        let data = self.r.data();
        let end = self.r.fast_end((2 + ix + 3 + sb + w) as usize);
        // A pair reads at most 82 + 18 bits past its start and then 16 bytes: starting
        // 128 bits before `end` keeps all of that inside `data`.
        let end2 = end.saturating_sub(128);
        let mut pos = self.r.bit_position();
        let (mut stored, mut lead, mut current) = (self.stored, self.lead, self.current);
        let ring_mask = p.ring - 1;
        // A '01' header: control, index, leading class and significant-bit count.
        let hdr01 = 2 + ix + 3 + sb;
        let mut n = 0;
        // Values go to a small local block first and reach `out` a block at a time, so
        // the loop carries no `Vec` length and capacity checks.
        let mut block = [V::default(); BLOCK];
        // One item whose header is the top of `$h` (at least 18 real bits) and which
        // starts at bit `$q`; `$val(off, sig)` gives the `sig` (1..=64) bits at `off`
        // bits past the item's start. Ends the block (`$stop`) on a terminator or on
        // something only the checked path can report.
        macro_rules! item {
            ($h:expr, $q:expr, $val:expr, $k:ident, $stop:lifetime) => {{
                let h: u64 = $h;
                let q: usize = $q;
                let val = $val;
                let control = (h >> 62) as u32;
                let adv = if control < 2 {
                    let is01 = control;
                    let index = (h >> (62 - ix)) as usize & ring_mask;
                    let meta = (h >> (64 - hdr01)) as u32;
                    let lead01 = LEADING[((meta >> sb) & 7) as usize];
                    let raw = meta & ((1 << sb) - 1);
                    let sig01 = if raw == 0 { w } else { raw };
                    // Only a '01' item is checked (after a '00' these bits belong to the
                    // next item), by masking rather than by a test of the control code,
                    // which the compiler would turn back into the branch avoided here.
                    let keep = 0u32.wrapping_sub(is01);
                    if (sig01 & keep) + (lead01 & keep) > w {
                        pos = q;
                        break $stop;
                    }
                    // `sig01` is 1..=W, so the shifts stay below 64; a '00' masks the
                    // XOR to zero and moves by its header only.
                    let v = val(hdr01, sig01) & 0u64.wrapping_sub(u64::from(is01));
                    let tz = w.wrapping_sub(sig01 + lead01) & 63;
                    stored = self.ring[index] ^ (v << tz);
                    lead = if is01 == 1 { lead01 } else { lead };
                    2 + ix + ((3 + sb + sig01) & keep)
                } else if control == 3 {
                    lead = LEADING[((h >> 59) & 7) as usize];
                    let sig = w - lead;
                    stored ^= val(5, sig);
                    5 + sig
                } else {
                    if lead > w {
                        pos = q;
                        break $stop;
                    }
                    let sig = w - lead;
                    stored ^= val(2, sig);
                    2 + sig
                };
                current = (current + 1) & ring_mask;
                self.ring[current] = stored;
                if stored == V::TERMINATOR {
                    self.done = true;
                    pos = q + adv as usize;
                    break $stop;
                }
                block[$k] = V::from_int(<V::Int as IntValue>::from_bits(stored));
                $k += 1;
                adv as usize
            }};
        }
        'all: while n < max {
            let lim = (max - n).min(BLOCK);
            let mut k = 0;
            'block: {
                while k + 2 <= lim && pos < end2 {
                    let x = load128(data, pos);
                    let a = item!((x >> 64) as u64, pos, |off: u32, sig: u32| {
                        (((x << off) >> 64) as u64) >> (64 - sig)
                    }, k, 'block);
                    let y = x << a;
                    let qb = pos + a;
                    let b = item!((y >> 64) as u64, qb, |off: u32, sig: u32| {
                        ((load128(data, qb + off as usize) >> 64) as u64) >> (64 - sig)
                    }, k, 'block);
                    pos = qb + b;
                }
                while k < lim && pos < end {
                    let x = load128(data, pos);
                    let a = item!((x >> 64) as u64, pos, |off: u32, sig: u32| {
                        (((x << off) >> 64) as u64) >> (64 - sig)
                    }, k, 'block);
                    pos += a;
                }
                if k == lim {
                    out.extend_from_slice(&block[..k]);
                    n += k;
                    continue 'all;
                }
            }
            out.extend_from_slice(&block[..k]);
            n += k;
            break 'all;
        }
        self.r.set_bit_position(pos);
        self.stored = stored;
        self.lead = lead;
        self.current = current;
        n
    }
}

/// Values decoded into a local block before they are appended to the output.
const BLOCK: usize = 128;

/// The 128 bits at bit `pos` of `data`, left-aligned (at least 121 of them real); zero
/// when the 16 bytes there are not all inside `data` (callers keep `pos` far enough from
/// the end that this never happens, and a zero cannot panic).
#[inline(always)]
fn load128(data: &[u8], pos: usize) -> u128 {
    let b = pos >> 3;
    match data.get(b..b + 16) {
        Some(s) => {
            let mut a = [0u8; 16];
            a.copy_from_slice(s);
            u128::from_be_bytes(a) << (pos & 7)
        }
        None => 0,
    }
}

impl<V: BitsValue> XorItems<V> for ChimpDecoder<'_, V> {
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
        self.stored = self.r.read_bits(w, "CHIMP first value")?;
        self.ring[0] = self.stored;
        self.started = true;
        Ok(self.stored)
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

impl<V: BitsValue> Decoder<V> for ChimpDecoder<'_, V> {
    fn decode(&mut self, out: &mut Vec<V>, max: usize) -> Result<usize> {
        decode_xor(self, out, max)
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

#[cfg(test)]
mod fast_path_tests {
    use super::*;

    /// Deterministic pseudo-random numbers (xorshift64).
    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// Decodes with the checked item-by-item path only: the values before the end or the
    /// first error, and whether there was an error.
    fn checked_only<V: BitsValue>(data: &[u8]) -> (Vec<V>, bool) {
        let mut d = ChimpDecoder::<V>::new(data, 0);
        let mut out = Vec::new();
        if d.done {
            return (out, false);
        }
        match d.r.read_bits(<V::Int as IntValue>::BITS, "first") {
            Ok(b) => {
                d.stored = b;
                d.ring[0] = b;
                out.push(V::from_int(<V::Int as IntValue>::from_bits(b)));
            }
            Err(_) => return (out, true),
        }
        loop {
            match d.next_bits() {
                Ok(b) if b == V::TERMINATOR => return (out, false),
                Ok(b) => out.push(V::from_int(<V::Int as IntValue>::from_bits(b))),
                Err(_) => return (out, true),
            }
        }
    }

    /// Decodes with the public path in calls of `chunk` values at most.
    fn decoded<V: BitsValue>(data: &[u8], chunk: usize) -> (Vec<V>, bool) {
        let mut d = ChimpDecoder::<V>::new(data, 0);
        let mut out = Vec::new();
        loop {
            match d.decode(&mut out, chunk) {
                Ok(0) => return (out, false),
                Ok(_) => {}
                Err(_) => return (out, true),
            }
        }
    }

    fn agree<V: BitsValue>(data: &[u8]) {
        let want = checked_only::<V>(data);
        for chunk in [1, 2, 3, 127, 128, 129, 1000, usize::MAX] {
            assert_eq!(decoded::<V>(data, chunk), want, "chunk {chunk}");
        }
    }

    fn encode<V: BitsValue>(vals: &[V]) -> Vec<u8> {
        let mut e = ChimpEncoder::<V>::default();
        e.put_slice(vals);
        let mut out = Vec::new();
        e.flush(&mut out);
        out
    }

    #[test]
    fn fast_and_checked_paths_agree_on_every_item_kind() {
        // A random walk with repeats ('00'), near repeats ('01') and fresh values ('10',
        // '11'), for every width.
        let mut r = rng(7);
        let mut level = 2000i64;
        let mut walk = Vec::new();
        for i in 0..5000 {
            level += (r() % 21) as i64 - 10;
            walk.push(if i % 97 == 0 { r() as i64 } else { level });
        }
        let d: Vec<f64> = walk.iter().map(|&v| v as f64 / 100.0).collect();
        let f: Vec<f32> = d.iter().map(|&v| v as f32).collect();
        let i32s: Vec<i32> = walk.iter().map(|&v| (v as i32).max(i32::MIN + 1)).collect();
        let i64s: Vec<i64> = walk.iter().map(|&v| v.max(i64::MIN + 1)).collect();
        let (bd, bf, b32, b64) = (encode(&d), encode(&f), encode(&i32s), encode(&i64s));
        agree::<f64>(&bd);
        agree::<f32>(&bf);
        agree::<i32>(&b32);
        agree::<i64>(&b64);
        assert_eq!(decoded::<f64>(&bd, usize::MAX), (d, false));
        assert_eq!(decoded::<f32>(&bf, 5), (f, false));
        assert_eq!(decoded::<i32>(&b32, 129), (i32s, false));
        assert_eq!(decoded::<i64>(&b64, 2), (i64s, false));
        // Every truncation of a valid stream.
        for cut in (0..bd.len()).step_by(37) {
            agree::<f64>(&bd[..cut]);
            agree::<f32>(&bf[..cut.min(bf.len())]);
        }
    }

    #[test]
    fn fast_and_checked_paths_agree_on_random_bytes() {
        let mut r = rng(11);
        for len in (0..600).step_by(7) {
            let bytes: Vec<u8> = (0..len).map(|_| r() as u8).collect();
            agree::<f64>(&bytes);
            agree::<f32>(&bytes);
            agree::<i32>(&bytes);
            agree::<i64>(&bytes);
            // Mostly '00'/'01' items, the kind the branch-free path takes.
            let low: Vec<u8> = bytes.iter().map(|b| b & 0x7f).collect();
            agree::<f64>(&low);
            agree::<i32>(&low);
        }
    }
}
