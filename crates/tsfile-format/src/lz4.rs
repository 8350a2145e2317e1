//! An LZ4 block compressor that produces the same bytes as the reference liblz4's
//! `LZ4_compress_default` (version 1.9.x and 1.10, acceleration 1, default
//! `LZ4_MEMORY_USAGE` of 14), so that TsFile pages compressed here equal the pages of the
//! C++ TsFile writer, which links liblz4.
//!
//! The LZ4 block format leaves the choice of matches to the compressor, and `lz4_flex`
//! chooses differently from liblz4 (another hash, another table size, another end-of-block
//! rule). This module is a transcription of liblz4's `LZ4_compress_generic` for the one path
//! `LZ4_compress_default` takes on a 64-bit little-endian machine: no dictionary, output not
//! limited (the output grows as needed), and
//!
//! * inputs shorter than `LZ4_64Klimit` (64 KiB + 11 bytes) use the `byU16` table: 8,192
//!   16-bit positions hashed from 4 bytes with Knuth's multiplicative hash;
//! * longer inputs use the `byU32` table: 4,096 32-bit positions hashed from 5 bytes, with
//!   candidates more than 65,535 bytes back refused.
//!
//! The search skips ahead faster the longer it finds nothing (`searchMatchNb`), a match is
//! extended backwards over the pending literals ("catch up") and forwards up to
//! `LASTLITERALS` bytes before the end, and after each match the position two bytes back is
//! hashed and the current position is tried at once before the search resumes. Decoding
//! stays with `lz4_flex`: any correct decoder reads these blocks.
//!
//! liblz4 computes its hashes on native-endian loads; the little-endian variant is
//! implemented here whatever the host, because that is what x86-64 and AArch64 writers emit.

/// The shortest match the format allows.
const MIN_MATCH: usize = 4;
/// The last 5 bytes of a block are always literals.
const LAST_LITERALS: usize = 5;
/// The last match must start at least 12 bytes before the end of the block.
const MF_LIMIT: usize = 12;
/// Inputs shorter than this are emitted as literals only.
const MIN_LENGTH: usize = MF_LIMIT + 1;
/// Inputs shorter than this use the 16-bit position table.
const LIMIT_64K: usize = 64 * 1024 + (MF_LIMIT - 1);
/// The search step grows by one every `1 << SKIP_TRIGGER` failed attempts.
const SKIP_TRIGGER: u32 = 6;
/// log2 of the number of 32-bit table entries (`LZ4_MEMORY_USAGE - 2`).
const HASH_LOG: u32 = 12;
/// The farthest back a match may start.
const DISTANCE_MAX: usize = 65_535;
/// The token's four bits of literal or match length saturate at this value.
const RUN_MASK: usize = 15;

/// The largest input liblz4 accepts (`LZ4_MAX_INPUT_SIZE`); [`compress`] refuses more.
pub(crate) const MAX_INPUT_SIZE: usize = 0x7E00_0000;

/// Compresses `input` into one raw LZ4 block, byte for byte as `LZ4_compress_default` does.
/// Returns `None` for inputs over [`MAX_INPUT_SIZE`], which liblz4 refuses as well.
pub(crate) fn compress(input: &[u8]) -> Option<Vec<u8>> {
    if input.len() > MAX_INPUT_SIZE {
        return None;
    }
    let mut out = Vec::with_capacity(input.len() + input.len() / 255 + 16);
    if input.len() < LIMIT_64K {
        compress_with(input, &mut U16Table([0; 1 << (HASH_LOG + 1)]), &mut out);
    } else {
        compress_with(input, &mut U32Table(vec![0; 1 << HASH_LOG]), &mut out);
    }
    Some(out)
}

/// The position table of one compression: how positions are hashed and stored.
trait Table {
    /// Whether candidates farther back than [`DISTANCE_MAX`] must be refused (a 16-bit
    /// table cannot hold such positions, so liblz4 skips the test for it).
    const CHECK_DISTANCE: bool;
    /// The hash of the bytes at `p` (at least 8 readable bytes remain there).
    fn hash(input: &[u8], p: usize) -> usize;
    /// The position last stored under hash `h` (0 when none was).
    fn get(&self, h: usize) -> usize;
    /// Stores position `p` under hash `h`.
    fn put(&mut self, h: usize, p: usize);
}

/// liblz4's `byU16` table, for inputs under [`LIMIT_64K`].
struct U16Table([u16; 1 << (HASH_LOG + 1)]);

impl Table for U16Table {
    const CHECK_DISTANCE: bool = false;

    #[inline(always)]
    fn hash(input: &[u8], p: usize) -> usize {
        (read32(input, p).wrapping_mul(2_654_435_761) >> (32 - (HASH_LOG + 1))) as usize
    }

    #[inline(always)]
    fn get(&self, h: usize) -> usize {
        usize::from(self.0[h])
    }

    #[inline(always)]
    fn put(&mut self, h: usize, p: usize) {
        // Positions stored are below LIMIT_64K - MF_LIMIT, which fits 16 bits.
        self.0[h] = p as u16;
    }
}

/// liblz4's `byU32` table, for inputs of [`LIMIT_64K`] bytes and more.
struct U32Table(Vec<u32>);

impl Table for U32Table {
    const CHECK_DISTANCE: bool = true;

    #[inline(always)]
    fn hash(input: &[u8], p: usize) -> usize {
        const PRIME_5_BYTES: u64 = 889_523_592_379;
        ((read64(input, p) << 24).wrapping_mul(PRIME_5_BYTES) >> (64 - HASH_LOG)) as usize
    }

    #[inline(always)]
    fn get(&self, h: usize) -> usize {
        self.0[h] as usize
    }

    #[inline(always)]
    fn put(&mut self, h: usize, p: usize) {
        // Inputs are at most MAX_INPUT_SIZE bytes, so positions fit 32 bits.
        self.0[h] = p as u32;
    }
}

#[inline(always)]
fn read32(input: &[u8], p: usize) -> u32 {
    let b: [u8; 4] = input[p..p + 4].try_into().unwrap_or([0; 4]);
    u32::from_le_bytes(b)
}

#[inline(always)]
fn read64(input: &[u8], p: usize) -> u64 {
    let b: [u8; 8] = input[p..p + 8].try_into().unwrap_or([0; 8]);
    u64::from_le_bytes(b)
}

/// How many bytes at `a` equal those at `b` (`b < a`), counting no byte at or past `limit`
/// (liblz4's `LZ4_count`, which compares 8 bytes at a time the same way).
#[inline(always)]
fn count(input: &[u8], mut a: usize, mut b: usize, limit: usize) -> usize {
    let start = a;
    while a + 8 <= limit {
        let diff = read64(input, a) ^ read64(input, b);
        if diff != 0 {
            return a - start + (diff.trailing_zeros() / 8) as usize;
        }
        a += 8;
        b += 8;
    }
    while a < limit && input[a] == input[b] {
        a += 1;
        b += 1;
    }
    a - start
}

/// Appends the extra bytes of a length whose token nibble saturated (`len` is what remains
/// after subtracting [`RUN_MASK`]).
#[inline(always)]
fn push_length(out: &mut Vec<u8>, mut len: usize) {
    while len >= 255 {
        out.push(255);
        len -= 255;
    }
    out.push(len as u8);
}

/// Appends one literal run with its token and returns the token's index, so that the match
/// length can be added to it.
#[inline(always)]
fn push_literals(out: &mut Vec<u8>, literals: &[u8]) -> usize {
    let token = out.len();
    if literals.len() >= RUN_MASK {
        out.push((RUN_MASK << 4) as u8);
        push_length(out, literals.len() - RUN_MASK);
    } else {
        out.push((literals.len() << 4) as u8);
    }
    out.extend_from_slice(literals);
    token
}

/// `LZ4_compress_generic` with `noDict`, `notLimited` and acceleration 1 over the table `T`.
fn compress_with<T: Table>(input: &[u8], table: &mut T, out: &mut Vec<u8>) {
    let mut anchor = 0usize;
    if input.len() >= MIN_LENGTH {
        anchor = compress_sequences(input, table, out);
    }
    // The last literals, which close every block (an empty input gives a lone 0 token).
    push_literals(out, &input[anchor..]);
}

/// The main loop: emits every sequence that ends with a match and returns where the last
/// literals start. `input` has at least [`MIN_LENGTH`] bytes.
fn compress_sequences<T: Table>(input: &[u8], table: &mut T, out: &mut Vec<u8>) -> usize {
    // A match may start up to here (exclusive of the value + 1 in liblz4's naming) ...
    let mflimit_plus_one = input.len() - MF_LIMIT + 1;
    // ... and extend up to here, so that the block ends with LAST_LITERALS literals.
    let match_limit = input.len() - LAST_LITERALS;
    let mut anchor = 0usize;

    table.put(T::hash(input, 0), 0);
    let mut ip = 1usize;
    let mut forward_h = T::hash(input, ip);

    loop {
        // Find a match, stepping further ahead the longer none is found.
        let mut candidate;
        let mut forward_ip = ip;
        let mut step = 1usize;
        let mut search_match_nb = 1usize << SKIP_TRIGGER;
        loop {
            let h = forward_h;
            let current = forward_ip;
            let match_index = table.get(h);
            ip = forward_ip;
            forward_ip += step;
            step = search_match_nb >> SKIP_TRIGGER;
            search_match_nb += 1;
            if forward_ip > mflimit_plus_one {
                return anchor;
            }
            candidate = match_index;
            forward_h = T::hash(input, forward_ip);
            table.put(h, current);
            if T::CHECK_DISTANCE && match_index + DISTANCE_MAX < current {
                continue;
            }
            if read32(input, candidate) == read32(input, ip) {
                break;
            }
        }

        // Catch up: extend the match backwards over the pending literals.
        while ip > anchor && candidate > 0 && input[ip - 1] == input[candidate - 1] {
            ip -= 1;
            candidate -= 1;
        }

        let mut token = push_literals(out, &input[anchor..ip]);

        loop {
            // The offset, then the match length beyond MIN_MATCH.
            out.extend_from_slice(&((ip - candidate) as u16).to_le_bytes());
            let match_code = count(input, ip + MIN_MATCH, candidate + MIN_MATCH, match_limit);
            ip += match_code + MIN_MATCH;
            if match_code >= RUN_MASK {
                out[token] += RUN_MASK as u8;
                push_length(out, match_code - RUN_MASK);
            } else {
                out[token] += match_code as u8;
            }
            anchor = ip;

            if ip >= mflimit_plus_one {
                return anchor;
            }

            // Fill the table with the position two bytes back, then try the current
            // position at once: a hit is a match with no literals before it.
            table.put(T::hash(input, ip - 2), ip - 2);
            let h = T::hash(input, ip);
            let match_index = table.get(h);
            table.put(h, ip);
            if (!T::CHECK_DISTANCE || match_index + DISTANCE_MAX >= ip)
                && read32(input, match_index) == read32(input, ip)
            {
                candidate = match_index;
                token = out.len();
                out.push(0);
                continue;
            }
            break;
        }

        ip += 1;
        forward_h = T::hash(input, ip);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(input: &[u8]) -> Vec<u8> {
        let z = compress(input).unwrap();
        let back = lz4_flex::block::decompress(&z, input.len()).unwrap();
        assert_eq!(back, input);
        z
    }

    #[test]
    fn short_inputs_are_literals_only() {
        assert_eq!(round_trip(b""), [0]);
        assert_eq!(round_trip(b"a"), [0x10, b'a']);
        let twelve = [7u8; 12];
        let z = round_trip(&twelve);
        assert_eq!(z[0], 0xC0);
        assert_eq!(z.len(), 13);
    }

    #[test]
    fn a_run_ends_five_literals_before_the_end() {
        // 13 equal bytes: one literal, a match of 7 at offset 1, then the 5 last literals.
        let z = round_trip(&[9u8; 13]);
        assert_eq!(z, [0x13, 9, 1, 0, 0x50, 9, 9, 9, 9, 9]);
    }

    #[test]
    fn long_lengths_use_extra_bytes() {
        let mut data = (0..300u32).map(|i| (i * 7 % 251) as u8).collect::<Vec<_>>();
        data.extend(std::iter::repeat_n(0u8, 5000));
        round_trip(&data);
    }

    #[test]
    fn both_tables_round_trip_around_the_64k_limit() {
        for len in [LIMIT_64K - 1, LIMIT_64K, LIMIT_64K + 1, 200_000] {
            let data: Vec<u8> = (0..len as u64)
                .map(|i| (i.wrapping_mul(0x9E37_79B9) >> 13) as u8 & 0x3F)
                .collect();
            round_trip(&data);
        }
    }
}
