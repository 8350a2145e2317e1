//! The JSON-lines fast paths: compact flat objects on one line (`{"k":v,…}` without
//! whitespace, escapes or nested values), read from the byte-class masks of
//! [`crate::simd`]. String extents come from a prefix XOR of the quote mask, value ends
//! from the commas and closing braces outside strings, number shapes from the non-digit mask:
//! a handful of bit operations per member instead of a byte-by-byte walk. Three tiers, each
//! falling back to the one before:
//!
//! - [`compact_line`] reads any compact line member by member from 64-byte windows, looking
//!   each name up (by the expected next column first);
//! - [`template_line`] reads a line whose member names are those of the previous compact
//!   line, in order ([`Template`]), matching each `"name":` with one 16-byte compare;
//! - [`stream_lines`] reads whole runs of such lines block by block, with no window per line.
//!
//! Anything else (whitespace, escapes, nested values, exponents, members longer than about
//! 60 bytes) is left to the general tokenizer of [`crate::formats::json::tok`]. Recording a member twice
//! is harmless (types and bounds only grow), so a fast path may give up halfway through a
//! line, but never after recording a value it did not read exactly.

use std::path::Path;

use crate::error::Result;
use crate::locator::StatsColumns;
use crate::simd::json_class::{BACKSLASH, CLOSE, COMMA, HIGH, NEWLINE, NON_DIGIT, QUOTE};
use crate::simd::{JSON, MaskCache, Window};
use crate::text::infer::{ColumnInfer, Columns};
use crate::text::numbers::{NumberKind, masked_number};
use crate::text::scan::{check_utf8_at, from_bit};

/// Records the members of the line at `pos` when it is a compact flat object followed by its
/// line break; returns the position of the `\n` and whether the line holds non-ASCII bytes
/// (the caller checks them). Members are read from 64-byte windows: a member that runs past
/// the current window is read again from a window starting at it, and one that does not fit
/// in a whole window sends the line to the general tokenizer, as does any other shape
/// (`None`).
#[inline(always)]
pub(crate) fn compact_line<W: Window<JSON>>(
    data: &[u8],
    pos: usize,
    cache: &mut MaskCache<JSON>,
    cols: &mut Columns,
    wanted: &StatsColumns,
    order: &mut Vec<usize>,
) -> Option<(usize, bool)> {
    order.clear();
    if data.get(pos) != Some(&b'{') {
        return None;
    }
    if data.get(pos + 1) == Some(&b'}') {
        return line_break(data, pos + 2).map(|nl| (nl, false));
    }
    let mut base = pos;
    let mut m = cache.window::<W>(data, base, 0)?;
    // The window starts outside strings (at the `{`, later at a member), so one prefix XOR
    // of its quotes serves every member read from it.
    let mut outside = !W::inside(m[QUOTE]);
    // The member being read starts at `base + p`.
    let mut p = 1;
    let mut high = false;
    let mut hint = 0;
    loop {
        match member(data, base, p, &m, outside, cols, wanted, &mut hint, order) {
            Member::Next(end, member_high) => {
                high |= member_high;
                if data[base + end] == b'}' {
                    return line_break(data, base + end + 1).map(|nl| (nl, high));
                }
                p = end + 1;
            }
            // Read the member again from a window that starts at it, unless it already did.
            Member::PastWindow if p > 0 => {
                base += p;
                p = 0;
                m = cache.window::<W>(data, base, 0)?;
                outside = !W::inside(m[QUOTE]);
            }
            Member::PastWindow | Member::Other => return None,
        }
    }
}

/// The `\n` that ends a line at `at` (after an optional `\r`).
#[inline(always)]
fn line_break(data: &[u8], at: usize) -> Option<usize> {
    match data.get(at)? {
        b'\n' => Some(at),
        b'\r' if data.get(at + 1) == Some(&b'\n') => Some(at + 1),
        _ => None,
    }
}

/// What [`member`] found.
enum Member {
    /// A member was recorded; its value ends at this window offset (at a `,` or `}`), and
    /// whether it holds non-ASCII bytes.
    Next(usize, bool),
    /// The member runs past the window.
    PastWindow,
    /// Not a compact flat member.
    Other,
}

/// Reads and records the member starting at window offset `p` (outside strings) of the
/// window at `base` whose masks are `m` and whose bytes outside strings are `outside`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn member(
    data: &[u8],
    base: usize,
    p: usize,
    m: &[u64; JSON],
    outside: u64,
    cols: &mut Columns,
    wanted: &StatsColumns,
    hint: &mut usize,
    order: &mut Vec<usize>,
) -> Member {
    // Only the 64 bytes of the window are known to be in the data.
    if p >= 64 {
        return Member::PastWindow;
    }
    if data[base + p] != b'"' {
        return Member::Other;
    }
    let quotes = m[QUOTE];
    let key_close = (quotes & from_bit(p + 1)).trailing_zeros() as usize;
    if key_close >= 62 {
        return Member::PastWindow;
    }
    if data[base + key_close + 1] != b':' {
        return Member::Other;
    }
    // The value runs to the next comma or closing brace outside strings.
    let v = key_close + 2;
    let ve = ((m[COMMA] | m[CLOSE]) & outside & from_bit(v)).trailing_zeros() as usize;
    if ve >= 64 {
        return Member::PastWindow;
    }
    let span = from_bit(p) & !from_bit(ve);
    // Escapes would hide quotes. Whitespace and nested values need no mask: every check
    // reads exact bytes at the boundaries (a member starts with `"`, its name's quote is
    // followed by `:`, a value is one string, a number shape or a literal up to the next
    // comma or brace outside strings), so any other byte makes the line fall back.
    // A line break inside a string is not JSON: the general path reports it.
    if ve <= v || (m[BACKSLASH] | m[NEWLINE]) & span != 0 {
        return Member::Other;
    }
    let key = base + p + 1;
    let idx = match cols.expected_key(*hint, data, key) {
        Some(_) => *hint,
        None => cols.index_of(&data[key..base + key_close], *hint, wanted),
    };
    *hint = idx + 1;
    order.push(idx);
    if !record_value(data, base, v, ve, m, &mut cols.cols[idx]) {
        return Member::Other;
    }
    Member::Next(ve, m[HIGH] & span != 0)
}

/// Records the value `data[base + v..base + ve]` of a compact member (non-empty, outside
/// strings, followed by a comma or brace, no backslash) in `col`: one string, a number shape
/// of [`masked_number`] or a literal. False, with nothing recorded, for anything else.
#[inline(always)]
fn record_value(
    data: &[u8],
    base: usize,
    v: usize,
    ve: usize,
    m: &[u64; JSON],
    col: &mut ColumnInfer,
) -> bool {
    let (start, end) = (base + v, base + ve);
    match data[start] {
        b'"' => {
            // One string, closing right before the terminator.
            if (m[QUOTE] & from_bit(v + 1)).trailing_zeros() as usize != ve - 1 {
                return false;
            }
            if col.tracks() {
                col.text(&data[start + 1..end - 1]);
            } else {
                col.text(b"");
            }
        }
        b'-' | b'0'..=b'9' => {
            let (kind, dot) = masked_number(data, base, v as u32, ve as u32, m[NON_DIGIT]);
            if kind == NumberKind::Unknown {
                return false;
            }
            col.known_number(data, start, end, kind, Some(dot));
        }
        _ => match &data[start..end] {
            b"true" => col.boolean(b"true"),
            b"false" => col.boolean(b"false"),
            b"null" => {}
            _ => return false,
        },
    }
    true
}

/// The longest member name a [`Template`] matches (its quotes and colon fill 16 bytes).
const TEMPLATE_NAME: usize = 13;

/// Consecutive lines a [`Template`] may miss before the file stops trying it (rows whose
/// names change from line to line would otherwise pay for the attempt on every line).
const TEMPLATE_MISSES: u32 = 32;

/// The member names of the last compact line, in order: a line with the same names in the
/// same order is read by [`template_line`], which matches each `"name":` as one 16-byte
/// compare and never looks a name up (real JSON-lines files repeat one layout).
#[derive(Default)]
pub(crate) struct Template {
    slots: Vec<Slot>,
    /// Bumped by every [`Template::learn`], so that what is built from the slots is
    /// rebuilt only when they may have changed.
    generation: u64,
    /// Lines missed since the last hit.
    misses: u32,
    /// The columns of the last line read by [`compact_line`], in member order.
    pub(crate) order: Vec<usize>,
}

/// One member of a [`Template`].
#[derive(Clone, Copy)]
pub(crate) struct Slot {
    pub(crate) col: usize,
    /// `"name":` as a little-endian 128-bit word, and the mask of its bytes.
    pub(crate) pattern: u128,
    pub(crate) mask: u128,
    /// The length of `"name":`.
    pub(crate) len: usize,
}

impl Template {
    /// The members, in order.
    #[inline(always)]
    pub(crate) fn slots(&self) -> &[Slot] {
        &self.slots
    }

    /// The number of [`Template::learn`] calls so far.
    #[inline(always)]
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// True while the template is worth trying.
    #[inline(always)]
    pub(crate) fn active(&self) -> bool {
        !self.slots.is_empty() && self.misses < TEMPLATE_MISSES
    }

    /// True while a line the template missed should rebuild it.
    #[inline(always)]
    pub(crate) fn learning(&self) -> bool {
        self.misses < TEMPLATE_MISSES
    }

    /// Notes a line the template read.
    #[inline(always)]
    pub(crate) fn hit(&mut self) {
        self.misses = 0;
    }

    /// Notes a line the template did not read.
    #[inline(always)]
    pub(crate) fn missed(&mut self) {
        self.misses = self.misses.saturating_add(1);
    }

    /// Rebuilds the template from [`Template::order`], the columns of a line just read by
    /// [`compact_line`]; a name that is not plain or longer than [`TEMPLATE_NAME`] leaves
    /// the template empty.
    pub(crate) fn learn(&mut self, cols: &Columns) {
        self.generation += 1;
        self.slots.clear();
        for &col in &self.order {
            let Some(c) = cols.cols.get(col) else {
                self.slots.clear();
                return;
            };
            let name = c.name.as_bytes();
            if name.len() > TEMPLATE_NAME || name.iter().any(|&b| b == b'"' || b == b'\\') {
                self.slots.clear();
                return;
            }
            let mut bytes = [0u8; 16];
            bytes[0] = b'"';
            bytes[1..=name.len()].copy_from_slice(name);
            bytes[name.len() + 1] = b'"';
            bytes[name.len() + 2] = b':';
            let len = name.len() + 3;
            self.slots.push(Slot {
                col,
                pattern: u128::from_le_bytes(bytes),
                mask: u128::MAX >> (8 * (16 - len)),
                len,
            });
        }
    }
}

/// Records the members of the line at `pos` when it is a compact flat object whose member
/// names are those of `template`, in order, followed by its line break; returns what
/// [`compact_line`] returns. `None`, with possibly some members recorded (harmless, as for
/// [`compact_line`]), for any other line.
#[inline(always)]
pub(crate) fn template_line<W: Window<JSON>>(
    data: &[u8],
    pos: usize,
    cache: &mut MaskCache<JSON>,
    cols: &mut Columns,
    template: &Template,
) -> Option<(usize, bool)> {
    if data.get(pos) != Some(&b'{') {
        return None;
    }
    let mut base = pos;
    let mut m = cache.window::<W>(data, base, 0)?;
    // Member ends, and the first escape or line break of the window: no member reaching it
    // is recorded (an escaped string's raw bytes are not its text).
    let ends = |m: &[u64; JSON]| {
        let stop = (m[BACKSLASH] | m[NEWLINE]).trailing_zeros() as usize;
        ((m[COMMA] | m[CLOSE]) & !W::inside(m[QUOTE]), stop)
    };
    let (mut terms, mut stop) = ends(&m);
    let mut p = 1;
    // Non-ASCII bytes are looked for once per window, over the members read from it.
    let mut high = false;
    let last = template.slots.len().checked_sub(1)?;
    let mut i = 0;
    while i <= last {
        let slot = template.slots[i];
        let v = p + slot.len;
        // The name's 16 bytes and the value's end lie in the window (64 bytes from `base`).
        let ve = if p <= 48 {
            (terms & from_bit(v)).trailing_zeros() as usize
        } else {
            64
        };
        if ve >= 64 {
            // Read the member again from a window that starts at it, unless it already did.
            if p == 0 {
                return None;
            }
            high |= m[HIGH] & !from_bit(p) != 0;
            base += p;
            p = 0;
            m = cache.window::<W>(data, base, 0)?;
            (terms, stop) = ends(&m);
            continue;
        }
        let at = base + p;
        let word = u128::from_le_bytes(data.get(at..at + 16)?.try_into().ok()?);
        // The terminator must be a comma before the last member and the brace after it.
        let close = m[CLOSE] & (1 << ve) != 0;
        if word & slot.mask != slot.pattern || ve <= v || ve > stop || close != (i == last) {
            return None;
        }
        if !record_value(data, base, v, ve, &m, cols.cols.get_mut(slot.col)?) {
            return None;
        }
        p = ve + 1;
        i += 1;
    }
    high |= m[HIGH] & !from_bit(p) != 0;
    line_break(data, base + p).map(|nl| (nl, high))
}

/// Reads up to `max_lines` consecutive lines from `pos` (a line start) that
/// [`template_line`] would read, streaming the data in 64-byte blocks instead of a window
/// per line: member ends come from the commas and closing braces outside strings of each
/// block, so a member costs a bit scan, one 16-byte name compare and its value's
/// classification. Returns where it stopped (the start of the first line it did not read)
/// and the lines read. A line it cannot read (any other shape, an escape, a value of 64 bytes
/// or more, a line in the last 64 bytes of the data) is left to the caller, possibly with
/// some of its members recorded (harmless, as for [`compact_line`]). The UTF-8 of a line
/// holding non-ASCII bytes is checked (the error of the general path).
#[inline(always)]
pub(crate) fn stream_lines<W: Window<JSON>>(
    path: &Path,
    format: &'static str,
    data: &[u8],
    pos: usize,
    max_lines: u64,
    template: &Template,
    cols: &mut Columns,
) -> Result<(usize, u64)> {
    let slots = template.slots.as_slice();
    let Some(last) = slots.len().checked_sub(1) else {
        return Ok((pos, 0));
    };
    if !W::ENABLED || max_lines == 0 || data.get(pos) != Some(&b'{') {
        return Ok((pos, 0));
    }
    let mut lines = 0u64;
    // The line being read, the member being read and where that member starts (its name's
    // opening quote).
    let mut line = pos;
    let mut i = 0;
    let mut s = pos + 1;
    // Whether the line holds a byte that is not ASCII.
    let mut high = false;
    // The block being read, all ones when it starts inside a string, and the masks of the
    // block before it (for values that start there).
    let mut base = pos;
    let mut carry = 0u64;
    let mut prev = [0u64; JSON];
    while base + 64 <= data.len() {
        let m = W::block(data, base, 0);
        let inside = W::inside(m[QUOTE]) ^ carry;
        carry = ((inside as i64) >> 63) as u64;
        if m[BACKSLASH] != 0 {
            break;
        }
        high |= m[HIGH] != 0;
        // Member ends, and line breaks (inside a string too, where they are an error).
        let mut ends = ((m[COMMA] | m[CLOSE]) & !inside) | m[NEWLINE];
        while ends != 0 {
            let bit = ends.trailing_zeros() as usize;
            let e = base + bit;
            ends &= ends - 1;
            let byte = data.get(e).copied();
            if i > last {
                // The line break right after the closing brace (or its `\r`).
                if byte != Some(b'\n') || !(e == s || (e == s + 1 && data[s] == b'\r')) {
                    return Ok((line, lines));
                }
                if high {
                    check_utf8_at(path, format, data, line, e)?;
                }
                lines += 1;
                line = e + 1;
                high = m[HIGH] & from_bit(bit + 1) != 0;
                if lines == max_lines || data.get(line) != Some(&b'{') {
                    return Ok((line, lines));
                }
                i = 0;
                s = line + 1;
                continue;
            }
            let slot = slots[i];
            let v = s + slot.len;
            let want = if i == last { b'}' } else { b',' };
            if e <= v || e - v >= 64 || byte != Some(want) {
                return Ok((line, lines));
            }
            let Some(name) = data.get(s..s + 16) else {
                return Ok((line, lines));
            };
            let mut word = [0u8; 16];
            word.copy_from_slice(name);
            if u128::from_le_bytes(word) & slot.mask != slot.pattern {
                return Ok((line, lines));
            }
            // The value's quotes and non-digits from `v` on, out of this block and the one
            // before (`v` is at most 63 bytes before the block, as `e - v < 64`).
            let off = v + 64 - base;
            let mut w = [0u64; JSON];
            for k in [QUOTE, NON_DIGIT] {
                w[k] = if off >= 64 {
                    m[k] >> (off - 64)
                } else {
                    (prev[k] >> off) | (m[k] << (64 - off))
                };
            }
            let Some(col) = cols.cols.get_mut(slot.col) else {
                return Ok((line, lines));
            };
            if !record_value(data, v, 0, e - v, &w, col) {
                return Ok((line, lines));
            }
            i += 1;
            s = e + 1;
        }
        prev = m;
        base += 64;
    }
    Ok((line, lines))
}
