//! The JSON value representation of rows, shared by every command that prints rows and by
//! the conformance checks (the `bazan` CLI contract).
//!
//! A row is an object `{column: value}` in column order; every column appears, nulls as
//! `null`. Integers keep full 64-bit precision, floats use the shortest text that round-trips
//! (NaN and infinities as the strings `"NaN"`, `"inf"`, `"-inf"`), dates are `"YYYY-MM-DD"`,
//! timestamps integers in the column's unit, binary lowercase hex, lists arrays and structs
//! objects.

use std::io::Write as _;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, Float16Type, Float32Type, Float64Type, Int8Type, Int16Type, Int32Type,
    Int64Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use serde_json::Value;

/// Appends row `row` of `batch` as one JSON object (no newline) to `out`.
pub fn write_row(batch: &RecordBatch, row: usize, out: &mut Vec<u8>) {
    out.push(b'{');
    for (i, (field, column)) in batch
        .schema()
        .fields()
        .iter()
        .zip(batch.columns())
        .enumerate()
    {
        if i > 0 {
            out.push(b',');
        }
        write_str(field.name(), out);
        out.push(b':');
        write_value(column.as_ref(), row, out);
    }
    out.push(b'}');
}

/// Appends every row of `batch` as newline-delimited JSON to `out`.
pub fn write_ndjson(batch: &RecordBatch, out: &mut Vec<u8>) {
    for row in 0..batch.num_rows() {
        write_row(batch, row, out);
        out.push(b'\n');
    }
}

/// Row `row` of `batch` as a [`serde_json::Value`] object (for comparisons in tests).
pub fn row_value(batch: &RecordBatch, row: usize) -> Value {
    let mut out = Vec::new();
    write_row(batch, row, &mut out);
    // The writer only produces valid JSON, so this cannot fail; a failure would be a bug.
    serde_json::from_slice(&out).unwrap_or(Value::Null)
}

/// One cell as a [`serde_json::Value`].
pub fn cell_value(array: &dyn Array, row: usize) -> Value {
    let mut out = Vec::new();
    write_value(array, row, &mut out);
    serde_json::from_slice(&out).unwrap_or(Value::Null)
}

/// The text form of one cell for CSV and table output: like the JSON form, but strings bare
/// and null empty.
pub fn cell_text(array: &dyn Array, row: usize) -> String {
    if array.is_null(row) {
        return String::new();
    }
    match array.data_type() {
        DataType::Utf8 => array.as_string::<i32>().value(row).to_string(),
        DataType::LargeUtf8 => array.as_string::<i64>().value(row).to_string(),
        DataType::Utf8View => array.as_string_view().value(row).to_string(),
        _ => {
            let mut out = Vec::new();
            write_value(array, row, &mut out);
            let text = String::from_utf8_lossy(&out).into_owned();
            match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                Some(inner) if !inner.contains('"') && !inner.contains('\\') => inner.to_string(),
                _ => text,
            }
        }
    }
}

fn write_str(s: &str, out: &mut Vec<u8>) {
    // Writing into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

fn write_f64(v: f64, out: &mut Vec<u8>) {
    if v.is_nan() {
        out.extend_from_slice(b"\"NaN\"");
    } else if v.is_infinite() {
        out.extend_from_slice(if v > 0.0 { b"\"inf\"" } else { b"\"-inf\"" });
    } else {
        let _ = serde_json::to_writer(&mut *out, &v);
    }
}

fn write_f32(v: f32, out: &mut Vec<u8>) {
    if v.is_nan() || v.is_infinite() {
        write_f64(f64::from(v), out);
    } else {
        let _ = serde_json::to_writer(&mut *out, &v);
    }
}

fn write_int(v: impl std::fmt::Display, out: &mut Vec<u8>) {
    let _ = write!(out, "{v}");
}

/// Appends one cell's JSON value to `out`.
pub fn write_value(array: &dyn Array, row: usize, out: &mut Vec<u8>) {
    if array.is_null(row) {
        out.extend_from_slice(b"null");
        return;
    }
    match array.data_type() {
        DataType::Null => out.extend_from_slice(b"null"),
        DataType::Boolean => {
            let v = array.as_boolean().value(row);
            out.extend_from_slice(if v { b"true" } else { b"false" });
        }
        DataType::Int8 => write_int(array.as_primitive::<Int8Type>().value(row), out),
        DataType::Int16 => write_int(array.as_primitive::<Int16Type>().value(row), out),
        DataType::Int32 => write_int(array.as_primitive::<Int32Type>().value(row), out),
        DataType::Int64 => write_int(array.as_primitive::<Int64Type>().value(row), out),
        DataType::UInt8 => write_int(array.as_primitive::<UInt8Type>().value(row), out),
        DataType::UInt16 => write_int(array.as_primitive::<UInt16Type>().value(row), out),
        DataType::UInt32 => write_int(array.as_primitive::<UInt32Type>().value(row), out),
        DataType::UInt64 => write_int(array.as_primitive::<UInt64Type>().value(row), out),
        DataType::Float16 => {
            write_f32(array.as_primitive::<Float16Type>().value(row).to_f32(), out)
        }
        DataType::Float32 => write_f32(array.as_primitive::<Float32Type>().value(row), out),
        DataType::Float64 => write_f64(array.as_primitive::<Float64Type>().value(row), out),
        DataType::Utf8 => write_str(array.as_string::<i32>().value(row), out),
        DataType::LargeUtf8 => write_str(array.as_string::<i64>().value(row), out),
        DataType::Utf8View => write_str(array.as_string_view().value(row), out),
        DataType::Binary => write_hex(array.as_binary::<i32>().value(row), out),
        DataType::LargeBinary => write_hex(array.as_binary::<i64>().value(row), out),
        DataType::BinaryView => write_hex(array.as_binary_view().value(row), out),
        DataType::FixedSizeBinary(_) => write_hex(array.as_fixed_size_binary().value(row), out),
        DataType::Date32 => {
            let days = array.as_primitive::<Date32Type>().value(row);
            let _ = write!(out, "\"{}\"", civil_date(i64::from(days)));
        }
        DataType::Date64 => {
            let ms = array.as_primitive::<Date64Type>().value(row);
            let _ = write!(out, "\"{}\"", civil_date(ms.div_euclid(86_400_000)));
        }
        DataType::Timestamp(unit, _) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(row),
                TimeUnit::Millisecond => {
                    array.as_primitive::<TimestampMillisecondType>().value(row)
                }
                TimeUnit::Microsecond => {
                    array.as_primitive::<TimestampMicrosecondType>().value(row)
                }
                TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(row),
            };
            write_int(v, out);
        }
        DataType::List(_) => write_list(array.as_list::<i32>().value(row).as_ref(), out),
        DataType::LargeList(_) => write_list(array.as_list::<i64>().value(row).as_ref(), out),
        DataType::FixedSizeList(_, _) => {
            write_list(array.as_fixed_size_list().value(row).as_ref(), out)
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            out.push(b'{');
            for (i, (field, column)) in fields.iter().zip(s.columns()).enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(field.name(), out);
                out.push(b':');
                write_value(column.as_ref(), row, out);
            }
            out.push(b'}');
        }
        DataType::Dictionary(_, _) => {
            let dict = array.as_any_dictionary();
            let key = dict.normalized_keys()[row];
            write_value(dict.values().as_ref(), key, out);
        }
        _ => {
            // Types outside the contract: their display form, as a string.
            let text = arrow_cast::display::ArrayFormatter::try_new(array, &Default::default())
                .map(|f| f.value(row).to_string())
                .unwrap_or_default();
            write_str(&text, out);
        }
    }
}

fn write_list(values: &dyn Array, out: &mut Vec<u8>) {
    out.push(b'[');
    for i in 0..values.len() {
        if i > 0 {
            out.push(b',');
        }
        write_value(values, i, out);
    }
    out.push(b']');
}

fn write_hex(bytes: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 15)]);
    }
    out.push(b'"');
}

/// `YYYY-MM-DD` of a day count since 1970-01-01 (proleptic Gregorian), for any i64 day.
pub fn civil_date(days: i64) -> String {
    // Howard Hinnant's days-from-civil inverse, in i64 so that no day count overflows.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    if (0..=9999).contains(&y) {
        format!("{y:04}-{m:02}-{d:02}")
    } else {
        format!("{y}-{m:02}-{d:02}")
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{BinaryArray, Date32Array, Float64Array, Int64Array, StringArray};
    use arrow_schema::{Field, Schema};

    use super::*;

    #[test]
    fn contract_values() {
        let schema = Schema::new(vec![
            Field::new("i", DataType::Int64, true),
            Field::new("f", DataType::Float64, true),
            Field::new("s", DataType::Utf8, true),
            Field::new("d", DataType::Date32, true),
            Field::new("b", DataType::Binary, true),
        ]);
        let batch = RecordBatch::try_new(
            Arc::new(schema),
            vec![
                Arc::new(Int64Array::from(vec![Some(i64::MIN), None, Some(i64::MAX)])),
                Arc::new(Float64Array::from(vec![
                    Some(0.1 + 0.2),
                    Some(5e-324),
                    Some(f64::NAN),
                ])),
                Arc::new(StringArray::from(vec![Some("a\"\n"), None, Some("")])),
                Arc::new(Date32Array::from(vec![Some(0), Some(19_000), None])),
                Arc::new(BinaryArray::from(vec![
                    Some(&b"\x00\xff"[..]),
                    None,
                    Some(&b""[..]),
                ])),
            ],
        )
        .unwrap();
        let mut out = Vec::new();
        write_ndjson(&batch, &mut out);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            r#"{"i":-9223372036854775808,"f":0.30000000000000004,"s":"a\"\n","d":"1970-01-01","b":"00ff"}"#
        );
        assert_eq!(
            lines[1],
            r#"{"i":null,"f":5e-324,"s":null,"d":"2022-01-08","b":null}"#
        );
        assert_eq!(
            lines[2],
            r#"{"i":9223372036854775807,"f":"NaN","s":"","d":null,"b":""}"#
        );
    }

    #[test]
    fn civil_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(-1), "1969-12-31");
        assert_eq!(civil_date(19_723), "2024-01-01");
        assert_eq!(civil_date(-719_528), "0000-01-01");
    }
}
