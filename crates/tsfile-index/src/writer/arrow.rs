//! The Arrow side of the writer: checking that an Arrow column can feed a TsFile data type,
//! and appending selected rows of it to a column buffer (DATE from `Date32` as
//! `yyyymmdd`, TIMESTAMP from any timestamp unit as the raw value).

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Float32Type, Float64Type, Int32Type, Int64Type, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use std::ops::Range;

use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};
use tsfile_format::types::TSDataType;

use super::buffer::Values;
use super::error::{WriteError, WriteResult};

/// True when values of Arrow type `from` can be stored as `to`.
pub(crate) fn compatible(from: &DataType, to: TSDataType) -> bool {
    use DataType as A;
    match to {
        TSDataType::Boolean => matches!(from, A::Boolean),
        TSDataType::Int32 => matches!(from, A::Int32),
        TSDataType::Date => matches!(from, A::Int32 | A::Date32),
        TSDataType::Int64 => matches!(from, A::Int64),
        TSDataType::Timestamp => matches!(from, A::Int64 | A::Timestamp(_, _)),
        TSDataType::Float => matches!(from, A::Float32),
        TSDataType::Double => matches!(from, A::Float64),
        TSDataType::Text | TSDataType::String | TSDataType::Blob => matches!(
            from,
            A::Utf8 | A::LargeUtf8 | A::Utf8View | A::Binary | A::LargeBinary | A::BinaryView
        ),
        _ => false,
    }
}

/// The TsFile data type an Arrow type maps to (`cli.md`, `tsfile import`).
pub fn tsfile_type_of(from: &DataType) -> Option<TSDataType> {
    use DataType as A;
    Some(match from {
        A::Boolean => TSDataType::Boolean,
        A::Int32 => TSDataType::Int32,
        A::Int64 => TSDataType::Int64,
        A::Float32 => TSDataType::Float,
        A::Float64 => TSDataType::Double,
        A::Utf8 | A::LargeUtf8 | A::Utf8View => TSDataType::String,
        A::Binary | A::LargeBinary | A::BinaryView => TSDataType::Blob,
        A::Date32 => TSDataType::Date,
        A::Timestamp(_, _) => TSDataType::Timestamp,
        _ => return None,
    })
}

/// Days since 1970-01-01 → `yyyy*10000 + mm*100 + dd` (§11), by the civil-from-days
/// algorithm of the proleptic Gregorian calendar.
pub fn date32_to_yyyymmdd(days: i32) -> i32 {
    let z = i64::from(days) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y * 10_000 + m * 100 + d) as i32
}

/// The i64 values of an Int64 or timestamp array.
pub(crate) fn i64_values(array: &dyn Array) -> Option<&[i64]> {
    Some(match array.data_type() {
        DataType::Int64 => array.as_primitive::<Int64Type>().values(),
        DataType::Timestamp(TimeUnit::Second, _) => {
            array.as_primitive::<TimestampSecondType>().values()
        }
        DataType::Timestamp(TimeUnit::Millisecond, _) => {
            array.as_primitive::<TimestampMillisecondType>().values()
        }
        DataType::Timestamp(TimeUnit::Microsecond, _) => {
            array.as_primitive::<TimestampMicrosecondType>().values()
        }
        DataType::Timestamp(TimeUnit::Nanosecond, _) => {
            array.as_primitive::<TimestampNanosecondType>().values()
        }
        _ => return None,
    })
}

/// The bytes of value `i` of a string or binary array (the caller checked the type).
pub(crate) fn bytes_at(array: &dyn Array, i: usize) -> &[u8] {
    match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().value(i).as_bytes(),
        DataType::LargeUtf8 => array.as_string::<i64>().value(i).as_bytes(),
        DataType::Utf8View => array.as_string_view().value(i).as_bytes(),
        DataType::Binary => array.as_binary::<i32>().value(i),
        DataType::LargeBinary => array.as_binary::<i64>().value(i),
        DataType::BinaryView => array.as_binary_view().value(i),
        _ => &[],
    }
}

/// A TAG column, downcast once: the string of each row, `None` when null.
#[derive(Debug, Clone, Copy)]
pub(crate) enum TagColumn<'a> {
    Utf8(&'a arrow_array::StringArray),
    LargeUtf8(&'a arrow_array::LargeStringArray),
    Utf8View(&'a arrow_array::StringViewArray),
    /// A column missing from the batch, or of another type: null in every row.
    Null,
}

impl<'a> TagColumn<'a> {
    /// Downcasts `array` (or `None` for a missing column).
    pub(crate) fn new(array: Option<&'a dyn Array>) -> Self {
        let Some(a) = array else {
            return TagColumn::Null;
        };
        match a.data_type() {
            DataType::Utf8 => TagColumn::Utf8(a.as_string::<i32>()),
            DataType::LargeUtf8 => TagColumn::LargeUtf8(a.as_string::<i64>()),
            DataType::Utf8View => TagColumn::Utf8View(a.as_string_view()),
            _ => TagColumn::Null,
        }
    }

    /// The end (exclusive, at most `limit`) of the run of rows from `start` whose value
    /// equals that of row `start` (nulls equal nulls).
    pub(crate) fn run_end(&self, start: usize, limit: usize) -> usize {
        match self {
            TagColumn::Utf8(a) if a.null_count() == 0 => {
                // The common case, without a null: lengths from the offsets first, then the
                // bytes, compared inline (tags are short).
                let offsets = a.value_offsets();
                let data = a.value_data();
                let span = |i: usize| offsets[i] as usize..offsets[i + 1] as usize;
                let key = &data[span(start)];
                let k = key.len();
                let mut i = start + 1;
                // A few rows one by one: short runs (devices interleaved) end here.
                let first = (start + 16).min(limit);
                while i < first && same_bytes(&data[span(i)], key) {
                    i += 1;
                }
                if i < first {
                    return i;
                }
                // Then whole blocks of rows: a block continues the run when its offsets step
                // by the key's length and its bytes are the key repeated.
                const BLOCK: usize = 64;
                let repeated = if k <= 256 {
                    key.repeat(BLOCK)
                } else {
                    Vec::new()
                };
                while k <= 256 && i + BLOCK <= limit {
                    let o = &offsets[i..=i + BLOCK];
                    let base = o[0] as usize;
                    let stepped = o
                        .iter()
                        .enumerate()
                        .fold(true, |ok, (j, &x)| ok & (x as usize == base + j * k));
                    if !stepped || data[base..base + BLOCK * k] != repeated[..] {
                        break;
                    }
                    i += BLOCK;
                }
                while i < limit && same_bytes(&data[span(i)], key) {
                    i += 1;
                }
                i
            }
            TagColumn::Null => limit,
            _ => {
                let key = self.get(start);
                let mut i = start + 1;
                while i < limit && self.get(i) == key {
                    i += 1;
                }
                i
            }
        }
    }

    /// The value of row `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> Option<&'a str> {
        match self {
            TagColumn::Utf8(a) => a.is_valid(i).then(|| a.value(i)),
            TagColumn::LargeUtf8(a) => a.is_valid(i).then(|| a.value(i)),
            TagColumn::Utf8View(a) => a.is_valid(i).then(|| a.value(i)),
            TagColumn::Null => None,
        }
    }
}

/// True when `a` and `b` hold the same bytes; slices of 8 to 16 bytes are compared as two
/// (overlapping) 8-byte words rather than through a `memcmp` call.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if (8..=16).contains(&n) {
        let word = |s: &[u8], at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&s[at..at + 8]);
            u64::from_ne_bytes(w)
        };
        return word(a, 0) == word(b, 0) && word(a, n - 8) == word(b, n - 8);
    }
    if n < 8 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    a == b
}

/// Appends the rows `runs` of `array` to `values`. With `validity`, every row gets a
/// presence flag and only non-null values are stored (aligned columns); without it, null rows
/// are skipped and the indices of the kept rows go to `kept` (non-aligned series). The
/// present rows are found as spans of set bits of the validity bitmap, and fixed-width values
/// are copied span by span.
pub(crate) fn append(
    values: &mut Values,
    array: &ArrayRef,
    runs: &[Range<usize>],
    data_type: TSDataType,
    mut validity: Option<&mut Vec<bool>>,
    mut kept: Option<&mut Vec<usize>>,
) -> WriteResult<()> {
    let a = array.as_ref();
    let nulls = a.logical_nulls().filter(|n| n.null_count() > 0);
    let bits = nulls.as_ref().map(|n| n.inner());
    let mut spans: Vec<Range<usize>> = Vec::new();
    for r in runs {
        spans.clear();
        match bits {
            None => spans.push(r.clone()),
            Some(b) => spans.extend(
                b.slice(r.start, r.len())
                    .set_slices()
                    .map(|(s, e)| r.start + s..r.start + e),
            ),
        }
        if let Some(v) = validity.as_deref_mut() {
            let base = v.len();
            v.resize(base + r.len(), false);
            for s in &spans {
                v[base + s.start - r.start..base + s.end - r.start].fill(true);
            }
        }
        if let Some(k) = kept.as_deref_mut() {
            for s in &spans {
                k.extend(s.clone());
            }
        }
        match values {
            Values::Boolean(v) => {
                let bits = a.as_boolean().values();
                for s in &spans {
                    v.extend(bits.slice(s.start, s.len()).iter());
                }
            }
            Values::Int32(v) => {
                if matches!(a.data_type(), DataType::Date32) {
                    let src = a.as_primitive::<Date32Type>().values();
                    for s in &spans {
                        v.extend(src[s.clone()].iter().map(|&d| date32_to_yyyymmdd(d)));
                    }
                } else {
                    extend(v, a.as_primitive::<Int32Type>().values(), &spans);
                }
            }
            Values::Int64(v) => {
                let src = i64_values(a).ok_or_else(|| type_error(a, data_type))?;
                extend(v, src, &spans);
            }
            Values::Float(v) => extend(v, a.as_primitive::<Float32Type>().values(), &spans),
            Values::Double(v) => extend(v, a.as_primitive::<Float64Type>().values(), &spans),
            Values::Binary { .. } => {
                for s in &spans {
                    for i in s.clone() {
                        values.push_binary(bytes_at(a, i));
                    }
                }
            }
        }
    }
    Ok(())
}

fn extend<T: Copy>(v: &mut Vec<T>, src: &[T], spans: &[Range<usize>]) {
    for s in spans {
        v.extend_from_slice(&src[s.clone()]);
    }
}

fn type_error(a: &dyn Array, to: TSDataType) -> WriteError {
    WriteError::schema(format!(
        "an Arrow {} column cannot be stored as {}",
        a.data_type(),
        to.name()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_runs_end_where_the_value_changes() {
        let long = "a_tag_value_of_twenty";
        let plain = arrow_array::StringArray::from(vec![
            "st00",
            "st00",
            "st01",
            "st_0000012",
            "st_0000012",
            "st_0000013",
            long,
            long,
            "",
        ]);
        let t = TagColumn::new(Some(&plain));
        let ends: Vec<usize> = [0, 2, 3, 5, 6, 8]
            .iter()
            .map(|&s| t.run_end(s, 9))
            .collect();
        assert_eq!(ends, [2, 3, 5, 6, 8, 9]);
        assert_eq!(t.run_end(0, 1), 1);
        let nulls = arrow_array::StringArray::from(vec![None, None, Some("x"), Some("x"), None]);
        let t = TagColumn::new(Some(&nulls));
        let ends: Vec<usize> = [0, 2, 4].iter().map(|&s| t.run_end(s, 5)).collect();
        assert_eq!(ends, [2, 4, 5]);
        assert_eq!(TagColumn::Null.run_end(1, 7), 7);
        // Runs longer than a block, ending inside or at the edge of one.
        for (len, total) in [(64, 64), (65, 300), (200, 200), (128, 129), (1000, 1000)] {
            let v: Vec<String> = (0..total)
                .map(|i| {
                    if i < len {
                        "dev".into()
                    } else {
                        format!("d{i}")
                    }
                })
                .collect();
            let a = arrow_array::StringArray::from(v);
            assert_eq!(TagColumn::new(Some(&a)).run_end(0, total), len);
            assert_eq!(TagColumn::new(Some(&a)).run_end(1, total), len);
        }
        let e = arrow_array::StringArray::from(vec![""; 150]);
        assert_eq!(TagColumn::new(Some(&e)).run_end(0, 150), 150);
        assert!(same_bytes(b"", b""));
        assert!(!same_bytes(b"abcdefgh1", b"abcdefgh2"));
        assert!(!same_bytes(b"1bcdefghi", b"2bcdefghi"));
        assert!(same_bytes(b"abcdefghijklmnopq", b"abcdefghijklmnopq"));
    }

    #[test]
    fn dates_convert_to_yyyymmdd() {
        assert_eq!(date32_to_yyyymmdd(0), 19_700_101);
        assert_eq!(date32_to_yyyymmdd(19_724), 20_240_102);
        assert_eq!(date32_to_yyyymmdd(-1), 19_691_231);
        assert_eq!(date32_to_yyyymmdd(10_957), 20_000_101);
    }
}
