//! TableSchema and MeasurementSchema (reference §7.5), as stored in TsFileMetadata.
//!
//! ```text
//! TableSchema       := UVarInt column_count, column_count × { MeasurementSchema, i32 category }
//! MeasurementSchema := Str32 name, u8 data_type, u8 encoding, u8 compression,
//!                      i32 prop_count, prop_count × { Str32 key, Str32 value }
//! ```
//!
//! Unlike most footer fields, MeasurementSchema uses `Str32` strings. Columns keep their
//! declaration order, which for TAG columns is the order of the DeviceID segments.

use crate::cursor::{Cursor, Writer};
use crate::error::{Error, Result};
pub use crate::types::ColumnCategory;
use crate::types::{CompressionType, TSDataType, TSEncoding};

/// The schema of one column (or tree-model measurement).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MeasurementSchema {
    /// The column name.
    pub name: String,
    /// The value type.
    pub data_type: TSDataType,
    /// The encoding used for the column.
    pub encoding: TSEncoding,
    /// The compression used for the column.
    pub compression: CompressionType,
    /// Free-form properties, in file order; keys and values may be null (`Str32` length −1).
    pub properties: Vec<(Option<String>, Option<String>)>,
}

impl MeasurementSchema {
    /// A schema without properties.
    pub fn new(
        name: impl Into<String>,
        data_type: TSDataType,
        encoding: TSEncoding,
        compression: CompressionType,
    ) -> Self {
        Self {
            name: name.into(),
            data_type,
            encoding,
            compression,
            properties: Vec::new(),
        }
    }

    /// Reads one MeasurementSchema.
    pub fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        let at = c.offset();
        let name = c
            .read_str32("measurement schema name")?
            .ok_or_else(|| Error::Invalid {
                what: "measurement schema name",
                offset: at,
                reason: "must not be null".into(),
            })?;
        let at = c.offset();
        let data_type = TSDataType::from_code(c.read_u8("measurement schema data type")?, at)?;
        let at = c.offset();
        let encoding = TSEncoding::from_code(c.read_u8("measurement schema encoding")?, at)?;
        let at = c.offset();
        let compression =
            CompressionType::from_code(c.read_u8("measurement schema compression")?, at)?;
        let at = c.offset();
        let count = c.read_i32("measurement schema property count")?;
        // A property is at least two 4-byte lengths.
        let n = c.check_len(i64::from(count), 8, "measurement schema property count", at)?;
        let mut properties = Vec::with_capacity(n);
        for _ in 0..n {
            let key = c.read_str32("measurement schema property key")?;
            let value = c.read_str32("measurement schema property value")?;
            properties.push((key, value));
        }
        Ok(Self {
            name,
            data_type,
            encoding,
            compression,
            properties,
        })
    }

    /// Writes the schema.
    pub fn encode(&self, w: &mut Writer) {
        w.write_str32(Some(&self.name));
        w.write_u8(self.data_type.code());
        w.write_u8(self.encoding.code());
        w.write_u8(self.compression.code());
        w.write_i32(self.properties.len() as i32);
        for (k, v) in &self.properties {
            w.write_str32(k.as_deref());
            w.write_str32(v.as_deref());
        }
    }
}

/// One column of a table: its schema and its role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableColumn {
    /// Name, type, encoding, compression.
    pub schema: MeasurementSchema,
    /// TAG, FIELD, ATTRIBUTE or TIME.
    pub category: ColumnCategory,
}

/// The schema of a table: its columns in declaration order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TableSchema {
    /// The columns, in declaration order.
    pub columns: Vec<TableColumn>,
}

impl TableSchema {
    /// Reads a TableSchema.
    pub fn decode(c: &mut Cursor<'_>) -> Result<Self> {
        let at = c.offset();
        let count = c.read_uvarint("table schema column count")?;
        // The smallest column: 4 (name length) + 3 codes + 4 (property count) + 4 (category).
        let n = c.check_len(i64::from(count), 15, "table schema column count", at)?;
        let mut columns = Vec::with_capacity(n);
        for _ in 0..n {
            let schema = MeasurementSchema::decode(c)?;
            let at = c.offset();
            let category = ColumnCategory::from_code(c.read_i32("column category")?, at)?;
            columns.push(TableColumn { schema, category });
        }
        Ok(Self { columns })
    }

    /// Writes the schema.
    pub fn encode(&self, w: &mut Writer) {
        w.write_uvarint(self.columns.len() as u32);
        for col in &self.columns {
            col.schema.encode(w);
            w.write_i32(col.category.code());
        }
    }

    /// The TAG columns, in order: the order of the DeviceID segments after the table name.
    pub fn tag_columns(&self) -> impl Iterator<Item = &TableColumn> {
        self.columns
            .iter()
            .filter(|c| c.category == ColumnCategory::Tag)
    }

    /// The column named `name`, if any.
    pub fn column(&self, name: &str) -> Option<&TableColumn> {
        self.columns.iter().find(|c| c.schema.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tv9_table_schema() {
        // "t" schema of TV9: 2 columns, "id" STRING TAG, "v" INT32 FIELD.
        let mut bytes = vec![0x02];
        bytes.extend([0, 0, 0, 2, b'i', b'd', 0x0b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        bytes.extend([0, 0, 0, 1, b'v', 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        let s = TableSchema::decode(&mut Cursor::new(&bytes, 0)).unwrap();
        assert_eq!(s.columns.len(), 2);
        assert_eq!(s.columns[0].schema.name, "id");
        assert_eq!(s.columns[0].schema.data_type, TSDataType::String);
        assert_eq!(s.columns[0].category, ColumnCategory::Tag);
        assert_eq!(s.columns[1].category, ColumnCategory::Field);
        assert_eq!(s.tag_columns().count(), 1);
        assert_eq!(
            s.column("v").map(|c| c.schema.data_type),
            Some(TSDataType::Int32)
        );
        let mut w = Writer::new();
        s.encode(&mut w);
        assert_eq!(w.as_bytes(), bytes);
    }

    #[test]
    fn properties_and_time_category_round_trip() {
        let mut m = MeasurementSchema::new(
            "temp",
            TSDataType::Double,
            TSEncoding::Gorilla,
            CompressionType::Zstd,
        );
        m.properties = vec![(Some("k".into()), None), (None, Some(String::new()))];
        let s = TableSchema {
            columns: vec![TableColumn {
                schema: m,
                category: ColumnCategory::Time,
            }],
        };
        let mut w = Writer::new();
        s.encode(&mut w);
        let mut c = Cursor::new(w.as_bytes(), 0);
        assert_eq!(TableSchema::decode(&mut c).unwrap(), s);
        assert!(c.is_empty());
    }

    #[test]
    fn lying_counts_are_refused() {
        let bytes = [0xff, 0xff, 0xff, 0xff, 0x0f];
        assert!(matches!(
            TableSchema::decode(&mut Cursor::new(&bytes, 0)),
            Err(Error::LengthOutOfBounds { .. })
        ));
        let mut w = Writer::new();
        w.write_str32(Some("a"));
        w.write_bytes(&[1, 0, 0]);
        w.write_i32(i32::MAX);
        assert!(matches!(
            MeasurementSchema::decode(&mut Cursor::new(w.as_bytes(), 0)),
            Err(Error::LengthOutOfBounds { .. })
        ));
    }
}
