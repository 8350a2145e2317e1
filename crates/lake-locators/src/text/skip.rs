//! Skipping delimited records: what a slice, a take and a range split do to reach a row from
//! the checkpoint before it.
//!
//! The portable skip ([`skip_records_portable`]) finds each record's end with `memchr` over
//! line feeds and quotes, one search per record and one per quoted field. A deep slice skips
//! up to a fine checkpoint's 4,095 records, and at ~120 bytes a record those searches' setup
//! was most of a 1,000-row slice's time. The masked skip ([`skip_records_masked`]) looks at 64
//! bytes at a time instead: two SSE2 compares per 16 bytes give the line feeds and quotes of
//! the window as bit masks, and only their set bits are visited, in order, by the same state
//! machine (in a quoted field or not; a quote opens one only at a field start). Both return
//! the same position, count and error on every input; the tests compare them on random text
//! and random record counts.

use crate::text::scan::{ScanError, record_end, skip_empty_lines};

/// Skips `n` records from the record start `pos` (empty lines are not records) and returns
/// the start of the record after them (after any empty lines), or the end of the data, and
/// the number of records skipped (fewer than `n` only at the end of the data).
///
/// A quote opens a quoted field only at a field start (after the delimiter or at the start
/// of the record), as in RFC 4180 and the `csv` crate; elsewhere it is a plain byte. A
/// quoted field that never closes is [`ScanError::UnterminatedQuote`] at its opening quote.
#[inline]
pub(crate) fn skip_records(
    data: &[u8],
    pos: usize,
    n: u64,
    delim: u8,
) -> Result<(usize, u64), ScanError> {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::pick_loop() != crate::simd::Loop::Portable {
        return skip_records_masked(data, pos, n, delim);
    }
    skip_records_portable(data, pos, n, delim)
}

/// [`skip_records`] by one `memchr` search per record and per quoted field: the portable
/// path, and the reference of the masked one.
pub(crate) fn skip_records_portable(
    data: &[u8],
    mut pos: usize,
    n: u64,
    delim: u8,
) -> Result<(usize, u64), ScanError> {
    let mut done = 0;
    pos = skip_empty_lines(data, pos);
    while done < n && pos < data.len() {
        pos = record_end(data, pos, delim)?;
        pos = skip_empty_lines(data, pos);
        done += 1;
    }
    Ok((pos, done))
}

/// Line feed and quote masks of the 64 bytes at `at` ([`crate::simd::sse2`]): bit `i` is
/// byte `at + i`. `at + 64` must not pass the end of `data`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn window_masks(data: &[u8], at: usize) -> (u64, u64) {
    match data[at..].first_chunk::<64>() {
        Some(window) => crate::simd::sse2::newline_quote_masks(window),
        None => tail_masks(data, at),
    }
}

/// Line feed and quote masks of the bytes from `at` to the end of `data` (fewer than 64).
#[cfg(target_arch = "x86_64")]
fn tail_masks(data: &[u8], at: usize) -> (u64, u64) {
    let (mut nl, mut qt) = (0u64, 0u64);
    for (i, &b) in data[at..].iter().enumerate().take(64) {
        nl |= u64::from(b == b'\n') << i;
        qt |= u64::from(b == b'"') << i;
    }
    (nl, qt)
}

/// [`skip_records`] over 64-byte windows of line feed and quote masks (see the module
/// documentation). Equal to [`skip_records_portable`] on every input.
#[cfg(target_arch = "x86_64")]
pub(crate) fn skip_records_masked(
    data: &[u8],
    pos: usize,
    n: u64,
    delim: u8,
) -> Result<(usize, u64), ScanError> {
    use crate::text::scan::from_bit;
    let len = data.len();
    let mut done = 0u64;
    let mut start = skip_empty_lines(data, pos);
    if n == 0 || start >= len {
        return Ok((start, 0));
    }
    // The opening quote of the quoted field the scan is in, if any.
    let mut open: Option<usize> = None;
    // Bytes before `next` are settled (the second quote of an escaped pair, empty lines).
    let mut next = start;
    let mut base = start;
    while base < len {
        let (nl, qt) = if base + 64 <= len {
            window_masks(data, base)
        } else {
            tail_masks(data, base)
        };
        let mut bits = (nl | qt) & from_bit(next.saturating_sub(base));
        while bits != 0 {
            let i = bits.trailing_zeros();
            bits &= bits - 1;
            let p = base + i as usize;
            let is_quote = qt >> i & 1 == 1;
            if open.is_some() {
                if is_quote {
                    if data.get(p + 1) == Some(&b'"') {
                        // An escaped quote: its second half is no event.
                        next = p + 2;
                        bits &= from_bit(i as usize + 2);
                    } else {
                        open = None;
                    }
                }
            } else if is_quote {
                if p == start || data[p - 1] == delim {
                    open = Some(p);
                }
            } else {
                done += 1;
                start = skip_empty_lines(data, p + 1);
                if done == n || start >= len {
                    return Ok((start, done));
                }
                next = start;
                // Past this window, no bit is left: the next window starts at the record.
                bits &= from_bit(start - base);
            }
        }
        base = (base + 64).max(next);
    }
    match open {
        Some(o) => Err(ScanError::UnterminatedQuote(o)),
        // The last record runs to the end of the data, without a line feed.
        None => Ok((len, done + 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{XorShift, byte_soup, stress_cases};

    fn check(data: &[u8], pos: usize, n: u64, delim: u8) {
        let want = skip_records_portable(data, pos, n, delim);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            skip_records_masked(data, pos, n, delim),
            want,
            "pos {pos}, n {n}, on {:?}",
            String::from_utf8_lossy(data)
        );
        assert_eq!(skip_records(data, pos, n, delim), want);
    }

    #[test]
    fn examples() {
        let data = b"a,b\n1,\"x\ny\"\n\n\r\n2,\"q\"\"\"\n3,4";
        assert_eq!(skip_records(data, 4, 2, b','), Ok((data.len() - 3, 2)));
        assert_eq!(skip_records(data, 4, 10, b','), Ok((data.len(), 3)));
        assert_eq!(skip_records(data, 0, 0, b','), Ok((0, 0)));
        assert_eq!(
            skip_records(b"1,\"abc\n2,3\n", 0, 5, b','),
            Err(ScanError::UnterminatedQuote(2))
        );
        for (pos, n) in [(0, 1), (0, 4), (4, 1), (4, 3), (5, 1), (12, 2)] {
            check(data, pos, n, b',');
        }
    }

    /// Records longer than a window, quotes at window edges and escaped pairs split by them.
    #[test]
    fn window_edges() {
        for pad in 0..70 {
            let mut d = vec![b'x'; pad];
            d.extend_from_slice(b",\"");
            d.extend(std::iter::repeat_n(b'y', 61));
            d.extend_from_slice(b"\"\"\n,\"z\"\n\n");
            d.extend(std::iter::repeat_n(b'\n', 70));
            d.extend_from_slice(b"\"\"\"\"\n");
            for n in 0..5 {
                check(&d, 0, n, b',');
                check(&d, pad, n, b',');
            }
        }
    }

    /// Random text of delimiters, quotes, line feeds and CRs, from random record starts (and
    /// random positions: a split scan skips from any byte), for random counts.
    #[test]
    fn masked_equals_portable_on_random_text() {
        let alphabets: [&[u8]; 3] = [b"a,\"\n", b"ab,,\"\"\n\r;", b"abcdefgh,\"\n\r\xc3\xa9"];
        let mut rng = XorShift(0x5eed_5c1b);
        for seed in 0..stress_cases(3000) as u64 {
            let alphabet = alphabets[seed as usize % alphabets.len()];
            let len = 1 + rng.below(if seed % 4 == 0 { 600 } else { 150 });
            let d = byte_soup(seed + 1, len, alphabet);
            let delim = if alphabet.contains(&b';') && seed % 2 == 0 {
                b';'
            } else {
                b','
            };
            let pos = rng.below(len + 1);
            let n = rng.below(12) as u64;
            check(&d, 0, n, delim);
            check(&d, pos, n, delim);
            check(&d, pos, u64::MAX, delim);
        }
    }
}
