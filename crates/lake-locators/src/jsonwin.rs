//! The JSON-lines fast path: a compact flat object on one line of at most 63 bytes, read from
//! the window masks of [`crate::window`] (`{"k":v,…}` without whitespace, escapes or nested
//! values). String extents come from a prefix XOR of the quote mask, member and value
//! boundaries from the commas, colons and closing brace outside strings, number shapes from
//! the non-digit mask: a handful of bit operations per member instead of a byte-by-byte walk.
//!
//! Anything else (whitespace, escapes, nested values, exponents, longer lines) is left to the
//! general tokenizer of [`crate::jsontok`]. Recording a member twice is harmless (types and
//! bounds only grow), so the fast path may give up halfway through a line.

use crate::infer::Columns;
use crate::locator::StatsColumns;
use crate::numbers::{NumberKind, masked_number};
use crate::window::json_class::{BACKSLASH, COMMA, NEWLINE, NON_DIGIT, QUOTE};
use crate::window::{JSON, inside_quotes};

/// Bits `from` and above.
#[inline(always)]
fn from_bit(from: usize) -> u64 {
    u64::MAX.checked_shl(from as u32).unwrap_or(0)
}

/// Records the members of the line at `pos` when it is a compact flat object that ends with
/// its line inside the window `m` (masks of the 64 bytes at `pos`); returns the position of
/// the line's `\n`. `None` sends the line to the general tokenizer. The caller has checked
/// that the line's non-ASCII bytes, if any, are UTF-8.
#[inline(always)]
pub(crate) fn compact_line(
    data: &[u8],
    pos: usize,
    m: &[u64; JSON],
    cols: &mut Columns,
    wanted: &StatsColumns,
) -> Option<usize> {
    if m[NEWLINE] == 0 || data[pos] != b'{' {
        return None;
    }
    let e = m[NEWLINE].trailing_zeros() as usize;
    // The object is `data[pos..pos + last]`, before an optional `\r`.
    let last = if e > 0 && data[pos + e - 1] == b'\r' {
        e - 1
    } else {
        e
    };
    if last < 2 || data[pos + last - 1] != b'}' {
        return None;
    }
    let object = (1u64 << last) - 1;
    // Escapes would hide quotes. Whitespace and nested values need no mask: every check
    // below reads exact bytes at the boundaries (a member starts with `"`, its name's quote
    // is followed by `:`, a value is one string, a number shape or a literal up to the next
    // comma outside strings), so any other byte makes the line fall back.
    if m[BACKSLASH] & object != 0 {
        return None;
    }
    let quotes = m[QUOTE] & object;
    let inside = inside_quotes(quotes);
    let close = last - 1;
    // The closing brace must be outside strings.
    if inside & (1 << close) != 0 {
        return None;
    }
    let ends = (m[COMMA] & object & !inside) | (1 << close);
    if close == 1 {
        return Some(pos + e);
    }
    let mut p = 1;
    let mut hint = 0;
    loop {
        // A member name: a string with the colon right after its closing quote.
        if data[pos + p] != b'"' {
            return None;
        }
        let key_close = (quotes & from_bit(p + 1)).trailing_zeros() as usize;
        if key_close + 1 >= close || data[pos + key_close + 1] != b':' {
            return None;
        }
        let key = pos + p + 1;
        let idx = match cols.expected_key(hint, data, key) {
            Some(_) => hint,
            None => cols.index_of(&data[key..pos + key_close], hint, wanted),
        };
        hint = idx + 1;
        // The value runs to the next comma or closing brace outside strings.
        let v = key_close + 2;
        let ve = (ends & from_bit(v)).trailing_zeros() as usize;
        if ve <= v || ve > close {
            return None;
        }
        let col = &mut cols.cols[idx];
        let (start, end) = (pos + v, pos + ve);
        match data[start] {
            b'"' => {
                // One string, closing right before the terminator.
                if (quotes & from_bit(v + 1)).trailing_zeros() as usize != ve - 1 {
                    return None;
                }
                if col.tracks() {
                    col.text(&data[start + 1..end - 1]);
                } else {
                    col.text(b"");
                }
            }
            b'-' | b'0'..=b'9' => {
                let (kind, dot) = masked_number(data, pos, v as u32, ve as u32, m[NON_DIGIT]);
                if kind == NumberKind::Unknown {
                    return None;
                }
                col.known_number(data, start, end, kind, Some(dot));
            }
            _ => match &data[start..end] {
                b"true" => col.boolean(b"true"),
                b"false" => col.boolean(b"false"),
                b"null" => {}
                _ => return None,
            },
        }
        if ve == close {
            return Some(pos + e);
        }
        p = ve + 1;
    }
}
