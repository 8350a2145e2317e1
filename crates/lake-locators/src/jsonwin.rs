//! The JSON-lines fast path: a compact flat object on one line, read from the window masks of
//! [`crate::window`] (`{"k":v,…}` without whitespace, escapes or nested values). String
//! extents come from a prefix XOR of the quote mask, value ends from the commas and closing
//! braces outside strings, number shapes from the non-digit mask: a handful of bit operations
//! per member instead of a byte-by-byte walk.
//!
//! Anything else (whitespace, escapes, nested values, exponents, members longer than about
//! 60 bytes) is left to the general tokenizer of [`crate::jsontok`]. Recording a member twice
//! is harmless (types and bounds only grow), so the fast path may give up halfway through a
//! line.

use crate::infer::{ColumnInfer, Columns};
use crate::locator::StatsColumns;
use crate::numbers::{NumberKind, masked_number};
use crate::window::json_class::{BACKSLASH, CLOSE, COMMA, HIGH, NEWLINE, NON_DIGIT, QUOTE};
use crate::window::{JSON, MaskCache, Window, inside_quotes};

/// Bits `from` and above.
#[inline(always)]
fn from_bit(from: usize) -> u64 {
    u64::MAX.checked_shl(from as u32).unwrap_or(0)
}

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
    let mut outside = !inside_quotes(m[QUOTE]);
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
                outside = !inside_quotes(m[QUOTE]);
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
    /// Lines missed since the last hit.
    misses: u32,
    /// The columns of the last line read by [`compact_line`], in member order.
    pub(crate) order: Vec<usize>,
}

/// One member of a [`Template`].
#[derive(Clone, Copy)]
struct Slot {
    col: usize,
    /// `"name":` as a little-endian 128-bit word, and the mask of its bytes.
    pattern: u128,
    mask: u128,
    /// The length of `"name":`.
    len: usize,
}

impl Template {
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
    let mut terms = (m[COMMA] | m[CLOSE]) & !inside_quotes(m[QUOTE]);
    let mut p = 1;
    let mut high = false;
    // Escapes, line breaks inside strings and non-ASCII bytes are looked for once per
    // window, over the members read from it: the bytes before `p`.
    let special = |m: &[u64; JSON], p: usize| {
        let before = !from_bit(p);
        (
            (m[BACKSLASH] | m[NEWLINE]) & before != 0,
            m[HIGH] & before != 0,
        )
    };
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
            let (escape, non_ascii) = special(&m, p);
            if escape {
                return None;
            }
            high |= non_ascii;
            base += p;
            p = 0;
            m = cache.window::<W>(data, base, 0)?;
            terms = (m[COMMA] | m[CLOSE]) & !inside_quotes(m[QUOTE]);
            continue;
        }
        let at = base + p;
        let word = u128::from_le_bytes(data.get(at..at + 16)?.try_into().ok()?);
        // The terminator must be a comma before the last member and the brace after it.
        let close = m[CLOSE] & (1 << ve) != 0;
        if word & slot.mask != slot.pattern || ve <= v || close != (i == last) {
            return None;
        }
        if !record_value(data, base, v, ve, &m, cols.cols.get_mut(slot.col)?) {
            return None;
        }
        p = ve + 1;
        i += 1;
    }
    let (escape, non_ascii) = special(&m, p);
    if escape {
        return None;
    }
    high |= non_ascii;
    line_break(data, base + p).map(|nl| (nl, high))
}
