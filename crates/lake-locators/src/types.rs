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
        other => other.to_string().to_lowercase(),
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
            other => return Err(Error::Schema(format!("unknown type name {other:?}"))),
        })
    }
}

/// The `schema_json` description of a schema: `[{"name", "type", "nullable"}, ...]`.
pub fn schema_to_json(schema: &Schema) -> Value {
    Value::Array(
        schema
            .fields()
            .iter()
            .map(|f| {
                json!({"name": f.name(), "type": type_name(f.data_type()), "nullable": f.is_nullable()})
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
        fields.push(Field::new(name, parse_type_name(type_name)?, nullable));
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
    fn schema_json_round_trip() {
        let schema = Schema::new(vec![
            Field::new("gid", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]);
        let back = schema_from_json(&schema_to_json(&schema)).unwrap();
        assert_eq!(back.as_ref(), &schema);
    }
}
