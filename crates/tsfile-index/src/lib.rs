//! `tsfile-index`: opening Apache TsFile files and reading their series into Arrow.
//!
//! Layer 2 of Bazan's TsFile stack, on top of the codecs of `tsfile-format`. It owns file
//! access (through one byte-range trait implemented for files, memory maps and in-memory
//! bytes), walking the device/measurement index tree, reading chunks and pages, and the Arrow
//! bridge. It must never implement a byte codec itself (those live in `tsfile-format`) and
//! never knows about lakes or maps.
//!
//! The reading path follows `docs/tsfile.md` §12: head and tail magics and the exact metadata
//! length → TsFileMetadata (table roots, schemas, Bloom filter, properties) → the device index
//! tree (§7.4) → a device's measurement index → TimeseriesMetadata → ChunkMetadata → chunk
//! header → pages (decompress, split, decode) → Arrow record batches.

pub mod arrow_types;
pub mod check;
pub mod column;
mod data;
pub mod dump;
pub mod error;
pub mod index;
pub mod io;
mod merge;
pub mod mmap;
pub mod query;
pub mod reader;
pub mod series_index;
pub mod writer;

pub use data::{DataSection, TimeRange};
pub use error::{Error, Result};
pub use index::{DeviceEntry, Devices};
pub use io::ChunkReader;
pub use query::{TableBatches, TableQuery, TreeQuery};
pub use reader::{ReadOptions, TsFileReader};
pub use series_index::SeriesEntry;
