//! Widening of JSON members whose value types disagree between rows in a way arrow-json's
//! inference refuses (an array in one row, a number or an object in another): such a member
//! becomes a Utf8 column holding each value as JSON text, as mixed scalars already become
//! Utf8 here (and the lake's unified schema widens any other disagreement to text,
//! lake-map.md §10). Every row is counted; the other members keep their inferred types.

use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use serde_json::Value;

use crate::error::Result;
use crate::text::rowread::decode_json;

/// arrow-json's schema of the rows `make` yields (called once, or again per member when the
/// rows disagree), with the members whose types cannot be joined widened to Utf8.
pub(super) fn infer<I, F>(make: F) -> std::result::Result<Schema, ArrowError>
where
    F: Fn() -> I,
    I: Iterator<Item = std::result::Result<Value, ArrowError>>,
{
    let first = match arrow_json::reader::infer_json_schema_from_iterator(make()) {
        Ok(schema) => return Ok(schema),
        Err(e) => e,
    };
    // Member names in first-seen order (rows that are not objects keep the error).
    let mut names: Vec<String> = Vec::new();
    for value in make() {
        match value? {
            Value::Object(members) => {
                for name in members.keys() {
                    if !names.contains(name) {
                        names.push(name.clone());
                    }
                }
            }
            _ => return Err(first),
        }
    }
    let mut fields = Vec::with_capacity(names.len());
    for name in &names {
        let one = make().map(|v| {
            v.map(|v| {
                let mut out = serde_json::Map::new();
                if let Value::Object(mut members) = v
                    && let Some(member) = members.remove(name)
                {
                    out.insert(name.clone(), member);
                }
                Value::Object(out)
            })
        });
        match arrow_json::reader::infer_json_schema_from_iterator(one) {
            Ok(schema) => match schema.field_with_name(name) {
                Ok(f) => fields.push(f.clone()),
                Err(_) => fields.push(Field::new(name, DataType::Null, true)),
            },
            Err(_) => fields.push(Field::new(name, DataType::Utf8, true)),
        }
    }
    Ok(Schema::new(fields))
}

/// [`decode_json`], and when arrow-json refuses the rows, again with every array or object
/// value of a Utf8 or LargeUtf8 member replaced by its JSON text (the widened members of
/// [`infer`]). The first error is returned when the rewritten rows fail too.
pub(super) fn decode(
    path: &Path,
    format: &'static str,
    schema: &SchemaRef,
    text: &[u8],
    rows: usize,
    projection: Option<&[usize]>,
) -> Result<Option<RecordBatch>> {
    let first = match decode_json(path, format, schema, text, rows, projection) {
        Ok(batch) => return Ok(batch),
        Err(e) => e,
    };
    let texts: Vec<&str> = schema
        .fields()
        .iter()
        .filter(|f| matches!(f.data_type(), DataType::Utf8 | DataType::LargeUtf8))
        .map(|f| f.name().as_str())
        .collect();
    if texts.is_empty() {
        return Err(first);
    }
    let mut out = Vec::with_capacity(text.len() + 64);
    for value in serde_json::Deserializer::from_slice(text).into_iter::<Value>() {
        let Ok(mut value) = value else {
            return Err(first);
        };
        if let Value::Object(members) = &mut value {
            for name in &texts {
                if let Some(v) = members.get_mut(*name)
                    && (v.is_array() || v.is_object())
                {
                    *v = Value::String(v.to_string());
                }
            }
        }
        if serde_json::to_writer(&mut out, &value).is_err() {
            return Err(first);
        }
        out.push(b'\n');
    }
    decode_json(path, format, schema, &out, rows, projection).map_err(|_| first)
}
