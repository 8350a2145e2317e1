//! Stable type names of the CLI contract (`int64`, `timestamp[ms, UTC]`, `list<utf8>`, ...)
//! and the schema description stored in the map's `schema_json` column.
//!
//! `schema_json` is a JSON array of `{"name", "type", "nullable"}` objects in column order;
//! [`schema_from_json`] reads it back to the exact Arrow schema a locator returned.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use serde_json::{Value, json};

use crate::error::{Error, Result};

/// The contract's name of an Arrow type.
pub fn type_name(data_type: &DataType) -> String {
    match data_type {
        DataType::Null => "null".into(),
        DataType::Boolean => "bool".into(),
        DataType::Int8 => "int8".into(),
        DataType::Int16 => "int16".into(),
        DataType::Int32 => "int32".into(),
        DataType::Int64 => "int64".into(),
        DataType::UInt8 => "uint8".into(),
        DataType::UInt16 => "uint16".into(),
        DataType::UInt32 => "uint32".into(),
        DataType::UInt64 => "uint64".into(),
        DataType::Float16 => "float16".into(),
        DataType::Float32 => "float32".into(),
        DataType::Float64 => "float64".into(),
        DataType::Utf8 => "utf8".into(),
        DataType::LargeUtf8 => "large_utf8".into(),
        DataType::Binary => "binary".into(),
        DataType::LargeBinary => "large_binary".into(),
        DataType::Date32 => "date32".into(),
        DataType::Date64 => "date64".into(),
        DataType::Timestamp(unit, tz) => match tz {
            None => format!("timestamp[{}]", unit_name(unit)),
            Some(tz) => format!("timestamp[{}, {tz}]", unit_name(unit)),
        },
        DataType::List(field) | DataType::LargeList(field) => {
            format!("list<{}>", type_name(field.data_type()))
        }
        DataType::Struct(fields) => {
            let inner: Vec<String> = fields
                .iter()
                .map(|f| format!("{}: {}", f.name(), type_name(f.data_type())))
                .collect();
            format!("struct<{}>", inner.join(", "))
        }
        // Arrow's own spelling, which `DataType::from_str` reads back (decimals, times,
        // durations, dictionaries, maps, views, …).
        other => other.to_string(),
    }
}

fn unit_name(unit: &TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Second => "s",
        TimeUnit::Millisecond => "ms",
        TimeUnit::Microsecond => "us",
        TimeUnit::Nanosecond => "ns",
    }
}

/// Parses a name written by [`type_name`] back to the Arrow type.
pub fn parse_type_name(name: &str) -> Result<DataType> {
    let mut p = Parser { s: name, pos: 0 };
    let t = p.data_type()?;
    p.skip_ws();
    if p.pos != name.len() {
        return Err(Error::Schema(format!(
            "trailing text in type name {name:?}"
        )));
    }
    Ok(t)
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.s[self.pos..].starts_with(' ') {
            self.pos += 1;
        }
    }

    fn eat(&mut self, token: &str) -> bool {
        self.skip_ws();
        if self.s[self.pos..].starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, token: &str) -> Result<()> {
        if self.eat(token) {
            Ok(())
        } else {
            Err(Error::Schema(format!(
                "expected {token:?} at {} in {:?}",
                self.pos, self.s
            )))
        }
    }

    fn word(&mut self) -> &str {
        self.skip_ws();
        let start = self.pos;
        let rest = &self.s[start..];
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        self.pos += len;
        &self.s[start..start + len]
    }

    fn data_type(&mut self) -> Result<DataType> {
        let word = self.word().to_string();
        Ok(match word.as_str() {
            "null" => DataType::Null,
            "bool" => DataType::Boolean,
            "int8" => DataType::Int8,
            "int16" => DataType::Int16,
            "int32" => DataType::Int32,
            "int64" => DataType::Int64,
            "uint8" => DataType::UInt8,
            "uint16" => DataType::UInt16,
            "uint32" => DataType::UInt32,
            "uint64" => DataType::UInt64,
            "float16" => DataType::Float16,
            "float32" => DataType::Float32,
            "float64" => DataType::Float64,
            "utf8" => DataType::Utf8,
            "large_utf8" => DataType::LargeUtf8,
            "binary" => DataType::Binary,
            "large_binary" => DataType::LargeBinary,
            "date32" => DataType::Date32,
            "date64" => DataType::Date64,
            "timestamp" => {
                self.expect("[")?;
                let unit = match self.word() {
                    "s" => TimeUnit::Second,
                    "ms" => TimeUnit::Millisecond,
                    "us" => TimeUnit::Microsecond,
                    "ns" => TimeUnit::Nanosecond,
                    other => return Err(Error::Schema(format!("unknown time unit {other:?}"))),
                };
                let tz = if self.eat(",") {
                    self.skip_ws();
                    let rest = &self.s[self.pos..];
                    let end = rest.find(']').ok_or_else(|| {
                        Error::Schema(format!("unclosed timestamp in {:?}", self.s))
                    })?;
                    let tz = rest[..end].trim().to_string();
                    self.pos += end;
                    Some(tz.into())
                } else {
                    None
                };
                self.expect("]")?;
                DataType::Timestamp(unit, tz)
            }
            "list" => {
                self.expect("<")?;
                let item = self.data_type()?;
                self.expect(">")?;
                DataType::List(Arc::new(Field::new("item", item, true)))
            }
            "struct" => {
                self.expect("<")?;
                let mut fields = Vec::new();
                if !self.eat(">") {
                    loop {
                        self.skip_ws();
                        let rest = &self.s[self.pos..];
                        let colon = rest.find(": ").ok_or_else(|| {
                            Error::Schema(format!("struct field without type in {:?}", self.s))
                        })?;
                        let name = rest[..colon].to_string();
                        self.pos += colon + 2;
                        let t = self.data_type()?;
                        fields.push(Field::new(name, t, true));
                        if self.eat(">") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                DataType::Struct(Fields::from(fields))
            }
            _ => {
                // Any other type is stored in Arrow's spelling: read the whole expression
                // (up to a `,` or `>` outside brackets) with Arrow's parser.
                let start = self.pos - word.len();
                let end = self.expression_end(start);
                self.pos = end;
                arrow_type(self.s[start..end].trim())?
            }
        })
    }

    /// Where the type expression starting at `start` ends: the first `,` or `>` outside
    /// parentheses, brackets and angle brackets, or the end of the text.
    fn expression_end(&self, start: usize) -> usize {
        let mut depth = 0usize;
        for (i, c) in self.s[start..].char_indices() {
            match c {
                '(' | '[' | '<' => depth += 1,
                ')' | ']' => depth = depth.saturating_sub(1),
                '>' if depth == 0 => return start + i,
                '>' => depth -= 1,
                ',' if depth == 0 => return start + i,
                _ => {}
            }
        }
        self.s.len()
    }
}

/// A type in Arrow's `Display` spelling. Maps written before this spelling was kept stored
/// it lower-cased (`decimal128(10, 2)`), so a failed parse is retried with Arrow's keywords
/// recased.
fn arrow_type(text: &str) -> Result<DataType> {
    use std::str::FromStr;
    if let Ok(t) = DataType::from_str(text) {
        return Ok(t);
    }
    let recased = recase_keywords(text);
    DataType::from_str(&recased)
        .map_err(|e| Error::Schema(format!("unknown type name {text:?}: {e}")))
}

/// Arrow's type keywords in their own case, found by their lower-case form.
fn recase_keywords(text: &str) -> String {
    const KEYWORDS: &[&str] = &[
        "Null",
        "Boolean",
        "Int8",
        "Int16",
        "Int32",
        "Int64",
        "UInt8",
        "UInt16",
        "UInt32",
        "UInt64",
        "Float16",
        "Float32",
        "Float64",
        "Utf8",
        "LargeUtf8",
        "Utf8View",
        "Binary",
        "LargeBinary",
        "BinaryView",
        "FixedSizeBinary",
        "Date32",
        "Date64",
        "Time32",
        "Time64",
        "Timestamp",
        "Duration",
        "Interval",
        "Decimal32",
        "Decimal64",
        "Decimal128",
        "Decimal256",
        "List",
        "LargeList",
        "FixedSizeList",
        "ListView",
        "LargeListView",
        "Struct",
        "Map",
        "Dictionary",
        "RunEndEncoded",
        "Union",
        "Second",
        "Millisecond",
        "Microsecond",
        "Nanosecond",
        "YearMonth",
        "DayTime",
        "MonthDayNano",
        "Sparse",
        "Dense",
    ];
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        let fixed = KEYWORDS
            .iter()
            .find(|k| k.eq_ignore_ascii_case(word))
            .map_or(word.as_str(), |k| k);
        out.push_str(fixed);
        word.clear();
    };
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The field metadata key of an Arrow extension type's name.
const EXTENSION_KEY: &str = "ARROW:extension:name";
/// The one extension type `schema_json` keeps: JSON text (a Utf8 column whose values are
/// JSON text, such as an NDJSON member whose value types conflict between rows).
const JSON_EXTENSION: &str = "arrow.json";

/// The `schema_json` description of a schema: `[{"name", "type", "nullable"}, ...]`, with
/// `"extension": "arrow.json"` on a column of JSON text.
pub fn schema_to_json(schema: &Schema) -> Value {
    Value::Array(
        schema
            .fields()
            .iter()
            .map(|f| {
                let mut item = json!({"name": f.name(), "type": type_name(f.data_type()), "nullable": f.is_nullable()});
                if f.metadata().get(EXTENSION_KEY).map(String::as_str) == Some(JSON_EXTENSION)
                    && let Some(m) = item.as_object_mut()
                {
                    m.insert("extension".into(), JSON_EXTENSION.into());
                }
                item
            })
            .collect(),
    )
}

/// Reads a `schema_json` description back to an Arrow schema.
pub fn schema_from_json(value: &Value) -> Result<SchemaRef> {
    let items = value
        .as_array()
        .ok_or_else(|| Error::Schema("schema_json is not an array".into()))?;
    let mut fields = Vec::with_capacity(items.len());
    for item in items {
        let name = item
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::Schema(format!("column without a name: {item}")))?;
        let type_name = item
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::Schema(format!("column {name:?} without a type")))?;
        let nullable = item
            .get("nullable")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let mut field = Field::new(name, parse_type_name(type_name)?, nullable);
        if item.get("extension").and_then(Value::as_str) == Some(JSON_EXTENSION) {
            field = field.with_metadata(std::collections::HashMap::from([(
                EXTENSION_KEY.to_string(),
                JSON_EXTENSION.to_string(),
            )]));
        }
        fields.push(field);
    }
    Ok(Arc::new(Schema::new(fields)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        let types = [
            DataType::Int64,
            DataType::Boolean,
            DataType::Date32,
            DataType::Timestamp(TimeUnit::Millisecond, None),
            DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
            DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            DataType::Struct(Fields::from(vec![
                Field::new("a b", DataType::Float64, true),
                Field::new(
                    "c",
                    DataType::List(Arc::new(Field::new("item", DataType::Int64, true))),
                    true,
                ),
            ])),
        ];
        for t in types {
            let name = type_name(&t);
            assert_eq!(parse_type_name(&name).unwrap(), t, "{name}");
        }
        assert_eq!(
            type_name(&DataType::Timestamp(TimeUnit::Millisecond, None)),
            "timestamp[ms]"
        );
    }

    #[test]
    fn arrow_spelled_types_round_trip() {
        let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        let types = [
            DataType::Decimal128(10, 2),
            DataType::Decimal256(40, 0),
            dict.clone(),
            DataType::Time64(TimeUnit::Microsecond),
            DataType::Time32(TimeUnit::Millisecond),
            DataType::Duration(TimeUnit::Nanosecond),
            DataType::FixedSizeBinary(16),
            DataType::Utf8View,
            DataType::Struct(Fields::from(vec![
                Field::new("d", DataType::Decimal128(5, 1), true),
                Field::new("k", dict, true),
            ])),
        ];
        for t in types {
            let name = type_name(&t);
            assert_eq!(parse_type_name(&name).unwrap(), t, "{name}");
        }
        // Maps written before the Arrow spelling was kept stored it lower-cased.
        assert_eq!(
            parse_type_name("decimal128(10, 2)").unwrap(),
            DataType::Decimal128(10, 2)
        );
        assert_eq!(
            parse_type_name("struct<a: dictionary(int32, utf8)>").unwrap(),
            DataType::Struct(Fields::from(vec![Field::new(
                "a",
                DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8)),
                true
            )]))
        );
        assert!(parse_type_name("no_such_type(3)").is_err());
    }

    #[test]
    fn schema_json_round_trip() {
        let schema = Schema::new(vec![
            Field::new("gid", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]);
        let back = schema_from_json(&schema_to_json(&schema)).unwrap();
        assert_eq!(back.as_ref(), &schema);
    }
}
