//! The layouts of decompressed page payloads (reference §5.3–§5.5) and their inverses:
//! the non-aligned split (`UVarInt time_len`, time part, value part), the aligned time page
//! (timestamps only) and the aligned value page (`i32 row_count`, MSB-first presence bitmap,
//! the non-null values).

use crate::encoding::{self, ValueDecoder};
use crate::error::{Error, Result};
use crate::types::{TSDataType, TSEncoding};

/// The two streams of a non-aligned page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NonAlignedPage<'a> {
    /// The encoded timestamps.
    pub times: &'a [u8],
    /// Absolute offset of `times` (for error messages).
    pub times_offset: u64,
    /// The encoded values (one per timestamp; no nulls).
    pub values: &'a [u8],
    /// Absolute offset of `values`.
    pub values_offset: u64,
}

/// Splits a non-aligned page payload whose first byte sits at absolute offset `base`.
pub fn split_non_aligned(payload: &[u8], base: u64) -> Result<NonAlignedPage<'_>> {
    let mut pos = 0;
    let len =
        encoding::plain::read_uvarint_at(payload, &mut pos, 5, base, "page time length")? as usize;
    let avail = payload.len() - pos;
    if len > avail {
        return Err(Error::LengthOutOfBounds {
            what: "page time part",
            offset: base,
            declared: len as i64,
            available: avail as u64,
        });
    }
    Ok(NonAlignedPage {
        times: &payload[pos..pos + len],
        times_offset: base + pos as u64,
        values: &payload[pos + len..],
        values_offset: base + (pos + len) as u64,
    })
}

/// The inverse of [`split_non_aligned`]: appends `UVarInt time_len`, the time stream and the
/// value stream to `out`.
pub fn join_non_aligned(times: &[u8], values: &[u8], out: &mut Vec<u8>) {
    let mut w = crate::cursor::Writer::from_vec(std::mem::take(out));
    w.write_uvarint(times.len() as u32);
    w.write_bytes(times);
    w.write_bytes(values);
    *out = w.into_inner();
}

/// An aligned value page: row count, presence bitmap and the non-null values' stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlignedValuePage<'a> {
    /// Rows of the page, nulls included (= rows of the matching time page).
    pub row_count: usize,
    /// `ceil(row_count / 8)` bytes; bit `0x80 >> (i % 8)` of byte `i / 8` = row `i` present.
    pub bitmap: &'a [u8],
    /// The encoded non-null values.
    pub values: &'a [u8],
    /// Absolute offset of `values`.
    pub values_offset: u64,
}

impl AlignedValuePage<'_> {
    /// True when row `i` has a value.
    #[inline]
    pub fn is_present(&self, i: usize) -> bool {
        self.bitmap
            .get(i / 8)
            .is_some_and(|b| b & (0x80 >> (i % 8)) != 0)
    }

    /// The number of non-null values (the count the value decoder must produce).
    pub fn present_count(&self) -> usize {
        let full = self.row_count / 8;
        let mut n: usize = self.bitmap[..full]
            .iter()
            .map(|b| b.count_ones() as usize)
            .sum();
        let rest = self.row_count % 8;
        if rest > 0 {
            let mask = !(0xFFu8 >> rest);
            n += (self.bitmap[full] & mask).count_ones() as usize;
        }
        n
    }

    /// The validity of every row, in order.
    pub fn validity(&self) -> Vec<bool> {
        (0..self.row_count).map(|i| self.is_present(i)).collect()
    }
}

/// Splits an aligned value page payload whose first byte sits at absolute offset `base`.
/// (An empty page, the single header byte `00`, has no payload: all its rows are null.)
pub fn split_aligned_value(payload: &[u8], base: u64) -> Result<AlignedValuePage<'_>> {
    let Some(head) = payload.get(..4) else {
        return Err(Error::Truncated {
            what: "aligned value page row count",
            offset: base,
            needed: 4,
            available: payload.len() as u64,
        });
    };
    let rows = i32::from_be_bytes([head[0], head[1], head[2], head[3]]);
    let bm_len = (rows.max(0) as usize).div_ceil(8);
    if rows < 0 || bm_len > payload.len() - 4 {
        return Err(Error::LengthOutOfBounds {
            what: "aligned value page bitmap",
            offset: base,
            declared: i64::from(rows),
            available: (payload.len() - 4) as u64,
        });
    }
    Ok(AlignedValuePage {
        row_count: rows as usize,
        bitmap: &payload[4..4 + bm_len],
        values: &payload[4 + bm_len..],
        values_offset: base + 4 + bm_len as u64,
    })
}

/// The inverse of [`split_aligned_value`]: appends the row count, the MSB-first bitmap of
/// `validity` and the value stream (of the `true` rows only) to `out`.
pub fn join_aligned_value(validity: &[bool], values: &[u8], out: &mut Vec<u8>) {
    out.reserve(4 + validity.len().div_ceil(8) + values.len());
    aligned_value_head(validity, out);
    out.extend_from_slice(values);
}

/// The head of an aligned value page: appends the row count and the MSB-first bitmap of
/// `validity` to `out` (the value stream follows it).
pub fn aligned_value_head(validity: &[bool], out: &mut Vec<u8>) {
    out.extend_from_slice(&(validity.len() as i32).to_be_bytes());
    let chunks = validity.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        let mut b = 0u8;
        for (j, &v) in c.iter().enumerate() {
            b |= u8::from(v) << (7 - j);
        }
        out.push(b);
    }
    if !tail.is_empty() {
        let mut b = 0u8;
        for (j, &v) in tail.iter().enumerate() {
            b |= u8::from(v) << (7 - j);
        }
        out.push(b);
    }
}

/// Decodes a time stream (non-aligned time part or aligned time page) with the chunk's
/// time encoding, appending at most `limit` timestamps.
pub fn decode_times(
    encoding: TSEncoding,
    stream: &[u8],
    base: u64,
    out: &mut Vec<i64>,
    limit: usize,
) -> Result<usize> {
    let mut d =
        encoding::int64_decoder(encoding, stream, base).ok_or_else(|| Error::Unsupported {
            what: "time encoding",
            reason: format!("{} cannot carry timestamps", encoding.name()),
        })?;
    d.decode_all(out, limit)
}

/// The time encoding of a non-aligned page's time part. The chunk header records only the
/// value encoding; the writers take the time encoding from their configuration (TS_2DIFF by
/// default, PLAIN when configured so). A TS_2DIFF stream is a chain of block headers whose
/// counts, widths and packed sizes consume the part exactly; anything else whose length is
/// a multiple of 8 is PLAIN. (A PLAIN part can mimic such a chain only if every 24 bytes of
/// timestamps spell a valid header, which real timestamps do not.)
pub fn detect_time_encoding(stream: &[u8]) -> TSEncoding {
    let mut pos = 0usize;
    let mut blocks = 0;
    while pos < stream.len() {
        let Some(h) = stream.get(pos..pos + 24) else {
            break;
        };
        let n = i32::from_be_bytes([h[0], h[1], h[2], h[3]]);
        let w = i32::from_be_bytes([h[4], h[5], h[6], h[7]]);
        if !(0..=128).contains(&n) || !(0..=64).contains(&w) {
            break;
        }
        pos += 24 + (n as usize * w as usize).div_ceil(8);
        blocks += 1;
    }
    if blocks > 0 && pos == stream.len() {
        TSEncoding::Ts2Diff
    } else if stream.len().is_multiple_of(8) {
        TSEncoding::Plain
    } else {
        TSEncoding::Ts2Diff
    }
}

/// Encodes timestamps with `encoding` (the inverse of [`decode_times`]).
pub fn encode_times(encoding: TSEncoding, times: &[i64]) -> Result<Vec<u8>> {
    let mut e = encoding::encoder(encoding, TSDataType::Int64)?;
    let mut out = Vec::new();
    match &mut e {
        encoding::ValueEncoder::Int64(e) => {
            e.put_slice(times);
            e.flush(&mut out);
        }
        _ => unreachable!("an INT64 encoder is always ValueEncoder::Int64"),
    }
    Ok(out)
}

/// Every value of one page, decoded, by type.
#[derive(Debug, Clone, PartialEq)]
pub enum PageValues<'a> {
    /// BOOLEAN.
    Boolean(Vec<bool>),
    /// INT32 and DATE.
    Int32(Vec<i32>),
    /// INT64 and TIMESTAMP.
    Int64(Vec<i64>),
    /// FLOAT.
    Float(Vec<f32>),
    /// DOUBLE.
    Double(Vec<f64>),
    /// TEXT, STRING and BLOB (borrowing the page buffer).
    Binary(Vec<&'a [u8]>),
}

impl PageValues<'_> {
    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            PageValues::Boolean(v) => v.len(),
            PageValues::Int32(v) => v.len(),
            PageValues::Int64(v) => v.len(),
            PageValues::Float(v) => v.len(),
            PageValues::Double(v) => v.len(),
            PageValues::Binary(v) => v.len(),
        }
    }

    /// True when there is no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Decodes exactly `count` values of a page's value stream, or fails naming the shortfall.
pub fn decode_values<'a>(
    encoding: TSEncoding,
    data_type: TSDataType,
    stream: &'a [u8],
    base: u64,
    count: usize,
) -> Result<PageValues<'a>> {
    fn all<T>(d: &mut dyn encoding::Decoder<T>, count: usize, base: u64) -> Result<Vec<T>> {
        let mut v = Vec::with_capacity(count.min(1 << 16));
        let n = d.decode_all(&mut v, count)?;
        if n != count {
            return Err(Error::Invalid {
                what: "page values",
                offset: base,
                reason: format!("{n} values decoded, {count} expected"),
            });
        }
        Ok(v)
    }
    Ok(
        match encoding::decoder(encoding, data_type, stream, base)? {
            ValueDecoder::Boolean(mut d) => PageValues::Boolean(all(d.as_mut(), count, base)?),
            ValueDecoder::Int32(mut d) => PageValues::Int32(all(d.as_mut(), count, base)?),
            ValueDecoder::Int64(mut d) => PageValues::Int64(all(d.as_mut(), count, base)?),
            ValueDecoder::Float(mut d) => PageValues::Float(all(d.as_mut(), count, base)?),
            ValueDecoder::Double(mut d) => PageValues::Double(all(d.as_mut(), count, base)?),
            ValueDecoder::Binary(mut d) => PageValues::Binary(all(d.as_mut(), count, base)?),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tv4_aligned_value_page() {
        let payload = [0, 0, 0, 3, 0xe0, 0x0e, 0x10, 0x12];
        let p = split_aligned_value(&payload, 50).unwrap();
        assert_eq!(p.row_count, 3);
        assert_eq!(p.present_count(), 3);
        let v = decode_values(
            TSEncoding::Plain,
            TSDataType::Int32,
            p.values,
            p.values_offset,
            3,
        )
        .unwrap();
        assert_eq!(v, PageValues::Int32(vec![7, 8, 9]));
        let mut back = Vec::new();
        join_aligned_value(&p.validity(), p.values, &mut back);
        assert_eq!(back, payload);
    }

    #[test]
    fn null_row_bitmap() {
        let payload = [0, 0, 0, 2, 0x80, 0x14];
        let p = split_aligned_value(&payload, 0).unwrap();
        assert_eq!(p.validity(), [true, false]);
        assert_eq!(p.present_count(), 1);
    }

    #[test]
    fn non_aligned_split_and_join() {
        let times = encode_times(TSEncoding::Plain, &[100, 101, 102]).unwrap();
        let mut page = Vec::new();
        join_non_aligned(&times, &[0x0e, 0x10, 0x12], &mut page);
        assert_eq!(page[0], 0x18);
        let p = split_non_aligned(&page, 0).unwrap();
        let mut t = Vec::new();
        decode_times(
            TSEncoding::Plain,
            p.times,
            p.times_offset,
            &mut t,
            usize::MAX,
        )
        .unwrap();
        assert_eq!(t, [100, 101, 102]);
        assert_eq!(p.values, [0x0e, 0x10, 0x12]);
    }

    #[test]
    fn lying_sizes_are_refused() {
        assert!(split_non_aligned(&[0x7f, 1, 2], 0).is_err());
        assert!(split_aligned_value(&[0, 0, 1, 0, 0xff], 0).is_err());
        assert!(split_aligned_value(&[0xff, 0, 0, 0], 0).is_err());
    }
}
