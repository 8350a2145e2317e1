//! `TsFileWriter`: writes Apache TsFile V4 that the official readers accept, for the table
//! model (a TableSchema; devices from TAG values; aligned time and value chunks) and the tree
//! model (aligned and non-aligned devices), following `docs/tsfile.md` §5–§7, §10 and §13.
//!
//! Rows are buffered per device and series; when the buffered bytes pass
//! [`WriterOptions::chunk_group_size_threshold`] (or on [`TsFileWriter::flush`] and
//! [`TsFileWriter::close`]) every device with data becomes one chunk group, in DeviceID order.
//! [`TsFileWriter::close`] writes the index section and TsFileMetadata, then renames the
//! temporary file to its final name, so that a crash never leaves half a file there.
//!
//! ```no_run
//! use std::sync::Arc;
//! use arrow_array::{Int32Array, Int64Array, RecordBatch, StringArray};
//! use tsfile_format::types::{ColumnCategory, TSDataType};
//! use tsfile_index::writer::{TsFileWriter, WriterOptions};
//!
//! let opts = WriterOptions::default();
//! let schema = opts.table_schema(&[
//!     ("id", TSDataType::String, ColumnCategory::Tag),
//!     ("v", TSDataType::Int32, ColumnCategory::Field),
//! ]);
//! let mut w = TsFileWriter::create("out.tsfile", opts)?;
//! w.register_table("t", schema)?;
//! let batch = RecordBatch::try_from_iter([
//!     ("time", Arc::new(Int64Array::from(vec![100, 101])) as _),
//!     ("id", Arc::new(StringArray::from(vec!["d1", "d1"])) as _),
//!     ("v", Arc::new(Int32Array::from(vec![7, 8])) as _),
//! ])?;
//! w.write_table("t", "time", &batch)?;
//! w.close()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod arrow;
mod buffer;
mod chunk;
mod device;
mod error;
mod file;
mod index;
mod options;
mod seal;
mod sort;
mod stats;

pub use arrow::{date32_to_yyyymmdd, tsfile_type_of};
pub use error::{WriteError, WriteResult};
pub use file::TsFileWriter;
pub use options::{BloomHashing, Flavor, WriterOptions, default_encoding, encoding_is_writable};

use tsfile_format::schema::{MeasurementSchema, TableColumn, TableSchema};
use tsfile_format::types::{ColumnCategory, TSDataType};

impl WriterOptions {
    /// A column with this configuration's defaults: the type's default encoding (PLAIN for
    /// TAG and ATTRIBUTE columns) and [`WriterOptions::default_compression`].
    pub fn column(
        &self,
        name: &str,
        data_type: TSDataType,
        category: ColumnCategory,
    ) -> TableColumn {
        let encoding = if category == ColumnCategory::Field {
            default_encoding(data_type)
        } else {
            tsfile_format::types::TSEncoding::Plain
        };
        TableColumn {
            schema: MeasurementSchema::new(name, data_type, encoding, self.default_compression),
            category,
        }
    }

    /// A table schema of `columns` (name, type, category) with this configuration's defaults.
    pub fn table_schema(&self, columns: &[(&str, TSDataType, ColumnCategory)]) -> TableSchema {
        TableSchema {
            columns: columns
                .iter()
                .map(|(n, t, c)| self.column(n, *t, *c))
                .collect(),
        }
    }

    /// A tree-model measurement with this configuration's defaults.
    pub fn measurement(&self, name: &str, data_type: TSDataType) -> MeasurementSchema {
        MeasurementSchema::new(
            name,
            data_type,
            default_encoding(data_type),
            self.default_compression,
        )
    }
}
