//! Avro schema to Arrow schema, block decompression, and Avro values into Arrow columns.

use std::io::Read as _;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use apache_avro::types::Value;
use apache_avro::{Codec, Schema as AvroSchema};
use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Date32Builder, Decimal128Builder, Decimal256Builder,
    Float32Builder, Float64Builder, Int32Builder, Int64Builder, IntervalMonthDayNanoBuilder,
    StringBuilder, Time32MillisecondBuilder, Time64MicrosecondBuilder, TimestampMicrosecondBuilder,
    TimestampMillisecondBuilder, TimestampNanosecondBuilder,
};
use arrow_array::types::IntervalMonthDayNano;
use arrow_array::{ArrayRef, RecordBatch};
use arrow_buffer::i256;
use arrow_schema::{DataType, Field, IntervalUnit, Schema, SchemaRef, TimeUnit};

use crate::error::{Error, Result};

use super::FORMAT;

/// The block codec of a file.
#[derive(Debug, Clone, Copy)]
pub(super) enum BlockCodec {
    /// A codec apache-avro decodes (null, deflate, snappy with its CRC, zstandard, and bzip2
    /// through the bzip2 crate on libbz2-rs-sys, a pure-Rust port of libbzip2).
    Avro(Codec),
    /// xz, decoded with lzma-rust2.
    Xz,
}

impl BlockCodec {
    /// The codec named in the header's `avro.codec` (absent = null).
    pub(super) fn from_name(path: &Path, name: Option<&[u8]>) -> Result<Self> {
        let name = match name {
            None => "null",
            Some(n) => std::str::from_utf8(n)
                .map_err(|_| Error::malformed(path, FORMAT, "avro.codec is not UTF-8"))?,
        };
        if name == "xz" {
            return Ok(BlockCodec::Xz);
        }
        match Codec::from_str(name) {
            Ok(
                c @ (Codec::Null
                | Codec::Deflate(_)
                | Codec::Snappy
                | Codec::Zstandard(_)
                | Codec::Bzip2(_)),
            ) => Ok(BlockCodec::Avro(c)),
            _ => Err(Error::Unsupported {
                path: path.to_path_buf(),
                message: format!(
                    "Avro codec {name:?} is not supported (null, deflate, snappy, zstandard, bzip2, xz are)"
                ),
            }),
        }
    }

    /// Decompresses one block's data in place.
    pub(super) fn decompress(self, data: &mut Vec<u8>) -> std::result::Result<(), String> {
        match self {
            BlockCodec::Avro(c) => c.decompress(data).map_err(|e| e.to_string()),
            BlockCodec::Xz => {
                let mut out = Vec::new();
                // Bound the output like apache-avro does for its codecs (decompression bombs).
                let limit = 512u64 * 1024 * 1024;
                lzma_rust2::XzReader::new(&data[..], true)
                    .take(limit + 1)
                    .read_to_end(&mut out)
                    .map_err(|e| e.to_string())?;
                if out.len() as u64 > limit {
                    return Err("xz block inflates past 512 MiB".into());
                }
                *data = out;
                Ok(())
            }
        }
    }
}

/// How one Avro field maps to Arrow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Bool,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    Str,
    Date,
    TsMillis,
    TsMicros,
    TsNanos,
    /// time-millis, as Time32(ms).
    TimeMillis,
    /// time-micros, as Time64(µs).
    TimeMicros,
    /// decimal (bytes or fixed) of at most 38 digits, as Decimal128.
    Decimal128,
    /// decimal of 39 to 76 digits, as Decimal256.
    Decimal256,
    /// duration (months, days, milliseconds), as Interval(MonthDayNano) like arrow-avro.
    Duration,
    /// Records, arrays, maps, unions of several types, named references and big decimals:
    /// the value as JSON text (Avro's JSON encoding), the lake's string fallback.
    Json,
}

/// The name of the one column of a file whose top-level schema is not a record.
pub(super) const VALUE_COLUMN: &str = "value";

/// The Arrow schema of a file's schema, with each field's kind: a record's fields are the
/// columns; any other top-level schema is one column named [`VALUE_COLUMN`].
pub(super) fn arrow_schema(path: &Path, schema: &AvroSchema) -> Result<(SchemaRef, Vec<Kind>)> {
    let AvroSchema::Record(record) = schema else {
        let (kind, data_type, nullable) = field_type(path, VALUE_COLUMN, schema)?;
        return Ok((
            Arc::new(Schema::new(vec![Field::new(
                VALUE_COLUMN,
                data_type,
                nullable,
            )])),
            vec![kind],
        ));
    };
    let mut fields = Vec::with_capacity(record.fields.len());
    let mut kinds = Vec::with_capacity(record.fields.len());
    for f in &record.fields {
        let (kind, data_type, nullable) = field_type(path, &f.name, &f.schema)?;
        fields.push(Field::new(&f.name, data_type, nullable));
        kinds.push(kind);
    }
    Ok((Arc::new(Schema::new(fields)), kinds))
}

/// The kind, Arrow type and nullability of a field of schema `schema`.
fn field_type(path: &Path, name: &str, schema: &AvroSchema) -> Result<(Kind, DataType, bool)> {
    let (inner, nullable) = match schema {
        AvroSchema::Union(u) => {
            let non_null: Vec<&AvroSchema> = u
                .variants()
                .iter()
                .filter(|v| !matches!(v, AvroSchema::Null))
                .collect();
            match non_null.as_slice() {
                [one] => (*one, u.variants().len() > 1),
                [] => return Ok((Kind::Json, DataType::Utf8, true)),
                _ => return Ok((Kind::Json, DataType::Utf8, true)),
            }
        }
        AvroSchema::Null => return Ok((Kind::Json, DataType::Utf8, true)),
        other => (other, false),
    };
    let (kind, data_type) = match inner {
        AvroSchema::Boolean => (Kind::Bool, DataType::Boolean),
        AvroSchema::Int => (Kind::Int, DataType::Int32),
        AvroSchema::Long => (Kind::Long, DataType::Int64),
        AvroSchema::Float => (Kind::Float, DataType::Float32),
        AvroSchema::Double => (Kind::Double, DataType::Float64),
        AvroSchema::Bytes | AvroSchema::Fixed(_) => (Kind::Bytes, DataType::Binary),
        AvroSchema::String | AvroSchema::Enum(_) | AvroSchema::Uuid(_) => {
            (Kind::Str, DataType::Utf8)
        }
        AvroSchema::Date => (Kind::Date, DataType::Date32),
        AvroSchema::TimeMillis => (Kind::TimeMillis, DataType::Time32(TimeUnit::Millisecond)),
        AvroSchema::TimeMicros => (Kind::TimeMicros, DataType::Time64(TimeUnit::Microsecond)),
        AvroSchema::TimestampMillis => (
            Kind::TsMillis,
            DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
        ),
        AvroSchema::TimestampMicros => (
            Kind::TsMicros,
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        ),
        AvroSchema::TimestampNanos => (
            Kind::TsNanos,
            DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        ),
        AvroSchema::LocalTimestampMillis => (
            Kind::TsMillis,
            DataType::Timestamp(TimeUnit::Millisecond, None),
        ),
        AvroSchema::LocalTimestampMicros => (
            Kind::TsMicros,
            DataType::Timestamp(TimeUnit::Microsecond, None),
        ),
        AvroSchema::LocalTimestampNanos => (
            Kind::TsNanos,
            DataType::Timestamp(TimeUnit::Nanosecond, None),
        ),
        AvroSchema::Decimal(d) => {
            let (Ok(p), Ok(s)) = (u8::try_from(d.precision), i8::try_from(d.scale)) else {
                return Err(unsupported(path, name, "a decimal of more than 76 digits"));
            };
            match p {
                1..=38 if s as u8 <= p => (Kind::Decimal128, DataType::Decimal128(p, s)),
                39..=76 if s as u8 <= p => (Kind::Decimal256, DataType::Decimal256(p, s)),
                _ => {
                    return Err(unsupported(
                        path,
                        name,
                        "a decimal whose precision and scale Arrow cannot hold",
                    ));
                }
            }
        }
        AvroSchema::Duration(_) => (
            Kind::Duration,
            DataType::Interval(IntervalUnit::MonthDayNano),
        ),
        _ => (Kind::Json, DataType::Utf8),
    };
    Ok((kind, data_type, nullable))
}

fn unsupported(path: &Path, field: &str, what: &str) -> Error {
    Error::Unsupported {
        path: path.to_path_buf(),
        message: format!("Avro field {field:?} is {what}"),
    }
}

/// One column under construction.
pub(super) enum Column {
    Bool(BooleanBuilder),
    Int(Int32Builder),
    Long(Int64Builder),
    Float(Float32Builder),
    Double(Float64Builder),
    Bytes(BinaryBuilder),
    Str(StringBuilder),
    Date(Date32Builder),
    TsMillis(TimestampMillisecondBuilder, Option<Arc<str>>),
    TsMicros(TimestampMicrosecondBuilder, Option<Arc<str>>),
    TsNanos(TimestampNanosecondBuilder, Option<Arc<str>>),
    TimeMillis(Time32MillisecondBuilder),
    TimeMicros(Time64MicrosecondBuilder),
    Decimal128(Decimal128Builder, DataType),
    Decimal256(Decimal256Builder, DataType),
    Duration(IntervalMonthDayNanoBuilder),
    Json(StringBuilder),
}

impl Column {
    /// An empty column of `kind` for the field's Arrow type.
    pub(super) fn new(kind: Kind, data_type: &DataType) -> Self {
        let tz = match data_type {
            DataType::Timestamp(_, tz) => tz.clone(),
            _ => None,
        };
        match kind {
            Kind::Bool => Column::Bool(BooleanBuilder::new()),
            Kind::Int => Column::Int(Int32Builder::new()),
            Kind::Long => Column::Long(Int64Builder::new()),
            Kind::Float => Column::Float(Float32Builder::new()),
            Kind::Double => Column::Double(Float64Builder::new()),
            Kind::Bytes => Column::Bytes(BinaryBuilder::new()),
            Kind::Str => Column::Str(StringBuilder::new()),
            Kind::Date => Column::Date(Date32Builder::new()),
            Kind::TsMillis => Column::TsMillis(TimestampMillisecondBuilder::new(), tz),
            Kind::TsMicros => Column::TsMicros(TimestampMicrosecondBuilder::new(), tz),
            Kind::TsNanos => Column::TsNanos(TimestampNanosecondBuilder::new(), tz),
            Kind::TimeMillis => Column::TimeMillis(Time32MillisecondBuilder::new()),
            Kind::TimeMicros => Column::TimeMicros(Time64MicrosecondBuilder::new()),
            Kind::Decimal128 => Column::Decimal128(Decimal128Builder::new(), data_type.clone()),
            Kind::Decimal256 => Column::Decimal256(Decimal256Builder::new(), data_type.clone()),
            Kind::Duration => Column::Duration(IntervalMonthDayNanoBuilder::new()),
            Kind::Json => Column::Json(StringBuilder::new()),
        }
    }

    /// Appends one value; `false` when the value does not fit the column's type.
    pub(super) fn push(&mut self, value: &Value) -> bool {
        if let Column::Json(b) = self {
            match value {
                Value::Null => b.append_null(),
                Value::Union(_, inner) if matches!(**inner, Value::Null) => b.append_null(),
                v => b.append_value(json_text(v)),
            }
            return true;
        }
        let value = match value {
            Value::Union(_, inner) => inner.as_ref(),
            v => v,
        };
        if matches!(value, Value::Null) {
            match self {
                Column::Bool(b) => b.append_null(),
                Column::Int(b) => b.append_null(),
                Column::Long(b) => b.append_null(),
                Column::Float(b) => b.append_null(),
                Column::Double(b) => b.append_null(),
                Column::Bytes(b) => b.append_null(),
                Column::Str(b) => b.append_null(),
                Column::Date(b) => b.append_null(),
                Column::TsMillis(b, _) => b.append_null(),
                Column::TsMicros(b, _) => b.append_null(),
                Column::TsNanos(b, _) => b.append_null(),
                Column::TimeMillis(b) => b.append_null(),
                Column::TimeMicros(b) => b.append_null(),
                Column::Decimal128(b, _) => b.append_null(),
                Column::Decimal256(b, _) => b.append_null(),
                Column::Duration(b) => b.append_null(),
                Column::Json(b) => b.append_null(),
            }
            return true;
        }
        match (self, value) {
            (Column::Bool(b), Value::Boolean(v)) => b.append_value(*v),
            (Column::Int(b), Value::Int(v)) => b.append_value(*v),
            (Column::Long(b), Value::Long(v)) => b.append_value(*v),
            (Column::Float(b), Value::Float(v)) => b.append_value(*v),
            (Column::Double(b), Value::Double(v)) => b.append_value(*v),
            (Column::Bytes(b), Value::Bytes(v) | Value::Fixed(_, v)) => b.append_value(v),
            (Column::Str(b), Value::String(v) | Value::Enum(_, v)) => b.append_value(v),
            (Column::Str(b), Value::Uuid(v)) => b.append_value(v.to_string()),
            (Column::Date(b), Value::Date(v)) => b.append_value(*v),
            (
                Column::TsMillis(b, _),
                Value::TimestampMillis(v) | Value::LocalTimestampMillis(v),
            ) => b.append_value(*v),
            (
                Column::TsMicros(b, _),
                Value::TimestampMicros(v) | Value::LocalTimestampMicros(v),
            ) => b.append_value(*v),
            (Column::TsNanos(b, _), Value::TimestampNanos(v) | Value::LocalTimestampNanos(v)) => {
                b.append_value(*v)
            }
            (Column::TimeMillis(b), Value::TimeMillis(v)) => b.append_value(*v),
            (Column::TimeMicros(b), Value::TimeMicros(v)) => b.append_value(*v),
            (Column::Decimal128(b, _), Value::Decimal(d)) => {
                match Vec::<u8>::try_from(d)
                    .ok()
                    .and_then(|v| signed_be::<16>(&v))
                {
                    Some(bytes) => b.append_value(i128::from_be_bytes(bytes)),
                    None => return false,
                }
            }
            (Column::Decimal256(b, _), Value::Decimal(d)) => {
                match Vec::<u8>::try_from(d)
                    .ok()
                    .and_then(|v| signed_be::<32>(&v))
                {
                    Some(bytes) => b.append_value(i256::from_be_bytes(bytes)),
                    None => return false,
                }
            }
            (Column::Duration(b), Value::Duration(d)) => {
                let (months, days, millis) = (
                    u32::from(d.months()),
                    u32::from(d.days()),
                    u32::from(d.millis()),
                );
                // Avro's fields are unsigned; Arrow's are signed (fastavro reads them as is).
                b.append_value(IntervalMonthDayNano::new(
                    months as i32,
                    days as i32,
                    i64::from(millis) * 1_000_000,
                ))
            }
            _ => return false,
        }
        true
    }

    /// The finished array (the builder is reset for the next batch).
    pub(super) fn finish(&mut self) -> ArrayRef {
        match self {
            Column::Bool(b) => Arc::new(b.finish()),
            Column::Int(b) => Arc::new(b.finish()),
            Column::Long(b) => Arc::new(b.finish()),
            Column::Float(b) => Arc::new(b.finish()),
            Column::Double(b) => Arc::new(b.finish()),
            Column::Bytes(b) => Arc::new(b.finish()),
            Column::Str(b) => Arc::new(b.finish()),
            Column::Date(b) => Arc::new(b.finish()),
            Column::TsMillis(b, tz) => Arc::new(b.finish().with_timezone_opt(tz.clone())),
            Column::TsMicros(b, tz) => Arc::new(b.finish().with_timezone_opt(tz.clone())),
            Column::TsNanos(b, tz) => Arc::new(b.finish().with_timezone_opt(tz.clone())),
            Column::TimeMillis(b) => Arc::new(b.finish()),
            Column::TimeMicros(b) => Arc::new(b.finish()),
            Column::Decimal128(b, t) => match t {
                DataType::Decimal128(p, s) => Arc::new(
                    b.finish()
                        .with_precision_and_scale(*p, *s)
                        .unwrap_or_else(|_| b.finish()),
                ),
                _ => Arc::new(b.finish()),
            },
            Column::Decimal256(b, t) => match t {
                DataType::Decimal256(p, s) => Arc::new(
                    b.finish()
                        .with_precision_and_scale(*p, *s)
                        .unwrap_or_else(|_| b.finish()),
                ),
                _ => Arc::new(b.finish()),
            },
            Column::Duration(b) => Arc::new(b.finish()),
            Column::Json(b) => Arc::new(b.finish()),
        }
    }
}

/// Columns for the decoded fields `decode` of `schema`.
pub(super) struct Columns {
    /// File field index → position in `columns`, or `None` when the field is not returned.
    slot: Vec<Option<usize>>,
    columns: Vec<Column>,
    schema: SchemaRef,
    rows: usize,
}

impl Columns {
    /// Builders for the fields `decode` (ascending file indices) of `schema`.
    pub(super) fn new(schema: &SchemaRef, kinds: &[Kind], decode: &[usize]) -> Result<Self> {
        let mut slot = vec![None; kinds.len()];
        let mut columns = Vec::with_capacity(decode.len());
        for (pos, &i) in decode.iter().enumerate() {
            slot[i] = Some(pos);
            columns.push(Column::new(kinds[i], schema.field(i).data_type()));
        }
        let schema = Arc::new(
            schema
                .project(decode)
                .map_err(|e| Error::Schema(e.to_string()))?,
        );
        Ok(Columns {
            slot,
            columns,
            schema,
            rows: 0,
        })
    }

    /// Rows buffered so far.
    pub(super) fn rows(&self) -> usize {
        self.rows
    }

    /// Appends one decoded record; `Err(field)` names a field whose value has the wrong type.
    pub(super) fn push(&mut self, record: &Value) -> std::result::Result<(), String> {
        let Value::Record(fields) = record else {
            // A file whose top-level schema is not a record has one column: the whole datum.
            if self.slot.len() == 1 {
                if let Some(pos) = self.slot[0]
                    && !self.columns[pos].push(record)
                {
                    return Err("the datum has a value of another type".into());
                }
                self.rows += 1;
                return Ok(());
            }
            return Err("the datum is not a record".into());
        };
        if fields.len() != self.slot.len() {
            return Err(format!(
                "the record has {} fields, the schema {}",
                fields.len(),
                self.slot.len()
            ));
        }
        for ((name, value), slot) in fields.iter().zip(&self.slot) {
            if let Some(pos) = slot
                && !self.columns[*pos].push(value)
            {
                return Err(format!("field {name:?} holds a value of another type"));
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// The buffered rows as a batch.
    pub(super) fn finish(&mut self) -> std::result::Result<RecordBatch, arrow_schema::ArrowError> {
        let arrays: Vec<ArrayRef> = self.columns.iter_mut().map(Column::finish).collect();
        let rows = std::mem::take(&mut self.rows);
        RecordBatch::try_new_with_options(
            self.schema.clone(),
            arrays,
            &arrow_array::RecordBatchOptions::new().with_row_count(Some(rows)),
        )
    }
}

/// Big-endian two's-complement `bytes` sign-extended to `N` bytes, or `None` when the value
/// needs more than `N` bytes.
fn signed_be<const N: usize>(bytes: &[u8]) -> Option<[u8; N]> {
    let negative = bytes.first().is_some_and(|b| b & 0x80 != 0);
    let fill = if negative { 0xff } else { 0 };
    let mut out = [fill; N];
    let extra = bytes.len().saturating_sub(N);
    // Leading bytes past N must be pure sign extension (and keep the sign).
    if bytes[..extra].iter().any(|&b| b != fill) {
        return None;
    }
    let tail = &bytes[extra..];
    if extra > 0 && tail.first().is_some_and(|b| (b & 0x80 != 0) != negative) {
        return None;
    }
    out[N - tail.len()..].copy_from_slice(tail);
    Some(out)
}

/// An Avro value as JSON text, in Avro's JSON encoding: records and maps as objects, arrays
/// as arrays, a union as its branch's value, bytes and fixed as strings of their bytes as
/// code points 0-255, logical types as their numbers, decimals as their unscaled bytes'
/// string and UUIDs as their text.
pub(super) fn json_text(value: &Value) -> String {
    json_value(value).to_string()
}

fn latin1(bytes: &[u8]) -> serde_json::Value {
    serde_json::Value::String(bytes.iter().map(|&b| char::from(b)).collect())
}

fn json_value(value: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        Value::Null => J::Null,
        Value::Boolean(b) => J::Bool(*b),
        Value::Int(v) | Value::Date(v) | Value::TimeMillis(v) => J::from(*v),
        Value::Long(v)
        | Value::TimeMicros(v)
        | Value::TimestampMillis(v)
        | Value::TimestampMicros(v)
        | Value::TimestampNanos(v)
        | Value::LocalTimestampMillis(v)
        | Value::LocalTimestampMicros(v)
        | Value::LocalTimestampNanos(v) => J::from(*v),
        Value::Float(v) => serde_json::Number::from_f64(f64::from(*v)).map_or(J::Null, J::Number),
        Value::Double(v) => serde_json::Number::from_f64(*v).map_or(J::Null, J::Number),
        Value::Bytes(b) | Value::Fixed(_, b) => latin1(b),
        Value::String(s) | Value::Enum(_, s) => J::String(s.clone()),
        Value::Union(_, inner) => json_value(inner),
        Value::Array(items) => J::Array(items.iter().map(json_value).collect()),
        Value::Map(m) => J::Object(m.iter().map(|(k, v)| (k.clone(), json_value(v))).collect()),
        Value::Record(fields) => J::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), json_value(v)))
                .collect(),
        ),
        Value::Decimal(d) => Vec::<u8>::try_from(d).map_or(J::Null, |b| latin1(&b)),
        Value::BigDecimal(d) => J::String(d.to_string()),
        Value::Duration(d) => {
            let b = <[u8; 12]>::from(*d);
            latin1(&b)
        }
        Value::Uuid(u) => J::String(u.to_string()),
    }
}
