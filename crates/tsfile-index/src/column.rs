//! Arrow column builders fed with decoded page values, nulls and selections.
//!
//! A [`ColumnBuilder`] owns one output column of a known TsFile type. Readers append
//! decoded values (all present, for non-aligned pages) or values paired with the MSB-first
//! presence bitmap of an aligned value page, restricted to a row window when a time filter cuts
//! a page; [`ColumnBuilder::finish`] yields the Arrow array.

use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, BinaryBuilder, BooleanBuilder, Date32Builder, NullBufferBuilder, StringBuilder,
};
use arrow_array::types::{
    Float32Type, Float64Type, Int32Type, Int64Type, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{ArrayRef, ArrowNativeTypeOp, ArrowPrimitiveType, Int64Array, PrimitiveArray};
use arrow_schema::TimeUnit;
use tsfile_format::encoding::{Decoder, ValueDecoder};
use tsfile_format::types::TSDataType;

use crate::arrow_types::{TimeRepr, date_to_days};
use crate::error::{Error, Result};

/// The decoded non-null values of one page, in row order: the same type as the format
/// crate's page decoder returns, so both crates share one definition.
pub use tsfile_format::page_payload::PageValues;

/// Decodes exactly `n` values from `decoder` (the page's value stream at file offset `at`);
/// a stream that ends early is an error naming the page.
pub fn decode_values<'a>(
    decoder: &mut ValueDecoder<'a>,
    n: usize,
    at: u64,
) -> Result<PageValues<'a>> {
    fn take<T>(d: &mut (dyn Decoder<T> + '_), n: usize, at: u64) -> Result<Vec<T>> {
        // `n` comes from the file; reserve a bounded amount and let real values grow it.
        let mut out = Vec::with_capacity(n.min(1 << 16));
        let got = d.decode_all(&mut out, n)?;
        if got < n {
            return Err(Error::corrupt(
                "page values",
                at,
                format!("the value stream ends after {got} of {n} values"),
            ));
        }
        Ok(out)
    }
    Ok(match decoder {
        ValueDecoder::Boolean(d) => PageValues::Boolean(take(d.as_mut(), n, at)?),
        ValueDecoder::Int32(d) => PageValues::Int32(take(d.as_mut(), n, at)?),
        ValueDecoder::Int64(d) => PageValues::Int64(take(d.as_mut(), n, at)?),
        ValueDecoder::Float(d) => PageValues::Float(take(d.as_mut(), n, at)?),
        ValueDecoder::Double(d) => PageValues::Double(take(d.as_mut(), n, at)?),
        ValueDecoder::Binary(d) => PageValues::Binary(take(d.as_mut(), n, at)?),
    })
}

/// Skips exactly `n` values of `decoder`; a stream that ends early is an error.
pub fn skip_values(decoder: &mut ValueDecoder<'_>, n: usize, at: u64) -> Result<()> {
    let got = decoder.skip(n)?;
    if got < n {
        return Err(Error::corrupt(
            "page values",
            at,
            format!("the value stream ends after {got} of {n} skipped values"),
        ));
    }
    Ok(())
}

/// The values of a numeric column and their validity. Unlike Arrow's primitive builders
/// the values are a `Vec`, so page decoders append to it directly (no decoded copy of the
/// page in between); a null holds `T::default()`, as in Arrow's builders.
#[derive(Debug)]
struct Values<T> {
    values: Vec<T>,
    nulls: NullBufferBuilder,
    /// Scratch of [`Values::decode_masked`]: `(first, end, present)` row runs of a page.
    runs: Vec<(usize, usize, bool)>,
}

impl<T: Copy + Default> Values<T> {
    fn with_capacity(capacity: usize) -> Self {
        Self {
            values: Vec::with_capacity(capacity),
            nulls: NullBufferBuilder::new(capacity),
            runs: Vec::new(),
        }
    }

    fn append_nulls(&mut self, n: usize) {
        self.values.resize(self.values.len() + n, T::default());
        self.nulls.append_n_nulls(n);
    }

    fn append_slice(&mut self, v: &[T]) {
        self.values.extend_from_slice(v);
        self.nulls.append_n_non_nulls(v.len());
    }

    /// Decodes the `present` values of rows `rows` of an aligned value page (`bitmap` is its
    /// MSB-first presence bitmap, the decoder stands at the first of them) straight into
    /// the column, then spreads them over their rows from the back, nulls in between.
    fn decode_masked(
        &mut self,
        d: &mut (dyn Decoder<T> + '_),
        present: usize,
        bitmap: &[u8],
        rows: std::ops::Range<usize>,
        at: u64,
    ) -> Result<()> {
        let start = self.values.len();
        let got = d.decode_all(&mut self.values, present)?;
        if got < present {
            self.values.truncate(start);
            return Err(Error::corrupt(
                "page values",
                at,
                format!("the value stream ends after {got} of {present} values"),
            ));
        }
        let n = rows.len();
        if present == n {
            self.nulls.append_n_non_nulls(n);
            return Ok(());
        }
        // Runs of present rows and of nulls, then each run moved to its rows from the back:
        // a value never moves to an earlier place, so a backward pass moves each once.
        self.runs.clear();
        let mut in_runs = 0;
        let mut row = rows.start;
        while row < rows.end {
            let p = is_present(bitmap, row);
            let end = run_end(bitmap, row, rows.end, p);
            if p {
                in_runs += end - row;
            }
            self.runs.push((row - rows.start, end - rows.start, p));
            row = end;
        }
        if in_runs != present {
            self.values.truncate(start);
            return Err(Error::corrupt(
                "value page",
                at,
                format!("bitmap marks {in_runs} rows present where {present} values were decoded"),
            ));
        }
        for &(a, b, p) in &self.runs {
            if p {
                self.nulls.append_n_non_nulls(b - a);
            } else {
                self.nulls.append_n_nulls(b - a);
            }
        }
        self.values.resize(start + n, T::default());
        let mut src = start + present;
        for &(a, b, p) in self.runs.iter().rev() {
            let (a, b) = (start + a, start + b);
            if p {
                src -= b - a;
                self.values.copy_within(src..src + (b - a), a);
            } else {
                self.values[a..b].fill(T::default());
            }
        }
        Ok(())
    }

    fn finish<P: ArrowPrimitiveType<Native = T>>(&mut self) -> PrimitiveArray<P>
    where
        T: ArrowNativeTypeOp,
    {
        PrimitiveArray::new(std::mem::take(&mut self.values).into(), self.nulls.finish())
    }
}

/// The Arrow builder behind a [`ColumnBuilder`].
#[derive(Debug)]
enum Inner {
    Boolean(BooleanBuilder),
    Int32(Values<i32>),
    Int64(Values<i64>),
    Timestamp(Values<i64>, TimeRepr),
    Float(Values<f32>),
    Double(Values<f64>),
    Utf8(StringBuilder),
    Binary(BinaryBuilder),
    Date(Date32Builder),
}

/// Builds one Arrow column of TsFile type `data_type` from decoded pages.
#[derive(Debug)]
pub struct ColumnBuilder {
    data_type: TSDataType,
    inner: Inner,
    /// Offset of the page being appended, for error messages.
    page_offset: u64,
}

impl ColumnBuilder {
    /// A builder for values of `data_type`, with TIMESTAMP represented as `time`.
    pub fn new(data_type: TSDataType, time: TimeRepr, capacity: usize) -> Result<Self> {
        let inner = match data_type {
            TSDataType::Boolean => Inner::Boolean(BooleanBuilder::with_capacity(capacity)),
            TSDataType::Int32 => Inner::Int32(Values::with_capacity(capacity)),
            TSDataType::Int64 => Inner::Int64(Values::with_capacity(capacity)),
            TSDataType::Timestamp => Inner::Timestamp(Values::with_capacity(capacity), time),
            TSDataType::Float => Inner::Float(Values::with_capacity(capacity)),
            TSDataType::Double => Inner::Double(Values::with_capacity(capacity)),
            TSDataType::Text | TSDataType::String => {
                Inner::Utf8(StringBuilder::with_capacity(capacity, capacity * 8))
            }
            TSDataType::Blob => Inner::Binary(BinaryBuilder::with_capacity(capacity, capacity * 8)),
            TSDataType::Date => Inner::Date(Date32Builder::with_capacity(capacity)),
            TSDataType::Vector | TSDataType::Unknown => {
                return Err(Error::Request(format!(
                    "a {data_type} column carries no values"
                )));
            }
        };
        Ok(Self {
            data_type,
            inner,
            page_offset: 0,
        })
    }

    /// The TsFile type of the column.
    pub fn data_type(&self) -> TSDataType {
        self.data_type
    }

    /// Sets the file offset reported by errors for the values appended next.
    pub fn at_page(&mut self, offset: u64) {
        self.page_offset = offset;
    }

    /// Appends `n` nulls.
    pub fn append_nulls(&mut self, n: usize) {
        match &mut self.inner {
            Inner::Boolean(b) => b.append_nulls(n),
            Inner::Int32(b) => b.append_nulls(n),
            Inner::Int64(b) | Inner::Timestamp(b, _) => b.append_nulls(n),
            Inner::Float(b) => b.append_nulls(n),
            Inner::Double(b) => b.append_nulls(n),
            Inner::Utf8(b) => {
                for _ in 0..n {
                    b.append_null();
                }
            }
            Inner::Binary(b) => {
                for _ in 0..n {
                    b.append_null();
                }
            }
            Inner::Date(b) => b.append_nulls(n),
        }
    }

    /// Appends `values[range]`, all present.
    pub fn append_values(
        &mut self,
        values: &PageValues<'_>,
        range: std::ops::Range<usize>,
    ) -> Result<()> {
        let page = self.page_offset;
        match (&mut self.inner, values) {
            (Inner::Boolean(b), PageValues::Boolean(v)) => b.append_slice(slice(v, &range, page)?),
            (Inner::Int32(b), PageValues::Int32(v)) => b.append_slice(slice(v, &range, page)?),
            (Inner::Int64(b) | Inner::Timestamp(b, _), PageValues::Int64(v)) => {
                b.append_slice(slice(v, &range, page)?)
            }
            (Inner::Float(b), PageValues::Float(v)) => b.append_slice(slice(v, &range, page)?),
            (Inner::Double(b), PageValues::Double(v)) => b.append_slice(slice(v, &range, page)?),
            (Inner::Date(b), PageValues::Int32(v)) => {
                for &d in slice(v, &range, page)? {
                    b.append_value(date(d, page)?);
                }
            }
            (Inner::Utf8(b), PageValues::Binary(v)) => {
                for bytes in slice(v, &range, page)? {
                    b.append_value(utf8(bytes, page)?);
                }
            }
            (Inner::Binary(b), PageValues::Binary(v)) => {
                for bytes in slice(v, &range, page)? {
                    b.append_value(bytes);
                }
            }
            _ => return Err(self.mismatch()),
        }
        Ok(())
    }

    /// Decodes the `present` values of rows `rows` of an aligned value page from `decoder`
    /// (standing at the first of them; `bitmap` is the page's MSB-first presence bitmap and
    /// `at` the value stream's offset) and appends the rows. Numeric columns receive the
    /// values straight from the decoder; the others go through [`decode_values`] and
    /// [`ColumnBuilder::append_masked`].
    pub fn decode_masked(
        &mut self,
        decoder: &mut ValueDecoder<'_>,
        present: usize,
        bitmap: &[u8],
        rows: std::ops::Range<usize>,
        at: u64,
    ) -> Result<()> {
        let direct = match (&mut self.inner, &mut *decoder) {
            (Inner::Int32(v), ValueDecoder::Int32(d)) => {
                Some(v.decode_masked(d.as_mut(), present, bitmap, rows.clone(), at))
            }
            (Inner::Int64(v) | Inner::Timestamp(v, _), ValueDecoder::Int64(d)) => {
                Some(v.decode_masked(d.as_mut(), present, bitmap, rows.clone(), at))
            }
            (Inner::Float(v), ValueDecoder::Float(d)) => {
                Some(v.decode_masked(d.as_mut(), present, bitmap, rows.clone(), at))
            }
            (Inner::Double(v), ValueDecoder::Double(d)) => {
                Some(v.decode_masked(d.as_mut(), present, bitmap, rows.clone(), at))
            }
            _ => None,
        };
        match direct {
            Some(result) => result,
            None => {
                let values = decode_values(decoder, present, at)?;
                self.append_masked(&values, 0, bitmap, rows)
            }
        }
    }

    /// Appends rows `rows` of an aligned value page: `bitmap` is the page's MSB-first presence
    /// bitmap and `values[first_value..]` holds the values of the present rows from
    /// `rows.start` on, in row order (callers that skipped the values before the window pass 0,
    /// callers that decoded the whole page pass [`present_before`]`(bitmap, rows.start)`).
    pub fn append_masked(
        &mut self,
        values: &PageValues<'_>,
        first_value: usize,
        bitmap: &[u8],
        rows: std::ops::Range<usize>,
    ) -> Result<()> {
        let page = self.page_offset;
        let mut next = first_value;
        let mut row = rows.start;
        // Appends runs of present rows and runs of nulls, not single cells, to keep the
        // per-row cost of the builders low.
        while row < rows.end {
            let present = is_present(bitmap, row);
            let end = run_end(bitmap, row, rows.end, present);
            let run = end - row;
            if present {
                if next + run > values.len() {
                    return Err(Error::corrupt(
                        "value page",
                        page,
                        format!(
                            "bitmap marks more rows present than the {} values decoded",
                            values.len()
                        ),
                    ));
                }
                self.append_values(values, next..next + run)?;
                next += run;
            } else {
                self.append_nulls(run);
            }
            row = end;
        }
        Ok(())
    }

    /// Number of rows appended so far.
    pub fn len(&self) -> usize {
        match &self.inner {
            Inner::Boolean(b) => b.len(),
            Inner::Int32(b) => b.values.len(),
            Inner::Int64(b) | Inner::Timestamp(b, _) => b.values.len(),
            Inner::Float(b) => b.values.len(),
            Inner::Double(b) => b.values.len(),
            Inner::Utf8(b) => b.len(),
            Inner::Binary(b) => b.len(),
            Inner::Date(b) => b.len(),
        }
    }

    /// True when nothing was appended.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The finished Arrow array.
    pub fn finish(&mut self) -> ArrayRef {
        match &mut self.inner {
            Inner::Boolean(b) => Arc::new(b.finish()),
            Inner::Int32(b) => Arc::new(b.finish::<Int32Type>()),
            Inner::Int64(b) => Arc::new(b.finish::<Int64Type>()),
            Inner::Timestamp(b, repr) => time_array(b.finish::<Int64Type>(), *repr),
            Inner::Float(b) => Arc::new(b.finish::<Float32Type>()),
            Inner::Double(b) => Arc::new(b.finish::<Float64Type>()),
            Inner::Utf8(b) => Arc::new(b.finish()),
            Inner::Binary(b) => Arc::new(b.finish()),
            Inner::Date(b) => Arc::new(b.finish()),
        }
    }

    fn mismatch(&self) -> Error {
        Error::corrupt(
            "page",
            self.page_offset,
            format!(
                "decoded values do not match the column type {}",
                self.data_type
            ),
        )
    }
}

/// An `Int64Array` of stored times as the Arrow type `repr` asks for.
pub fn time_array(values: Int64Array, repr: TimeRepr) -> ArrayRef {
    match repr {
        TimeRepr::Int64 => Arc::new(values),
        TimeRepr::Timestamp(TimeUnit::Second) => {
            Arc::new(values.reinterpret_cast::<TimestampSecondType>())
        }
        TimeRepr::Timestamp(TimeUnit::Millisecond) => {
            Arc::new(values.reinterpret_cast::<TimestampMillisecondType>())
        }
        TimeRepr::Timestamp(TimeUnit::Microsecond) => {
            Arc::new(values.reinterpret_cast::<TimestampMicrosecondType>())
        }
        TimeRepr::Timestamp(TimeUnit::Nanosecond) => {
            Arc::new(values.reinterpret_cast::<TimestampNanosecondType>())
        }
    }
}

/// True when row `row` is present in an MSB-first bitmap.
pub fn is_present(bitmap: &[u8], row: usize) -> bool {
    bitmap
        .get(row / 8)
        .is_some_and(|b| b & (0x80 >> (row % 8)) != 0)
}

/// The end of the run of rows from `row` (exclusive, at most `end`) whose presence in an
/// MSB-first bitmap equals `present` (rows past the bitmap are absent). Whole bytes of the
/// run are stepped over at once: a page without nulls is one run found in `rows / 8` steps.
pub fn run_end(bitmap: &[u8], row: usize, end: usize, present: bool) -> usize {
    let same = |r: usize| is_present(bitmap, r) == present;
    let mut r = row;
    while r < end && !r.is_multiple_of(8) && same(r) {
        r += 1;
    }
    if r < end && !r.is_multiple_of(8) {
        return r;
    }
    let full = if present { 0xFF } else { 0x00 };
    while r + 8 <= end && bitmap.get(r / 8).copied().unwrap_or(0) == full {
        r += 8;
    }
    while r < end && same(r) {
        r += 1;
    }
    r
}

/// Number of present rows before row `row` in an MSB-first bitmap.
pub fn present_before(bitmap: &[u8], row: usize) -> usize {
    let full = (row / 8).min(bitmap.len());
    let mut n: usize = bitmap[..full].iter().map(|b| b.count_ones() as usize).sum();
    if let Some(b) = bitmap.get(row / 8)
        && !row.is_multiple_of(8)
    {
        n += (b & !(0xFFu8 >> (row % 8))).count_ones() as usize;
    }
    n
}

fn slice<'a, T>(v: &'a [T], range: &std::ops::Range<usize>, page: u64) -> Result<&'a [T]> {
    v.get(range.clone()).ok_or_else(|| {
        Error::corrupt(
            "page",
            page,
            format!(
                "rows {range:?} asked of a page that decoded {} values",
                v.len()
            ),
        )
    })
}

fn date(v: i32, page: u64) -> Result<i32> {
    date_to_days(v)
        .ok_or_else(|| Error::corrupt("DATE value", page, format!("{v} is not a yyyymmdd date")))
}

fn utf8(bytes: &[u8], page: u64) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|_| Error::corrupt("text value", page, "not valid UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, Int32Array};

    #[test]
    fn bitmap_helpers() {
        let bm = [0b1010_0000u8, 0b1000_0000];
        assert!(is_present(&bm, 0));
        assert!(!is_present(&bm, 1));
        assert!(is_present(&bm, 2));
        assert!(is_present(&bm, 8));
        assert!(!is_present(&bm, 100));
        assert_eq!(present_before(&bm, 0), 0);
        assert_eq!(present_before(&bm, 3), 2);
        assert_eq!(present_before(&bm, 9), 3);
    }

    #[test]
    fn run_ends_match_a_bit_by_bit_scan() {
        let bm = [0xFF, 0xFF, 0b1110_0000, 0x00, 0x00, 0b0000_0111, 0xFF];
        let slow = |row: usize, end: usize| {
            let p = is_present(&bm, row);
            let mut e = row + 1;
            while e < end && is_present(&bm, e) == p {
                e += 1;
            }
            e
        };
        for end in 1..64 {
            for row in 0..end {
                let p = is_present(&bm, row);
                assert_eq!(run_end(&bm, row, end, p), slow(row, end), "{row}..{end}");
            }
        }
        assert_eq!(run_end(&bm, 0, 19, true), 19);
        assert_eq!(run_end(&bm, 19, 45, false), 45);
    }

    #[test]
    fn masked_append_with_window() {
        let mut b = ColumnBuilder::new(TSDataType::Int32, TimeRepr::default(), 4).unwrap();
        // Rows: 0 present (7), 1 null, 2 present (8), 3 present (9); take rows 1..4.
        let values = PageValues::Int32(vec![7, 8, 9]);
        b.append_masked(&values, 1, &[0b1011_0000], 1..4).unwrap();
        let arr = b.finish();
        let arr = arr.as_any().downcast_ref::<Int32Array>().unwrap();
        assert_eq!(arr.iter().collect::<Vec<_>>(), vec![None, Some(8), Some(9)]);
    }

    /// A decoder over given values.
    struct Given(Vec<i32>);

    impl Decoder<i32> for Given {
        fn decode(
            &mut self,
            out: &mut Vec<i32>,
            max: usize,
        ) -> tsfile_format::error::Result<usize> {
            let n = max.min(self.0.len());
            out.extend(self.0.drain(..n));
            Ok(n)
        }

        fn skip(&mut self, n: usize) -> tsfile_format::error::Result<usize> {
            let n = n.min(self.0.len());
            self.0.drain(..n);
            Ok(n)
        }
    }

    #[test]
    fn decoding_into_the_column_equals_appending_decoded_values() {
        // Rows 0..9 present at 0, 2, 3, 5, 6, 8; the window 1..9 holds five of them.
        let bitmap = [0b1011_0110u8, 0b1000_0000];
        let values = vec![20, 30, 50, 60, 80];
        let mut direct = ColumnBuilder::new(TSDataType::Int32, TimeRepr::default(), 0).unwrap();
        direct.append_nulls(1);
        let mut dec = ValueDecoder::Int32(Box::new(Given(values.clone())));
        direct.decode_masked(&mut dec, 5, &bitmap, 1..9, 0).unwrap();
        let mut dec = ValueDecoder::Int32(Box::new(Given(vec![7, 8])));
        direct.decode_masked(&mut dec, 2, &[0xFF], 0..2, 0).unwrap();
        let mut copied = ColumnBuilder::new(TSDataType::Int32, TimeRepr::default(), 0).unwrap();
        copied.append_nulls(1);
        let page = PageValues::Int32(values);
        copied.append_masked(&page, 0, &bitmap, 1..9).unwrap();
        copied
            .append_masked(&PageValues::Int32(vec![7, 8]), 0, &[0xFF], 0..2)
            .unwrap();
        let (direct, copied) = (direct.finish(), copied.finish());
        assert_eq!(direct.to_data(), copied.to_data());
        let arr = direct.as_any().downcast_ref::<Int32Array>().unwrap();
        assert_eq!(
            arr.iter().collect::<Vec<_>>(),
            vec![
                None,
                None,
                Some(20),
                Some(30),
                None,
                Some(50),
                Some(60),
                None,
                Some(80),
                Some(7),
                Some(8)
            ]
        );
    }

    #[test]
    fn a_short_value_stream_is_an_error_when_decoding_into_the_column() {
        let mut b = ColumnBuilder::new(TSDataType::Int32, TimeRepr::default(), 0).unwrap();
        let mut dec = ValueDecoder::Int32(Box::new(Given(vec![1])));
        let err = b.decode_masked(&mut dec, 2, &[0xC0], 0..2, 99).unwrap_err();
        assert!(err.to_string().contains("ends after 1 of 2"), "{err}");
        assert!(b.is_empty());
    }

    #[test]
    fn lying_bitmap_is_an_error() {
        let mut b = ColumnBuilder::new(TSDataType::Int32, TimeRepr::default(), 4).unwrap();
        let values = PageValues::Int32(vec![7]);
        assert!(b.append_masked(&values, 0, &[0b1100_0000], 0..2).is_err());
    }
}
