//! Runs of JSON lines that change no column's type, read 64-byte block by block: the JSON
//! counterpart of [`crate::text::rowshape`], for lines that repeat the member names of a
//! [`crate::formats::json::win::Template`] in compact form (`{"a":1,"b":"x"}` and a line feed).
//!
//! Per block, from masks alone: outside strings (a prefix XOR of the quotes; a block with a
//! backslash ends the run), colons and value ends (commas and closing braces) alternate, so
//! the values are the bytes from each colon to its value end (a multi-word subtraction of
//! the two masks). Every other byte is the template's *skeleton*: `{`, each `"name":`, the
//! commas, the closing brace and the line feed, repeated line after line. The block's
//! skeleton bytes are compared with it in one pass: per 8-byte word, `pdep` spreads the next
//! skeleton bytes over the word's skeleton lanes. Each value is then checked against its
//! column's type at its end, as fields are in [`crate::text::rowshape`]: a string (a quote at its
//! start, a closing quote just before its end, nothing else outside the string) fits a Utf8
//! column; a number (the rules of [`crate::text::numbers::masked_number`]) fits a column of its
//! type or Utf8; `null` fits any column. Anything else (booleans, nested values, whitespace,
//! exponents, a line feed in a value) ends the run, and its lines go to the per-line tiers of
//! [`crate::formats::json::win`], which are exact and move the types on.

use super::win::Slot;
use crate::simd::json_class::{
    BACKSLASH, CLOSE, COLON, COMMA, DOT, HIGH, MINUS, NEWLINE, NON_DIGIT, QUOTE,
};
use crate::simd::{JSON, Window};
use crate::text::rowshape::{
    BOOL, FLOAT, FLOAT_INT, INT, NumberCarry, OTHER, Run, RunValues, ShapeMasks, carry_to_ends,
    number_ends,
};

/// Where skeleton positions wrap back by whole periods (a division per block would sit on
/// the chain from block to block).
const WRAP_AT: usize = 4096;

/// The bytes of a run of template lines outside their values, in order: `{`, each member's
/// `"name":` followed by `,` (by `}` for the last member), and the line feed, repeated.
#[derive(Debug, Default)]
pub(crate) struct Skeleton {
    /// The skeleton of one line is `bytes[..period]`; `bytes` repeats it over `WRAP_AT` and
    /// a block more, so that a block's skeleton bytes are read from any position below
    /// `WRAP_AT` without wrapping.
    bytes: Vec<u8>,
    period: usize,
    /// The whole periods below `WRAP_AT`, which a position at or past it goes back by.
    rewind: usize,
}

impl Skeleton {
    /// The skeleton of lines of the members `slots`, in order (none for no member).
    pub(crate) fn learn(&mut self, slots: &[Slot]) {
        self.bytes.clear();
        self.period = 0;
        if slots.is_empty() {
            return;
        }
        self.bytes.push(b'{');
        for (i, slot) in slots.iter().enumerate() {
            self.bytes
                .extend_from_slice(&slot.pattern.to_le_bytes()[..slot.len.min(16)]);
            self.bytes
                .push(if i + 1 == slots.len() { b'}' } else { b',' });
        }
        self.bytes.push(b'\n');
        self.period = self.bytes.len();
        self.rewind = WRAP_AT / self.period * self.period;
        while self.bytes.len() < WRAP_AT + 64 + 8 + self.period {
            self.bytes.extend_from_within(..self.period);
        }
    }

    /// Where the next block's skeleton bytes start when the bytes `keep` of the block at `q`
    /// are the skeleton bytes from `at` on; `None` when they are not.
    #[inline(always)]
    fn matches<W: Window<JSON>>(
        &self,
        data: &[u8],
        q: usize,
        keep: u64,
        at: usize,
    ) -> Option<usize> {
        let block: &[u8; 64] = data.get(q..q + 64)?.try_into().ok()?;
        let skeleton: &[u8; 72] = self.bytes.get(at..at + 72)?.try_into().ok()?;
        if !W::expand_equals(block, skeleton, keep) {
            return None;
        }
        let at = at + keep.count_ones() as usize;
        Some(if at >= WRAP_AT { at - self.rewind } else { at })
    }
}

/// The longest run of at most `budget` whole lines from the line start `start` that
/// repeat the member names of `template` and change no column of `masks` (whose columns are
/// the template's members, in order). The run ends at the last line end before the first
/// block that does not fit (or before the last 64 bytes of `data`); it may hold no line.
#[inline(always)]
pub(crate) fn run_lines<W: Window<JSON>>(
    data: &[u8],
    start: usize,
    skeleton: &Skeleton,
    masks: &ShapeMasks,
    budget: u64,
    mut values: Option<&mut RunValues<'_>>,
) -> Run {
    let mut run = Run::at(start);
    if !W::ENABLED
        || !W::RUNS
        || !masks.enabled
        || skeleton.period == 0
        || budget == 0
        || data.get(start) != Some(&b'{')
    {
        return run;
    }
    // Carried from block to block: all ones when the block starts inside a string; 1 when
    // the next colon-or-value-end is a value end; the borrow of the value subtraction; the
    // member of the block's first value end; where the block's first skeleton byte is in
    // the skeleton bytes; the carries of the value facts; and the last bits of the masks
    // that shifts move across.
    let mut inside_carry = 0u64;
    let mut parity = 0u32;
    let mut borrow = 0u64;
    let mut phase = 0usize;
    let mut at = 0usize;
    let mut numbers = NumberCarry::default();
    let (mut c_str, mut c_num, mut c_weird) = (0u64, 0u64, 0u64);
    let mut p_colon = 0u64;
    // Ends in the next block of `null` values that start in this one.
    let mut next_nulls = 0u64;
    let mut high = 0u64;
    let mut q = start;
    while q + 64 <= data.len() {
        let m = W::block(data, q, 0);
        if m[BACKSLASH] != 0 {
            break;
        }
        let inside = W::inside(m[QUOTE]) ^ inside_carry;
        let t = (m[COMMA] | m[CLOSE]) & !inside;
        let c = m[COLON] & !inside;
        let alternate = if parity == 0 {
            0x5555_5555_5555_5555
        } else {
            0xAAAA_AAAA_AAAA_AAAA
        };
        // Colons and value ends alternate.
        if W::pdep(alternate, c | t) != c {
            break;
        }
        // The value bytes: from each colon to its value's end (none holds a line feed);
        // every other byte is the template's skeleton, in order.
        let starts = (c << 1) | (p_colon >> 63);
        let (body, b1) = t.overflowing_sub(starts);
        let (body, b2) = body.overflowing_sub(borrow);
        if m[NEWLINE] & body != 0 {
            break;
        }
        let Some(next) = skeleton.matches::<W>(data, q, !body, at) else {
            break;
        };
        // Strings: everything inside the quotes but the closing quote, which must come just
        // before the value's end (which may be the first byte of the next block).
        let next_ends = inside >> 63 == 0 && matches!(data.get(q + 64), Some(b',' | b'}'));
        let before_end = (t >> 1) | (u64::from(next_ends) << 63);
        let out = body & !inside;
        let closing = out & m[QUOTE] & before_end;
        let (str_sum, str_out) = carry_to_ends(starts & m[QUOTE], t, c_str);
        let (num_sum, num_out) = carry_to_ends(starts & (!m[NON_DIGIT] | m[MINUS]), t, c_num);
        let (weird_sum, weird_out) = carry_to_ends(out & !closing, t, c_weird);
        let is_str = str_sum & t;
        let is_num = num_sum & t;
        // `null` fits every column: the ends of values that are exactly `null` (one that
        // starts near the block end has its end in the next block).
        let mut null_ends = next_nulls;
        next_nulls = 0;
        let mut odd = starts & !m[QUOTE] & m[NON_DIGIT] & !m[MINUS];
        while odd != 0 {
            let bit = odd.trailing_zeros() as usize;
            odd &= odd - 1;
            if data.get(q + bit..q + bit + 4) == Some(b"null") {
                match bit + 4 {
                    end @ 0..64 => null_ends |= 1 << end,
                    end => next_nulls |= 1 << (end - 64),
                }
            }
        }
        let is_null = null_ends & t;
        // (A string that does not end with its closing quote has a byte outside strings
        // after it: `weird`.)
        let bad_str = weird_sum & t;
        let n = number_ends(starts, body, t, m[MINUS], m[DOT], m[NON_DIGIT], &numbers);
        let bad_num = n.bad_num | (n.long & !n.dotted);
        // The ends of the values of each column type.
        let kinds = masks.phase(phase);
        let int = W::pdep(kinds[INT], t);
        let float_int = W::pdep(kinds[FLOAT_INT], t);
        let float = W::pdep(kinds[FLOAT], t);
        // JSON booleans end runs: a column of them takes nulls only, like one without values.
        let other = W::pdep(kinds[OTHER] | kinds[BOOL], t);
        let text = t & !(int | float_int | float | other);
        let misfits = (t & !(is_str | is_num | is_null))
            | (is_str & (bad_str | !text))
            | (is_num & (bad_num | (int & (n.not_int | n.long)) | (float & !n.dotted) | other));
        if misfits != 0 {
            break;
        }
        if let Some(v) = values.as_deref_mut() {
            v.push::<JSON, W>(q, t, 0);
        }
        let full = run.take::<JSON, W>(q, m[NEWLINE], m[HIGH], budget, &mut high);
        if let Some(v) = values.as_deref_mut() {
            v.fold(data, run.rows, false);
        }
        if full {
            break;
        }
        parity = (parity + (c | t).count_ones()) & 1;
        borrow = u64::from(b1 | b2);
        phase = masks.advance(phase, t.count_ones());
        numbers = n.carry;
        (c_str, c_num, c_weird) = (str_out, num_out, weird_out);
        inside_carry = ((inside as i64) >> 63) as u64;
        p_colon = c;
        at = next;
        q += 64;
    }
    if let Some(v) = values {
        v.fold(data, run.rows, true);
    }
    run.high = high != 0;
    run
}
