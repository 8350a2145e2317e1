//! Number recognition shared by the row formats' type inference: word-at-a-time checks of
//! plain integers and decimals inside a larger buffer, the byte-by-byte rules they agree with,
//! and exact fast conversions of the common texts to values.

/// What [`number_kind`] could tell about a field without looking at it byte by byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NumberKind {
    /// `-?[0-9]{1,18}`: an i64 integer.
    Int,
    /// `-?[0-9]*\.[0-9]*` with at least one digit: a plain decimal number.
    Decimal,
    /// Anything else (an exponent, text, a field longer than 24 bytes or at the end of the
    /// buffer): the caller classifies it byte by byte.
    Unknown,
}

/// The high bit of every byte of a word.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The little-endian word of the 8 bytes of `data` at `at`, when there are 8.
#[inline(always)]
pub(crate) fn word_at(data: &[u8], at: usize) -> Option<u64> {
    let bytes: [u8; 8] = data.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// One bit per byte of `w` (bit k for byte k) set when that byte is not an ASCII digit.
#[inline(always)]
fn non_digit_bits(w: u64) -> u32 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // Digits become 0..=9; adding 0x76 to the low 7 bits sets the high bit of every byte
    // above 9 without carrying into the next byte (at most 0x7f + 0x76 = 0xf5).
    let x = w ^ 0x3030_3030_3030_3030;
    let high = (x | ((x & LOW7) + 0x7676_7676_7676_7676)) & HIGH_BITS;
    // Gathers the eight high bits into the top byte: the products land on distinct bits.
    (((high >> 7).wrapping_mul(0x0102_0408_1020_4080)) >> 56) as u32
}

/// Recognises the common plain numbers of the field `data[start..end]` (non-empty) a word
/// at a time. `Int` and `Decimal` are certain; `Unknown` says nothing.
#[inline(always)]
pub(crate) fn number_kind(data: &[u8], start: usize, end: usize) -> NumberKind {
    let n = end.saturating_sub(start);
    if n == 0 {
        return NumberKind::Unknown;
    }
    // Bit k is set when byte `start + k` of the field is not a digit.
    let mask: u32 = if n <= 8 {
        // Near the end of the buffer the word ending with the field serves, shifted down.
        let w = match word_at(data, start) {
            Some(w) => w,
            None => match end.checked_sub(8).and_then(|at| word_at(data, at)) {
                Some(w) => w >> (64 - 8 * n),
                None => return NumberKind::Unknown,
            },
        };
        non_digit_bits(w) & ((1u32 << n) - 1)
    } else if n <= 16 {
        let (Some(a), Some(b)) = (word_at(data, start), word_at(data, end - 8)) else {
            return NumberKind::Unknown;
        };
        non_digit_bits(a) | (non_digit_bits(b) << (n - 8))
    } else if n <= 24 {
        let (Some(a), Some(b), Some(c)) = (
            word_at(data, start),
            word_at(data, start + 8),
            word_at(data, end - 8),
        ) else {
            return NumberKind::Unknown;
        };
        non_digit_bits(a) | (non_digit_bits(b) << 8) | (non_digit_bits(c) << (n - 8))
    } else {
        return NumberKind::Unknown;
    };
    let neg = data[start] == b'-';
    let mask = mask & !u32::from(neg);
    let body = n - usize::from(neg);
    if mask == 0 {
        // At most 24 digits here: only up to 18 are certainly within i64.
        if (1..=18).contains(&body) {
            return NumberKind::Int;
        }
        return NumberKind::Unknown;
    }
    // One non-digit byte, a `.`, with a digit somewhere (`body` counts the dot).
    if mask & (mask - 1) == 0 && data[start + mask.trailing_zeros() as usize] == b'.' && body >= 2 {
        return NumberKind::Decimal;
    }
    NumberKind::Unknown
}

/// The shape of the number `data[base + s..base + t]` (non-empty, `t` < 64) read off
/// `non_digit`, the mask of the bytes from `base` on that are not ASCII digits: `Int` for
/// `-?[0-9]{1,18}`, `Decimal` for digits with one `.` (and a digit), else `Unknown` — the
/// answers of [`number_kind`], from bits already computed. Also the position of a
/// `Decimal`'s dot.
#[inline(always)]
pub(crate) fn masked_number(
    data: &[u8],
    base: usize,
    s: u32,
    t: u32,
    non_digit: u64,
) -> (NumberKind, usize) {
    let field = ((1u64 << t) - 1) & !((1u64 << s) - 1);
    let neg = data[base + s as usize] == b'-';
    let mut nd = non_digit & field;
    if neg {
        nd &= !(1u64 << s);
    }
    // The digits, and the dot when there is one.
    let body = t - s - u32::from(neg);
    let dot = base + nd.trailing_zeros() as usize;
    let kind = if nd == 0 {
        if (1..=18).contains(&body) {
            NumberKind::Int
        } else {
            NumberKind::Unknown
        }
    } else if nd & (nd - 1) == 0 && data[dot] == b'.' && body >= 2 {
        NumberKind::Decimal
    } else {
        NumberKind::Unknown
    };
    (kind, dot)
}

/// The end and kind of the JSON number starting at `data[start]` (a `-` or a digit) when it
/// is recognised a word at a time: `-?[0-9]{1,18}` or a plain decimal within 24 bytes,
/// followed by a byte that cannot continue a number (the byte-by-byte scan would stop there
/// too). `None` says nothing: the caller scans byte by byte.
#[inline(always)]
pub(crate) fn json_number_end(data: &[u8], start: usize) -> Option<(usize, NumberKind)> {
    let neg = data.get(start) == Some(&b'-');
    // Three words are always read: a branch on whether the number goes on past the first
    // word is often mispredicted.
    let mask = (non_digit_bits(word_at(data, start)?)
        | (non_digit_bits(word_at(data, start + 8)?) << 8)
        | (non_digit_bits(word_at(data, start + 16)?) << 16))
        & !u32::from(neg);
    let neg = usize::from(neg);
    let k = mask.trailing_zeros() as usize;
    if k >= 24 {
        return None;
    }
    let continues = |b: u8| matches!(b, b'+' | b'-' | b'.' | b'e' | b'E');
    if data[start + k] == b'.' {
        let k2 = (mask & (mask - 1)).trailing_zeros() as usize;
        // At least one digit besides the dot.
        if k2 < 24 && k2 - neg >= 2 && !continues(data[start + k2]) {
            return Some((start + k2, NumberKind::Decimal));
        }
        return None;
    }
    if (1..=18).contains(&(k - neg)) && !continues(data[start + k]) {
        return Some((start + k, NumberKind::Int));
    }
    None
}

/// True when `text` is `-?[0-9]+` within i64 (what [`parse_i64`] accepts), without computing
/// the value unless it has 19 digits.
#[inline(always)]
pub(crate) fn is_i64_text(text: &[u8]) -> bool {
    let digits = match text.first() {
        Some(b'-') => &text[1..],
        _ => text,
    };
    match digits.len() {
        1..=18 => digits.iter().all(u8::is_ascii_digit),
        19 => parse_i64(text).is_some(),
        _ => false,
    }
}

/// Parses `-?[0-9]+` into an i64, or `None` when the text is not such an integer or overflows.
#[inline]
pub(crate) fn parse_i64(b: &[u8]) -> Option<i64> {
    let (neg, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut acc: i64 = 0;
    if digits.len() < 19 {
        // Up to 18 digits cannot overflow.
        for &d in digits {
            let d = d.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            acc = acc * 10 + i64::from(d);
        }
        return Some(if neg { -acc } else { acc });
    }
    for &d in digits {
        let d = d.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        // Accumulate negatively so that i64::MIN parses.
        acc = acc.checked_mul(10)?.checked_sub(i64::from(d))?;
    }
    if neg { Some(acc) } else { acc.checked_neg() }
}

/// Exact powers of ten up to 10^22, the largest that an f64 holds exactly.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The value of the `n` (1..=8) ASCII digits in the low bytes of the little-endian word `w`
/// (the first digit lowest), in three multiplies (Lemire's eight-digit method; the digits
/// are shifted to the top so that the missing ones count as leading zeros).
#[inline(always)]
fn eight_digits(w: u64, n: usize) -> u64 {
    let v = (w & 0x0F0F_0F0F_0F0F_0F0F) << (8 * (8 - n));
    let v = (v.wrapping_mul(2561) >> 8) & 0x00FF_00FF_00FF_00FF;
    let v = (v.wrapping_mul(6_553_601) >> 16) & 0x0000_FFFF_0000_FFFF;
    v.wrapping_mul(42_949_672_960_001) >> 32
}

/// The value of the ASCII digits `data[start..end]` (1 to 18 of them), a word at a time.
#[inline(always)]
fn digits_value(data: &[u8], start: usize, end: usize) -> u64 {
    let n = end - start;
    match n {
        1..=8 => {
            if let Some(w) = word_at(data, start) {
                return eight_digits(w, n);
            }
            // Near the end of the data: the word that ends with the digits, shifted down.
            if let Some(w) = end.checked_sub(8).and_then(|at| word_at(data, at)) {
                return eight_digits(w >> (8 * (8 - n)), n);
            }
        }
        9..=16 => {
            if let (Some(a), Some(b)) = (word_at(data, start), word_at(data, end - 8)) {
                return eight_digits(a, n - 8) * 100_000_000 + eight_digits(b, 8);
            }
        }
        17..=18 => {
            if let (Some(a), Some(b), Some(c)) = (
                word_at(data, start),
                word_at(data, end - 16),
                word_at(data, end - 8),
            ) {
                return eight_digits(a, n - 16) * 10_000_000_000_000_000
                    + eight_digits(b, 8) * 100_000_000
                    + eight_digits(c, 8);
            }
        }
        _ => {}
    }
    data[start..end].iter().fold(0u64, |acc, &d| {
        acc.wrapping_mul(10)
            .wrapping_add(u64::from(d.wrapping_sub(b'0')))
    })
}

/// The value of a plain decimal `-?[0-9]*\.?[0-9]*` (what [`NumberKind::Decimal`] and
/// [`NumberKind::Int`] certify) when Clinger's fast path gives it exactly: the digits without
/// the dot form an integer of at most 2^53 and at most 22 of them follow the dot. Both the
/// integer and the power of ten are then exact f64 values, so one correctly rounded division
/// yields the correctly rounded value, the same that `str::parse::<f64>` returns. `None` for
/// any other text: the caller parses it in full.
#[cfg(test)]
pub(crate) fn decimal_value(text: &[u8]) -> Option<f64> {
    let body = usize::from(text.first() == Some(&b'-'));
    let dot = text[body..]
        .iter()
        .position(|&b| b == b'.')
        .map_or(text.len(), |i| body + i);
    let shape = text[body..]
        .iter()
        .enumerate()
        .all(|(i, b)| b.is_ascii_digit() || body + i == dot);
    if !shape {
        return None;
    }
    if dot == text.len() {
        // An integer: the value of its digits with a dot at the end.
        let mut t = text.to_vec();
        t.push(b'.');
        return decimal_parts_at(&t, 0, text.len(), t.len()).map(Decimal::value);
    }
    decimal_parts_at(text, 0, dot, text.len()).map(Decimal::value)
}

/// A plain decimal as `mantissa / 10^scale` with its sign, the mantissa at most 2^53.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Decimal {
    mantissa: u64,
    scale: usize,
    neg: bool,
}

impl Decimal {
    /// The correctly rounded value: one division of two exact f64 values.
    #[inline(always)]
    pub(crate) fn value(self) -> f64 {
        let v = self.mantissa as f64 / POW10[self.scale];
        // `v` is not negative: setting the sign bit negates it exactly (0 becomes -0.0).
        f64::from_bits(v.to_bits() | (u64::from(self.neg) << 63))
    }

    /// True when the value certainly lies strictly between `lo` and `hi`, decided with a
    /// multiplication instead of a division: the product is within 2^-52 of the value
    /// (relative), far inside the 10^-14 margin allowed here.
    #[inline(always)]
    pub(crate) fn strictly_inside(self, lo: f64, hi: f64) -> bool {
        let a = self.mantissa as f64 * INV_POW10[self.scale];
        let a = if self.neg { -a } else { a };
        let margin = a.abs() * 1e-14;
        a - margin > lo && a + margin < hi
    }
}

/// The nearest f64 values to 10^-k.
const INV_POW10: [f64; 23] = [
    1e0, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12, 1e-13, 1e-14,
    1e-15, 1e-16, 1e-17, 1e-18, 1e-19, 1e-20, 1e-21, 1e-22,
];

/// The plain decimal `data[start..end]`, a text that [`NumberKind::Decimal`] certifies
/// (`-?[0-9]*\.[0-9]*` with a digit) whose dot is at `dot`, as parts for [`Decimal::value`],
/// reading words of `data` around it; `None` beyond the exact range.
#[inline(always)]
pub(crate) fn decimal_parts_at(
    data: &[u8],
    start: usize,
    dot: usize,
    end: usize,
) -> Option<Decimal> {
    let neg = data.get(start) == Some(&b'-');
    let body = start + usize::from(neg);
    let int_digits = dot.checked_sub(body)?;
    let frac_digits = end.checked_sub(dot + 1)?;
    let digits = int_digits + frac_digits;
    if digits == 0 || digits > 18 {
        return None;
    }
    let int = if int_digits > 0 {
        digits_value(data, body, dot)
    } else {
        0
    };
    let frac = if frac_digits > 0 {
        digits_value(data, dot + 1, end)
    } else {
        0
    };
    // At most 18 digits: below 10^18, no overflow.
    let mantissa = int * POW10_INT[frac_digits] + frac;
    if mantissa > 1 << 53 {
        return None;
    }
    Some(Decimal {
        mantissa,
        scale: frac_digits,
        neg,
    })
}

/// Integer powers of ten up to 10^18.
const POW10_INT: [u64; 19] = {
    let mut p = [1u64; 19];
    let mut i = 1;
    while i < 19 {
        p[i] = p[i - 1] * 10;
        i += 1;
    }
    p
};

/// The value of an integer text that [`NumberKind::Int`] certifies (`-?[0-9]{1,18}`), without
/// checks; anything else gives a meaningless number but no panic. (Tests call it on texts.)
#[cfg(test)]
pub(crate) fn int_value(text: &[u8]) -> i64 {
    int_value_at(text, 0, text.len())
}

/// [`int_value`] of `data[start..end]`, reading words of `data` around it.
#[inline(always)]
pub(crate) fn int_value_at(data: &[u8], start: usize, end: usize) -> i64 {
    let neg = data.get(start) == Some(&b'-');
    let body = start + usize::from(neg);
    if body >= end || end - body > 18 {
        return 0;
    }
    let v = digits_value(data, body, end) as i64;
    // Branch-free negation: `(v ^ -1) + 1` is `-v`.
    let n = i64::from(neg);
    (v ^ -n) + n
}

/// The index of the first `.` byte of the little-endian word `w` (8 when there is none):
/// bytes equal to `.` become zero, and the lowest zero byte sets the lowest high bit.
#[inline(always)]
fn dot_byte(w: u64) -> usize {
    let x = w ^ 0x2e2e_2e2e_2e2e_2e2e;
    (x.wrapping_sub(0x0101_0101_0101_0101) & !x & HIGH_BITS).trailing_zeros() as usize / 8
}

/// The position of the first `.` in `data[start..end]`, from one word read when the text
/// has at most 8 bytes and 8 bytes are there.
#[inline(always)]
pub(crate) fn dot_in(data: &[u8], start: usize, end: usize) -> Option<usize> {
    if end - start <= 8
        && let Some(w) = word_at(data, start)
    {
        let at = dot_byte(w);
        return (at < end - start).then_some(start + at);
    }
    memchr::memchr(b'.', &data[start..end]).map(|i| start + i)
}

/// True when `data[start..end]` holds a `"`: from two words read when the text has at most
/// 16 bytes and 16 bytes are there (most fields), by `memchr` otherwise (whose call and
/// set-up cost more than the search on short fields: 4.5% of a quoted CSV's scan).
#[inline(always)]
pub(crate) fn has_quote(data: &[u8], start: usize, end: usize) -> bool {
    const QUOTES: u64 = u64::from_ne_bytes([b'"'; 8]);
    let n = end - start;
    if n <= 16
        && let (Some(lo), Some(hi)) = (word_at(data, start), word_at(data, start + 8))
    {
        // The high bit of each byte equal to a quote; bytes past `end` masked off.
        let keep = |len: usize| {
            if len >= 8 {
                u64::MAX
            } else {
                (1u64 << (8 * len)) - 1
            }
        };
        let lo = crate::text::scan::zero_bytes(lo ^ QUOTES) & keep(n);
        let hi = crate::text::scan::zero_bytes(hi ^ QUOTES) & keep(n.saturating_sub(8));
        return (lo | hi) != 0;
    }
    memchr::memchr(b'"', &data[start..end]).is_some()
}

/// Fraction digits of the [`number_key`]s of columns that may hold decimals: with at most 8
/// digits in all, the integer part has at most 8, and the key at most 15 decimal nibbles.
pub(crate) const KEY_FRAC: u32 = 7;

/// An integer key of the plain number `data[start..end]` (`-?[0-9]+`, or digits with one dot
/// and at least one digit, as runs of records certify; other bytes give a meaningless key)
/// that orders like the numbers: its digits as packed decimal nibbles, the fraction aligned
/// to `frac` (at most [`KEY_FRAC`]) digits, doubled, and for a negative number negated less
/// one (so that `-0` sorts just below `0`). No multiply nor branch on the sign: a
/// column's bounds are then a fold of integer minimums and maximums, and only the two keys
/// kept are turned back into numbers ([`key_int`], [`key_float`]). `None`, for the caller
/// to parse the number, beyond 8 bytes after the sign or `frac` fraction digits and within
/// 8 bytes of the end of `data`.
#[inline(always)]
pub(crate) fn number_key(data: &[u8], start: usize, end: usize, frac: u32) -> Option<i64> {
    let neg = *data.get(start)? == b'-';
    let body = start + usize::from(neg);
    let len = end.checked_sub(body)?;
    if !(1..=8).contains(&len) {
        return None;
    }
    let w = word_at(data, body)?;
    let dot = dot_byte(w);
    let (digits, frac_digits, w) = if dot < len {
        // The bytes after the dot move down over it.
        let below = (1u64 << (8 * dot)) - 1;
        (len - 1, len - 1 - dot, (w & below) | ((w >> 8) & !below))
    } else {
        (len, 0, w)
    };
    if digits == 0 || frac_digits > frac as usize {
        return None;
    }
    // The digits' values with the first in the highest of `digits` bytes, then packed two
    // by two into nibbles.
    let d = (w & 0x0F0F_0F0F_0F0F_0F0F).swap_bytes() >> (8 * (8 - digits));
    let d = (d | (d >> 4)) & 0x00FF_00FF_00FF_00FF;
    let d = (d | (d >> 8)) & 0x0000_FFFF_0000_FFFF;
    let d = (d | (d >> 16)) & 0xFFFF_FFFF;
    let key = (d << (4 * (frac as usize - frac_digits))) as i64;
    // `2v` for `v >= 0`, `2v - 1` for `v <= -0`: also orders `-0` below `0` (one key per
    // text, and no branch on the sign, which is often random).
    let n = i64::from(neg);
    Some(((key ^ -n) + n) * 2 - n)
}

/// The sign and the digits (as an integer) of a [`number_key`].
fn key_parts(key: i64) -> (bool, u64) {
    let neg = key < 0;
    let mut nibbles = (if neg { !key } else { key } as u64) >> 1;
    let (mut value, mut unit) = (0u64, 1u64);
    // At most 15 nibbles: below 10^15, no overflow.
    while nibbles != 0 {
        value += (nibbles & 0xF) * unit;
        unit *= 10;
        nibbles >>= 4;
    }
    (neg, value)
}

/// The integer of a [`number_key`] made with no fraction digits.
pub(crate) fn key_int(key: i64) -> i64 {
    let (neg, v) = key_parts(key);
    if neg { -(v as i64) } else { v as i64 }
}

/// The number of a [`number_key`] made with `frac` fraction digits, correctly rounded.
pub(crate) fn key_float(key: i64, frac: u32) -> f64 {
    let (neg, mantissa) = key_parts(key);
    Decimal {
        mantissa,
        scale: frac as usize,
        neg,
    }
    .value()
}

/// True for a plain decimal number: `-?`, digits with at most one `.` (at least one digit),
/// then an optional exponent `[eE][+-]?digits`. No `+` at the start, no `inf`/`NaN` words:
/// exactly what both Rust's and arrow's float parsers accept among such texts.
#[inline(always)]
pub(crate) fn is_number(b: &[u8]) -> bool {
    let mut i = usize::from(b.first() == Some(&b'-'));
    let mut digits = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
        digits += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    i == b.len()
}

/// True for `true`/`false` in any letter case (what arrow-csv accepts for Boolean).
#[inline]
pub(crate) fn is_bool(b: &[u8]) -> bool {
    b.eq_ignore_ascii_case(b"true") || b.eq_ignore_ascii_case(b"false")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys order like the numbers (`-0` below `0`) and turn back into them, for every sign,
    /// length and dot place; texts a key does not take give `None`.
    #[test]
    fn number_keys_order_like_numbers() {
        let mut rng = crate::testutil::XorShift(0x6b65_7973);
        let mut texts: Vec<String> = ["0", "-0", "0.0", "-0.0", "007", "5.", ".5", "-.5", "-5."]
            .iter()
            .map(|t| t.to_string())
            .collect();
        for _ in 0..4000 {
            let len = 1 + rng.below(9);
            let mut t: String = (0..len)
                .map(|_| char::from(b'0' + rng.below(10) as u8))
                .collect();
            if rng.below(3) > 0 {
                t.insert(rng.below(len + 1), '.');
            }
            if rng.below(2) == 0 {
                t.insert(0, '-');
            }
            if t.trim_start_matches('-') != "." {
                texts.push(t);
            }
        }
        for frac in [0, 3, KEY_FRAC] {
            let mut keyed = Vec::new();
            for t in &texts {
                // Padding after the text: keys read whole words.
                let data = format!("{t},12345678");
                let key = number_key(data.as_bytes(), 0, t.len(), frac);
                let body = t.trim_start_matches('-');
                let frac_digits = body.find('.').map_or(0, |d| body.len() - d - 1);
                let digits = body.len() - usize::from(body.contains('.'));
                let value: f64 = t.parse().unwrap();
                let takes = body.len() <= 8 && frac_digits <= frac as usize;
                assert_eq!(key.is_some(), takes, "{t} frac {frac}");
                if let Some(k) = key {
                    assert!(digits >= 1);
                    assert_eq!(key_float(k, frac).to_bits(), value.to_bits(), "{t}");
                    if frac == 0 && !body.contains('.') {
                        assert_eq!(key_int(k), t.parse::<i64>().unwrap(), "{t}");
                    }
                    keyed.push((k, value));
                }
            }
            for (a, b) in keyed.iter().zip(keyed.iter().skip(1)) {
                // `-0` below `0`, as `total_cmp` orders them.
                assert_eq!(a.0.cmp(&b.0), a.1.total_cmp(&b.1), "{a:?} {b:?}");
            }
        }
        // Near the end of the data no word can be read.
        assert_eq!(number_key(b"12", 0, 2, 0), None);
    }

    #[test]
    fn integers() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-12"), Some(-12));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"12345678901234567890"), None);
        assert_eq!(parse_i64(b"-"), None);
        assert_eq!(parse_i64(b"1.0"), None);
        assert_eq!(parse_i64(b"+1"), None);
        for t in [
            "0",
            "-12",
            "9223372036854775807",
            "-9223372036854775808",
            "123456789012345678",
        ] {
            assert!(is_i64_text(t.as_bytes()), "{t}");
        }
        for t in [
            "",
            "-",
            "9223372036854775808",
            "12345678901234567890",
            "1.0",
            "+1",
            "1a",
        ] {
            assert!(!is_i64_text(t.as_bytes()), "{t}");
        }
    }

    #[test]
    fn fast_decimal_values_equal_the_full_parser() {
        for t in [
            "0.1",
            "-0.1",
            "1.",
            ".5",
            "-.5",
            "3.14159",
            "-8673.29",
            "9007199254740992.0",
            "90071992547409.3",
            "0.0000000000000000000001",
            "12",
            "-0",
            "-0.0",
            "123456.789",
            "0.30000000000000004",
        ] {
            let want: f64 = t.parse().unwrap();
            match decimal_value(t.as_bytes()) {
                Some(v) => assert_eq!(v.to_bits(), want.to_bits(), "{t}"),
                None => assert!(t.len() > 16, "{t} should take the fast path"),
            }
        }
        // Beyond the exact range the caller parses in full.
        for t in [
            "9007199254740993.0",
            "0.00000000000000000000001",
            "1e5",
            "1.2.3",
            "",
            "-",
            ".",
        ] {
            assert_eq!(decimal_value(t.as_bytes()), None, "{t}");
        }
        // A brute-force sweep of short decimals.
        let mut rng = crate::testutil::XorShift(0x2545_f491_4f6c_dd1d);
        for _ in 0..20_000 {
            let x = rng.next();
            let t = format!("{}.{}", x % 10_000_000, (x >> 32) % 1_000_000);
            let want: f64 = t.parse().unwrap();
            assert_eq!(
                decimal_value(t.as_bytes()).map(f64::to_bits),
                Some(want.to_bits()),
                "{t}"
            );
        }
        assert_eq!(int_value(b"-123456789012345678"), -123_456_789_012_345_678);
        assert_eq!(int_value(b"0"), 0);
    }

    #[test]
    fn word_at_a_time_digit_values() {
        let mut rng = crate::testutil::XorShift(0x2545_f491_4f6c_dd1d);
        for _ in 0..20_000 {
            let x = rng.next();
            let n = 1 + (x % 18) as usize;
            let digits: String = (0..n)
                .map(|i| char::from(b'0' + ((x >> (i * 3)) % 10) as u8))
                .collect();
            let want: i64 = digits.parse().unwrap();
            // Inside a buffer, at its start and at its very end (words read around the text).
            let inside = format!("-{digits},12345678901234567890");
            assert_eq!(int_value_at(inside.as_bytes(), 0, n + 1), -want, "{digits}");
            assert_eq!(int_value_at(inside.as_bytes(), 1, n + 1), want, "{digits}");
            assert_eq!(int_value(digits.as_bytes()), want, "{digits}");
            let padded = format!("99999999{digits}");
            assert_eq!(
                int_value_at(padded.as_bytes(), 8, padded.len()),
                want,
                "{digits}"
            );
            let cut = (x >> 40) as usize % (n + 1);
            let decimal = format!("{}.{}", &digits[..cut], &digits[cut..]);
            let want: f64 = decimal.parse().unwrap();
            if let Some(v) = decimal_value(decimal.as_bytes()) {
                assert_eq!(v.to_bits(), want.to_bits(), "{decimal}");
            }
        }
    }

    #[test]
    fn strictly_inside_never_errs() {
        let mut rng = crate::testutil::XorShift(0x2545_f491_4f6c_dd1d);
        for _ in 0..50_000 {
            let x = rng.next();
            let d = Decimal {
                mantissa: x % (1 << 53),
                scale: (x >> 56) as usize % 23,
                neg: x & 1 == 1,
            };
            let v = d.value();
            // Bounds at the value itself and one step away on either side.
            let up = f64::from_bits(v.to_bits() + 1);
            let down = if v == 0.0 {
                -f64::MIN_POSITIVE
            } else {
                f64::from_bits(v.to_bits() - 1)
            };
            let (below, above) = if v < 0.0 { (up, down) } else { (down, up) };
            for (lo, hi) in [(v, above), (below, v), (below, above), (v - 1.0, v + 1.0)] {
                if d.strictly_inside(lo, hi) {
                    assert!(lo < v && v < hi, "{d:?} = {v} in ({lo}, {hi})");
                }
            }
            assert!(
                d.strictly_inside(v - v.abs() - 1.0, v + v.abs() + 1.0),
                "{d:?}"
            );
        }
    }

    #[test]
    fn numbers() {
        for ok in [
            "1",
            "-1.5",
            "1.",
            ".5",
            "1e5",
            "-2.5E-300",
            "0.30000000000000004",
        ] {
            assert!(is_number(ok.as_bytes()), "{ok}");
        }
        for bad in [
            "", "-", ".", "+1", "1e", "1e+", "inf", "NaN", "1.2.3", "1-2", "e5", " 1",
        ] {
            assert!(!is_number(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn quotes_found_word_at_a_time() {
        let data = b"abcdefgh\"ijklmnopq\"rs";
        for start in 0..data.len() {
            for end in start..=data.len() {
                assert_eq!(
                    has_quote(data, start, end),
                    data[start..end].contains(&b'"'),
                    "{start}..{end}"
                );
            }
        }
    }

    #[test]
    fn word_at_a_time_numbers() {
        // Every field is classified inside a longer buffer and at its very end.
        for (text, kind) in [
            ("0", NumberKind::Int),
            ("-7", NumberKind::Int),
            ("12345678", NumberKind::Int),
            ("-12345678", NumberKind::Int),
            ("123456789012345678", NumberKind::Int),
            ("-123456789012345678", NumberKind::Int),
            ("1234567890123456789", NumberKind::Unknown),
            ("-", NumberKind::Unknown),
            (".", NumberKind::Unknown),
            ("-.", NumberKind::Unknown),
            ("1.", NumberKind::Decimal),
            (".5", NumberKind::Decimal),
            ("-.5", NumberKind::Decimal),
            ("-8673.29", NumberKind::Decimal),
            ("2909.6900000000005", NumberKind::Decimal),
            ("-2525.9399999999996", NumberKind::Decimal),
            ("-2525.93999999999999999", NumberKind::Decimal),
            ("-2525.939999999999999999", NumberKind::Decimal),
            ("-2525.9399999999999999999", NumberKind::Unknown),
            ("1.2.3", NumberKind::Unknown),
            ("1e5", NumberKind::Unknown),
            ("--1", NumberKind::Unknown),
            ("1-", NumberKind::Unknown),
            ("12345678-", NumberKind::Unknown),
            ("1234567890123456-", NumberKind::Unknown),
            ("123456789012345678901234", NumberKind::Unknown),
            ("abc", NumberKind::Unknown),
            ("1/2", NumberKind::Unknown),
            ("1:2", NumberKind::Unknown),
            ("9\u{e9}", NumberKind::Unknown),
        ] {
            let inside = format!("{text},999999999999999999999999,x");
            assert_eq!(
                number_kind(inside.as_bytes(), 0, text.len()),
                kind,
                "{text}"
            );
            let padded = format!("{}{text}", "9".repeat(30));
            let b = padded.as_bytes();
            assert_eq!(number_kind(b, 30, b.len()), kind, "{text} at the end");
            // Certain answers agree with the byte-by-byte rules.
            match kind {
                NumberKind::Int => assert!(is_i64_text(text.as_bytes()), "{text}"),
                NumberKind::Decimal => assert!(is_number(text.as_bytes()), "{text}"),
                NumberKind::Unknown => {}
            }
        }
        // Fewer than 8 bytes left in the buffer: no word can be read.
        assert_eq!(number_kind(b"12", 0, 2), NumberKind::Unknown);
    }

    #[test]
    fn word_at_a_time_json_numbers() {
        for (text, want) in [
            ("0,", Some((1, NumberKind::Int))),
            ("-12}", Some((3, NumberKind::Int))),
            ("123456789012345678 ", Some((18, NumberKind::Int))),
            ("1234567890123456789,", None),
            ("-,", None),
            ("-8673.29}", Some((8, NumberKind::Decimal))),
            ("2909.6900000000005,", Some((18, NumberKind::Decimal))),
            ("-2525.93999999999999}", Some((20, NumberKind::Decimal))),
            ("-2525.939999999999999999}", None),
            ("1.,", Some((2, NumberKind::Decimal))),
            ("-.5]", Some((3, NumberKind::Decimal))),
            ("-.,", None),
            ("1e5,", None),
            ("1.5e5,", None),
            ("1.2.3,", None),
            ("12-3,", None),
            ("12+,", None),
            ("1x,", Some((1, NumberKind::Int))),
        ] {
            let padded = format!("{text}{}", " ".repeat(24));
            assert_eq!(json_number_end(padded.as_bytes(), 0), want, "{text}");
            if let Some((end, kind)) = want {
                let number = &text.as_bytes()[..end];
                match kind {
                    NumberKind::Int => assert!(is_i64_text(number), "{text}"),
                    _ => assert!(is_number(number), "{text}"),
                }
            }
        }
        assert_eq!(json_number_end(b"12,", 0), None);
    }
}
