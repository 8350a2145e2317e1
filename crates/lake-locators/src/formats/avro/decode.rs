//! Avro schema to Arrow schema, block decompression, and Avro values into Arrow columns.

use std::io::Read as _;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use apache_avro::types::Value;
use apache_avro::{Codec, Schema as AvroSchema};
use arrow_array::builder::{
    BinaryBuilder, BooleanBuilder, Date32Builder, Float32Builder, Float64Builder, Int32Builder,
    Int64Builder, StringBuilder, TimestampMicrosecondBuilder, TimestampMillisecondBuilder,
    TimestampNanosecondBuilder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

use crate::error::{Error, Result};

use super::FORMAT;

/// The block codec of a file.
#[derive(Debug, Clone, Copy)]
pub(super) enum BlockCodec {
    /// A codec apache-avro decodes (null, deflate, snappy with its CRC, zstandard).
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
            Ok(c @ (Codec::Null | Codec::Deflate(_) | Codec::Snappy | Codec::Zstandard(_))) => {
                Ok(BlockCodec::Avro(c))
            }
            _ => Err(Error::Unsupported {
                path: path.to_path_buf(),
                message: format!(
                    "Avro codec {name:?} is not supported (null, deflate, snappy, zstandard, xz are)"
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
}

/// The Arrow schema of a record schema, with each field's kind.
pub(super) fn arrow_schema(path: &Path, schema: &AvroSchema) -> Result<(SchemaRef, Vec<Kind>)> {
    let AvroSchema::Record(record) = schema else {
        return Err(Error::Unsupported {
            path: path.to_path_buf(),
            message: "the Avro schema is not a record, so it has no columns".into(),
        });
    };
    let mut fields = Vec::with_capacity(record.fields.len());
    let mut kinds = Vec::with_capacity(record.fields.len());
    for f in &record.fields {
        let (inner, nullable) = match &f.schema {
            AvroSchema::Union(u) => {
                let non_null: Vec<&AvroSchema> = u
                    .variants()
                    .iter()
                    .filter(|v| !matches!(v, AvroSchema::Null))
                    .collect();
                match non_null.as_slice() {
                    [one] => (*one, u.variants().len() > 1),
                    _ => return Err(unsupported(path, &f.name, "a union of several types")),
                }
            }
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
            _ => return Err(unsupported(path, &f.name, "a nested or logical type")),
        };
        fields.push(Field::new(&f.name, data_type, nullable));
        kinds.push(kind);
    }
    Ok((Arc::new(Schema::new(fields)), kinds))
}

fn unsupported(path: &Path, field: &str, what: &str) -> Error {
    Error::Unsupported {
        path: path.to_path_buf(),
        message: format!("Avro field {field:?} is {what}, which has no flat Arrow column here"),
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
        }
    }

    /// Appends one value; `false` when the value does not fit the column's type.
    pub(super) fn push(&mut self, value: &Value) -> bool {
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
