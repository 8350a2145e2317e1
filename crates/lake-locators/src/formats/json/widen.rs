//! Members whose JSON value types disagree between rows: a top-level member that holds an
//! array in one row and a scalar or an object in another, an object in one row and a scalar
//! in another, or such a disagreement anywhere inside its value (a nested member, the
//! elements of an array) becomes a **JSON text** column: Utf8, marked with the canonical
//! Arrow extension type `arrow.json` ([`json_field`]), holding each row's value as compact
//! JSON text (strings with their quotes and escapes as written, numbers as written, objects
//! and arrays without whitespace; JSON `null` stays null). Scalars alone that disagree
//! (numbers and strings, say) are no conflict: arrow-json joins them to a plain Utf8 column
//! of their text, as DuckDB joins them to VARCHAR. The other members keep their types.
//!
//! arrow-json's own inference joins a scalar and an array into a list of the scalar, rows
//! its decoder then refuses (`expected [ got "1"`): here that join is a conflict too. An
//! array holding only nulls is no scalar: it joins an array of arrays.

use std::collections::HashMap;
use std::path::Path;

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use serde_json::Value;

use crate::error::Result;
use crate::text::rowread::decode_json;
use crate::text::scan::{json_string_end, json_value_end, skip_ws};

/// The field metadata key of an Arrow extension type's name.
const EXTENSION_KEY: &str = "ARROW:extension:name";
/// The canonical Arrow extension type of JSON text.
const JSON_EXTENSION: &str = "arrow.json";

/// The JSON text column `name` (Utf8 of the extension type `arrow.json`).
pub(crate) fn json_field(name: &str) -> Field {
    Field::new(name, DataType::Utf8, true).with_metadata(HashMap::from([(
        EXTENSION_KEY.to_string(),
        JSON_EXTENSION.to_string(),
    )]))
}

/// True when `f` is a JSON text column ([`json_field`]).
pub(crate) fn is_json(f: &Field) -> bool {
    f.data_type() == &DataType::Utf8
        && f.metadata().get(EXTENSION_KEY).map(String::as_str) == Some(JSON_EXTENSION)
}

/// The shape of a member's values, as far as conflicts go (arrow-json's `InferredType`
/// without the scalar types).
#[derive(Debug, Clone)]
enum Shape {
    /// Nothing known yet (`null`, `[]`).
    Any,
    /// Scalars; `false` for the elements of an array holding only nulls.
    Scalar(bool),
    Array(Box<Shape>),
    Object(HashMap<String, Shape>),
}

/// Joins `o` into `s`; false on a conflict.
fn join(s: &mut Shape, o: Shape) -> bool {
    match (s, o) {
        (Shape::Array(a), Shape::Array(b)) => join(a, *b),
        (Shape::Scalar(a), Shape::Scalar(b)) => {
            *a |= b;
            true
        }
        (Shape::Object(a), Shape::Object(b)) => b
            .into_iter()
            .all(|(k, v)| join(a.entry(k).or_insert(Shape::Any), v)),
        (s @ Shape::Any, o) => {
            *s = o;
            true
        }
        (_, Shape::Any) => true,
        // Only an array of nulls joins an array (as arrow-json joins them).
        (Shape::Array(inner), o @ Shape::Scalar(false)) => join(inner, o),
        (s @ Shape::Scalar(false), Shape::Array(mut inner)) => {
            let ok = join(&mut inner, s.clone());
            *s = Shape::Array(inner);
            ok
        }
        _ => false,
    }
}

/// The shape of `v`; `None` on a conflict inside it (arrow-json's element rules: the first
/// element of an array says whether all are arrays, all objects, or all scalars and nulls).
fn shape(v: &Value) -> Option<Shape> {
    Some(match v {
        Value::Null => Shape::Any,
        Value::Bool(_) | Value::Number(_) | Value::String(_) => Shape::Scalar(true),
        Value::Array(items) => {
            let mut inner = Shape::Any;
            match items.first() {
                None => {}
                Some(Value::Array(_)) | Some(Value::Object(_)) => {
                    let object = matches!(items.first(), Some(Value::Object(_)));
                    for item in items {
                        let fits = match item {
                            Value::Object(_) => object,
                            Value::Array(_) => !object,
                            _ => false,
                        };
                        if !fits || !join(&mut inner, shape(item)?) {
                            return None;
                        }
                    }
                }
                Some(_) => {
                    let mut any = false;
                    for item in items {
                        match item {
                            Value::Null => {}
                            Value::Array(_) | Value::Object(_) => return None,
                            _ => any = true,
                        }
                    }
                    inner = Shape::Scalar(any);
                }
            }
            Shape::Array(Box::new(inner))
        }
        Value::Object(members) => {
            let mut out = HashMap::with_capacity(members.len());
            for (k, v) in members {
                out.insert(k.clone(), shape(v)?);
            }
            Shape::Object(out)
        }
    })
}

/// arrow-json's schema of the rows `make` yields (called once more, or again per member,
/// when some member conflicts), with the conflicting members as JSON text ([`json_field`]).
pub(super) fn infer<I, F>(make: F) -> std::result::Result<Schema, ArrowError>
where
    F: Fn() -> I,
    I: Iterator<Item = std::result::Result<Value, ArrowError>>,
{
    // Member names in first-seen order, each with its joined shape (`None`: a conflict).
    let mut names: Vec<String> = Vec::new();
    let mut shapes: HashMap<String, Option<Shape>> = HashMap::new();
    for value in make() {
        let Value::Object(members) = value? else {
            // Not an object: arrow-json reports it.
            return arrow_json::reader::infer_json_schema_from_iterator(make());
        };
        for (name, v) in members {
            let slot = shapes.entry(name.clone()).or_insert_with(|| {
                names.push(name.clone());
                Some(Shape::Any)
            });
            if let Some(s) = slot {
                let joined = match shape(&v) {
                    Some(o) => join(s, o),
                    None => false,
                };
                if !joined {
                    *slot = None;
                }
            }
        }
    }
    let conflicts: Vec<&String> = names.iter().filter(|n| shapes[*n].is_none()).collect();
    if conflicts.is_empty()
        && let Ok(schema) = arrow_json::reader::infer_json_schema_from_iterator(make())
    {
        return Ok(schema);
    }
    let mut fields = Vec::with_capacity(names.len());
    for name in &names {
        if conflicts.contains(&name) {
            fields.push(json_field(name));
            continue;
        }
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
            Err(_) => fields.push(json_field(name)),
        }
    }
    Ok(Schema::new(fields))
}

/// [`decode_json`] of rows whose schema may hold JSON text columns: each such member's value
/// is first rewritten into a JSON string of its compact text ([`quote_json_members`]). Without
/// them, when arrow-json refuses the rows, they are decoded again with every array or object
/// value of a Utf8 or LargeUtf8 member replaced by its JSON text (a map whose schema keeps no
/// `arrow.json` mark); the first error is returned when the rewritten rows fail too.
pub(super) fn decode(
    path: &Path,
    format: &'static str,
    schema: &SchemaRef,
    text: &[u8],
    rows: usize,
    projection: Option<&[usize]>,
) -> Result<Option<RecordBatch>> {
    if schema.fields().iter().any(|f| is_json(f)) {
        let names: Vec<&str> = schema
            .fields()
            .iter()
            .filter(|f| is_json(f))
            .map(|f| f.name().as_str())
            .collect();
        let mut out = Vec::with_capacity(text.len() + text.len() / 8 + 64);
        // Rows that do not scan are left to the decoder, which names the error.
        let text = match quote_json_members(text, &names, &mut out) {
            Some(()) => &out[..],
            None => text,
        };
        return decode_json(path, format, schema, text, rows, projection);
    }
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

/// Writes the whitespace-separated JSON objects of `text` to `out`, each on a line, with the
/// value of every top-level member named in `names` (other than `null`) replaced by a JSON
/// string of its compact text ([`compact_into`]); `None` when the text is not such objects.
pub(super) fn quote_json_members(text: &[u8], names: &[&str], out: &mut Vec<u8>) -> Option<()> {
    out.clear();
    let mut compact = Vec::new();
    let mut p = skip_ws(text, 0);
    while p < text.len() {
        if text[p] != b'{' {
            return None;
        }
        out.push(b'{');
        p = skip_ws(text, p + 1);
        if text.get(p) == Some(&b'}') {
            p += 1;
        } else {
            loop {
                if text.get(p) != Some(&b'"') {
                    return None;
                }
                let name_end = json_string_end(text, p)?;
                let raw = &text[p..name_end];
                let inside = &raw[1..raw.len() - 1];
                let wanted = if inside.contains(&b'\\') {
                    let name = serde_json::from_slice::<String>(raw).ok()?;
                    names.contains(&name.as_str())
                } else {
                    names.iter().any(|n| n.as_bytes() == inside)
                };
                out.extend_from_slice(raw);
                out.push(b':');
                p = skip_ws(text, name_end);
                if text.get(p) != Some(&b':') {
                    return None;
                }
                p = skip_ws(text, p + 1);
                let end = json_value_end(text, p)?;
                let value = &text[p..end];
                if wanted && value != b"null" {
                    compact_into(value, &mut compact);
                    quote_into(&compact, out);
                } else {
                    out.extend_from_slice(value);
                }
                p = skip_ws(text, end);
                match text.get(p) {
                    Some(b',') => {
                        out.push(b',');
                        p = skip_ws(text, p + 1);
                    }
                    Some(b'}') => {
                        p += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        out.extend_from_slice(b"}\n");
        p = skip_ws(text, p);
    }
    Some(())
}

/// The JSON value `value` without the whitespace outside its strings, into `out` (cleared):
/// strings, numbers and literals keep the bytes they are written with.
pub(super) fn compact_into(value: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut p = 0;
    while p < value.len() {
        match value[p] {
            b'"' => {
                let end = json_string_end(value, p).unwrap_or(value.len());
                out.extend_from_slice(&value[p..end]);
                p = end;
            }
            b' ' | b'\t' | b'\n' | b'\r' => p += 1,
            b => {
                out.push(b);
                p += 1;
            }
        }
    }
}

/// `text` as a JSON string into `out`: quotes and backslashes escaped (compact JSON text
/// holds no control character, which a JSON string may not hold either).
fn quote_into(text: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in text {
        match b {
            b'"' | b'\\' => {
                out.push(b'\\');
                out.push(b);
            }
            _ => out.push(b),
        }
    }
    out.push(b'"');
}
