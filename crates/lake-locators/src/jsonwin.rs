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

use crate::infer::Columns;
use crate::locator::StatsColumns;
use crate::numbers::{NumberKind, masked_number};
use crate::window::json_class::{BACKSLASH, CLOSE, COMMA, HIGH, NON_DIGIT, QUOTE};
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
) -> Option<(usize, bool)> {
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
        match member(data, base, p, &m, outside, cols, wanted, &mut hint) {
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
    if ve <= v || m[BACKSLASH] & span != 0 {
        return Member::Other;
    }
    let key = base + p + 1;
    let idx = match cols.expected_key(*hint, data, key) {
        Some(_) => *hint,
        None => cols.index_of(&data[key..base + key_close], *hint, wanted),
    };
    *hint = idx + 1;
    let col = &mut cols.cols[idx];
    let (start, end) = (base + v, base + ve);
    match data[start] {
        b'"' => {
            // One string, closing right before the terminator.
            if (quotes & from_bit(v + 1)).trailing_zeros() as usize != ve - 1 {
                return Member::Other;
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
                return Member::Other;
            }
            col.known_number(data, start, end, kind, Some(dot));
        }
        _ => match &data[start..end] {
            b"true" => col.boolean(b"true"),
            b"false" => col.boolean(b"false"),
            b"null" => {}
            _ => return Member::Other,
        },
    }
    Member::Next(ve, m[HIGH] & span != 0)
}
