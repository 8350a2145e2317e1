//! The `dump` of a TsFile: everything it holds as JSON, in exactly the shape of the
//! conformance answers (`tsfile dump` in `docs/cli.md`): format version, size,
//! model, properties, table schemas, devices with their series metadata and statistics, and
//! every row with per-column SHA-256 digests.

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Float32Type, Float64Type, Int32Type, Int64Type, TimestampMicrosecondType,
    TimestampMillisecondType, TimestampNanosecondType, TimestampSecondType,
};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tsfile_format::statistics::{Statistics, StatisticsValues};
use tsfile_format::types::TSDataType;

use crate::arrow_types::{TimeRepr, days_to_date};
use crate::error::{Error, Result};
use crate::index::DeviceEntry;
use crate::query::{TableQuery, TreeQuery};
use crate::reader::{ReadOptions, TsFileReader};
use crate::series_index::SeriesEntry;

/// Opens `path` and dumps it.
pub fn dump_path(path: &Path) -> Result<Value> {
    let reader = TsFileReader::open(path)?;
    dump(&reader)
}

/// Everything `reader`'s file holds, in the conformance answers' shape.
pub fn dump(reader: &TsFileReader) -> Result<Value> {
    // Raw integers for time and TIMESTAMP, as the answers print them.
    let raw = reader_with_raw_time(reader);
    let reader = &raw;
    let mut out = Map::new();
    out.insert("format_version".into(), json!(reader.version()));
    out.insert("file_size".into(), json!(reader.file_len()));
    let model = if reader.is_table_model() {
        "table"
    } else {
        "tree"
    };
    out.insert("model".into(), json!(model));
    let mut props = Map::new();
    for p in reader.properties() {
        props.insert(
            p.key.clone(),
            p.value
                .as_deref()
                .map_or(Value::Null, |v| Value::String(hex(v))),
        );
    }
    out.insert("properties".into(), Value::Object(props));
    out.insert("tables".into(), tables_json(reader));
    let mut devices_json = Vec::new();
    let mut devices = Vec::new();
    for device in reader.devices()? {
        let device = device?;
        devices_json.push(device_json(reader, &device)?);
        devices.push(device);
    }
    out.insert("devices".into(), Value::Array(devices_json));
    let mut data = Map::new();
    data.insert("rows_included".into(), json!(true));
    if reader.is_table_model() {
        let mut tables = Vec::new();
        for name in sorted_table_names(reader) {
            let batch = reader.read_table(&name, &TableQuery::default())?;
            let mut t = Map::new();
            t.insert("table".into(), json!(name));
            let schema = reader.table_schema(&name);
            let mut types = vec![json!("INT64")];
            if let Some(schema) = schema {
                types.extend(
                    schema
                        .columns
                        .iter()
                        .map(|c| json!(c.schema.data_type.name())),
                );
            }
            batch_json(&batch, types, &mut t)?;
            tables.push(Value::Object(t));
        }
        data.insert("tables".into(), Value::Array(tables));
    } else {
        let mut list = Vec::new();
        for device in &devices {
            let batch = reader.read_device(device, &TreeQuery::default())?;
            if batch.num_rows() == 0 {
                continue;
            }
            let series = reader.timeseries(device)?;
            let mut types = vec![json!("INT64")];
            types.extend(
                series
                    .iter()
                    .filter(|s| !s.meta.is_time_column())
                    .map(|s| json!(s.meta.data_type.name())),
            );
            let mut d = Map::new();
            d.insert("device".into(), json!(device.path()));
            d.insert("segments".into(), json!(device.segments()));
            batch_json(&batch, types, &mut d)?;
            list.push(Value::Object(d));
        }
        data.insert("devices".into(), Value::Array(list));
    }
    out.insert("data".into(), Value::Object(data));
    Ok(Value::Object(out))
}

fn reader_with_raw_time(reader: &TsFileReader) -> TsFileReader {
    reader.clone_with_options(ReadOptions {
        time: TimeRepr::Int64,
    })
}

fn sorted_table_names(reader: &TsFileReader) -> Vec<String> {
    let mut names: Vec<String> = reader
        .table_schemas()
        .iter()
        .map(|s| s.table_name.clone())
        .collect();
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    names
}

fn tables_json(reader: &TsFileReader) -> Value {
    let mut tables = Vec::new();
    for name in sorted_table_names(reader) {
        let Some(schema) = reader.table_schema(&name) else {
            continue;
        };
        let columns: Vec<Value> = schema
            .columns
            .iter()
            .map(|c| {
                json!({
                    "name": c.schema.name,
                    "data_type": c.schema.data_type.name(),
                    "category": c.category.name(),
                })
            })
            .collect();
        tables.push(json!({"name": name, "columns": columns}));
    }
    Value::Array(tables)
}

fn device_json(reader: &TsFileReader, device: &DeviceEntry) -> Result<Value> {
    let series = reader.timeseries(device)?;
    let time = series.iter().find(|s| s.meta.is_time_column());
    let mut values: Vec<&SeriesEntry> =
        series.iter().filter(|s| !s.meta.is_time_column()).collect();
    values.sort_by(|a, b| a.name().as_bytes().cmp(b.name().as_bytes()));
    let mut d = Map::new();
    d.insert("path".into(), json!(device.path()));
    d.insert("table_name".into(), json!(device.table_name()));
    d.insert("segments".into(), json!(device.segments()));
    d.insert("aligned".into(), json!(time.is_some()));
    if let Some(t) = time
        && !values.is_empty()
    {
        d.insert(
            "time_column".into(),
            json!({
                "statistics": statistics_json(&t.meta.statistics, TSDataType::Vector),
                "chunk_count": t.meta.chunk_metadata.len(),
                "index_entry": {"offset": t.offset, "length": t.length},
            }),
        );
    }
    let mut list = Vec::new();
    for s in values {
        let (encoding, compression) = match s.meta.chunk_metadata.first() {
            Some(cm) => {
                let chunk = reader.read_chunk_header(cm.offset_of_chunk_header)?;
                (
                    json!(chunk.encoding.name()),
                    json!(chunk.compression.name()),
                )
            }
            None => (Value::Null, Value::Null),
        };
        list.push(json!({
            "measurement": s.name(),
            "data_type": s.meta.data_type.name(),
            "encoding": encoding,
            "compression": compression,
            "chunk_count": s.meta.chunk_metadata.len(),
            "statistics": statistics_json(&s.meta.statistics, s.meta.data_type),
            "index_entry": {"offset": s.offset, "length": s.length},
        }));
    }
    d.insert("timeseries".into(), Value::Array(list));
    Ok(Value::Object(d))
}

/// Statistics as the answers print them (README, `devices[i].timeseries[j].statistics`).
pub fn statistics_json(s: &Statistics, ty: TSDataType) -> Value {
    let mut m = Map::new();
    m.insert("count".into(), json!(s.count));
    m.insert("start_time".into(), json!(s.start_time));
    m.insert("end_time".into(), json!(s.end_time));
    if s.count == 0 {
        return Value::Object(m);
    }
    let mut put = |k: &str, v: Value| {
        m.insert(k.into(), v);
    };
    match &s.values {
        StatisticsValues::Boolean { first, last, sum } => {
            put("sum", json!(sum));
            put("first", json!(first));
            put("last", json!(last));
        }
        StatisticsValues::Int32 {
            min,
            max,
            first,
            last,
            sum,
        } => {
            let v = |x: i32| {
                if ty == TSDataType::Date {
                    date_json(x)
                } else {
                    json!(x)
                }
            };
            put("min", v(*min));
            put("max", v(*max));
            put("first", v(*first));
            put("last", v(*last));
            put("sum", json!(sum));
        }
        StatisticsValues::Int64 {
            min,
            max,
            first,
            last,
            sum,
        } => {
            put("min", json!(min));
            put("max", json!(max));
            put("first", json!(first));
            put("last", json!(last));
            put("sum", float(*sum));
        }
        StatisticsValues::Float {
            min,
            max,
            first,
            last,
            sum,
        } => {
            put("min", float(f64::from(*min)));
            put("max", float(f64::from(*max)));
            put("first", float(f64::from(*first)));
            put("last", float(f64::from(*last)));
            put("sum", float(*sum));
        }
        StatisticsValues::Double {
            min,
            max,
            first,
            last,
            sum,
        } => {
            put("min", float(*min));
            put("max", float(*max));
            put("first", float(*first));
            put("last", float(*last));
            put("sum", float(*sum));
        }
        StatisticsValues::Text { first, last } => {
            put("first", text(first.as_deref()));
            put("last", text(last.as_deref()));
        }
        StatisticsValues::String {
            first,
            last,
            min,
            max,
        } => {
            put("min", text(min.as_deref()));
            put("max", text(max.as_deref()));
            put("first", text(first.as_deref()));
            put("last", text(last.as_deref()));
        }
        StatisticsValues::None => {}
    }
    Value::Object(m)
}

fn text(v: Option<&[u8]>) -> Value {
    v.map_or(Value::Null, |b| {
        Value::String(String::from_utf8_lossy(b).into_owned())
    })
}

fn date_json(yyyymmdd: i32) -> Value {
    let (y, m, d) = (yyyymmdd / 10000, (yyyymmdd / 100) % 100, yyyymmdd % 100);
    Value::String(format!("{y:04}-{m:02}-{d:02}"))
}

/// A JSON number that round-trips `v` (NaN and infinities as strings, which JSON lacks).
fn float(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or_else(
        || {
            Value::String(if v.is_nan() {
                "NaN".into()
            } else if v > 0.0 {
                "inf".into()
            } else {
                "-inf".into()
            })
        },
        Value::Number,
    )
}

fn batch_json(batch: &RecordBatch, types: Vec<Value>, out: &mut Map<String, Value>) -> Result<()> {
    let columns: Vec<Value> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| json!(f.name()))
        .collect();
    out.insert("columns".into(), Value::Array(columns));
    out.insert("types".into(), Value::Array(types));
    out.insert("row_count".into(), json!(batch.num_rows()));
    let mut digests = Map::new();
    for (field, array) in batch.schema().fields().iter().zip(batch.columns()) {
        digests.insert(
            field.name().clone(),
            Value::String(column_digest(array.as_ref())?),
        );
    }
    out.insert("column_digests".into(), Value::Object(digests));
    out.insert("rows".into(), batch_rows(batch)?);
    Ok(())
}

/// The rows of a batch as JSON arrays, values as the answers print them.
pub fn batch_rows(batch: &RecordBatch) -> Result<Value> {
    let mut rows = Vec::with_capacity(batch.num_rows());
    for r in 0..batch.num_rows() {
        let mut row = Vec::with_capacity(batch.num_columns());
        for array in batch.columns() {
            row.push(cell(array.as_ref(), r)?);
        }
        rows.push(Value::Array(row));
    }
    Ok(Value::Array(rows))
}

fn timestamp_value(array: &dyn Array, unit: TimeUnit, r: usize) -> i64 {
    match unit {
        TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(r),
        TimeUnit::Millisecond => array.as_primitive::<TimestampMillisecondType>().value(r),
        TimeUnit::Microsecond => array.as_primitive::<TimestampMicrosecondType>().value(r),
        TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(r),
    }
}

fn cell(array: &dyn Array, r: usize) -> Result<Value> {
    if array.is_null(r) {
        return Ok(Value::Null);
    }
    Ok(match array.data_type() {
        DataType::Boolean => json!(array.as_boolean().value(r)),
        DataType::Int32 => json!(array.as_primitive::<Int32Type>().value(r)),
        DataType::Int64 => json!(array.as_primitive::<Int64Type>().value(r)),
        DataType::Timestamp(unit, _) => json!(timestamp_value(array, *unit, r)),
        DataType::Float32 => float(f64::from(array.as_primitive::<Float32Type>().value(r))),
        DataType::Float64 => float(array.as_primitive::<Float64Type>().value(r)),
        DataType::Utf8 => json!(array.as_string::<i32>().value(r)),
        DataType::Binary => Value::String(hex(array.as_binary::<i32>().value(r))),
        DataType::Date32 => {
            let days = array.as_primitive::<Date32Type>().value(r);
            date_json(
                days_to_date(days)
                    .ok_or_else(|| Error::Request(format!("date {days} out of range")))?,
            )
        }
        DataType::Null => Value::Null,
        other => {
            return Err(Error::Request(format!(
                "no JSON form for Arrow type {other}"
            )));
        }
    })
}

/// SHA-256 over a column's values as the answers define it: null → `00`; else `01` and the
/// value (BOOLEAN 1 byte; INT32/DATE 4 bytes LE, DATE as `yyyymmdd`; INT64/TIMESTAMP/time 8
/// bytes LE; FLOAT/DOUBLE IEEE bits LE; TEXT/STRING/BLOB u32 LE length + bytes).
pub fn column_digest(array: &dyn Array) -> Result<String> {
    let mut h = Sha256::new();
    for r in 0..array.len() {
        if array.is_null(r) {
            h.update([0u8]);
            continue;
        }
        h.update([1u8]);
        match array.data_type() {
            DataType::Boolean => h.update([u8::from(array.as_boolean().value(r))]),
            DataType::Int32 => h.update(array.as_primitive::<Int32Type>().value(r).to_le_bytes()),
            DataType::Int64 => h.update(array.as_primitive::<Int64Type>().value(r).to_le_bytes()),
            DataType::Timestamp(unit, _) => {
                h.update(timestamp_value(array, *unit, r).to_le_bytes())
            }
            DataType::Float32 => h.update(
                array
                    .as_primitive::<Float32Type>()
                    .value(r)
                    .to_bits()
                    .to_le_bytes(),
            ),
            DataType::Float64 => h.update(
                array
                    .as_primitive::<Float64Type>()
                    .value(r)
                    .to_bits()
                    .to_le_bytes(),
            ),
            DataType::Utf8 => {
                let v = array.as_string::<i32>().value(r).as_bytes();
                h.update((v.len() as u32).to_le_bytes());
                h.update(v);
            }
            DataType::Binary => {
                let v = array.as_binary::<i32>().value(r);
                h.update((v.len() as u32).to_le_bytes());
                h.update(v);
            }
            DataType::Date32 => {
                let days = array.as_primitive::<Date32Type>().value(r);
                let d = days_to_date(days)
                    .ok_or_else(|| Error::Request(format!("date {days} out of range")))?;
                h.update(d.to_le_bytes());
            }
            other => {
                return Err(Error::Request(format!(
                    "no digest form for Arrow type {other}"
                )));
            }
        }
    }
    Ok(hex(&h.finalize()))
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}
