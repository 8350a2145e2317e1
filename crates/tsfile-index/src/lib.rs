//! `tsfile-index`: opening Apache TsFile files and reading their series into Arrow.
//!
//! Layer 2 of Bazan's TsFile stack, on top of the codecs of `tsfile-format`. It owns file
//! access (through one byte-range trait implemented for files, memory maps and in-memory
//! bytes), walking the device/measurement index tree, reading chunks and pages, and the Arrow
//! bridge. It must never implement a byte codec itself (those live in `tsfile-format`) and
//! never knows about lakes or maps.
//!
//! The reading path follows `docs/tsfile.md` §12: head and tail magics
//! and the exact metadata length → TsFileMetadata (table roots, schemas, Bloom filter,
//! properties) → the device index tree (§7.4) → a device's measurement index →
//! TimeseriesMetadata → ChunkMetadata → chunk header → pages (decompress, split, decode) →
//! Arrow record batches. V4 and V3 (§7.6) files are read. Section signs (§) in this crate's
//! docs cite `docs/tsfile.md`.
//!
//! | module | role |
//! | --- | --- |
//! | [`io`], [`mmap`] | the [`ChunkReader`] seam (file, mmap, bytes) and a recording wrapper |
//! | [`reader`] | [`TsFileReader::open`]: head, tail, TsFileMetadata |
//! | [`index`], [`series_index`] | devices in index order, device and measurement lookup |
//! | [`query`], [`column`](mod@column), [`arrow_types`] | table and tree queries into Arrow |
//! | [`dump`], [`check`] | the conformance-shaped JSON dump and the validator |
//! | [`writer`] | writing TsFiles |
//!
//! ```no_run
//! use tsfile_index::{TableQuery, TimeRange, TsFileReader};
//!
//! let reader = TsFileReader::open("data.tsfile")?;
//! for device in reader.devices()? {
//!     let device = device?;
//!     println!("{} has {} series", device.path(), reader.timeseries(&device)?.len());
//! }
//! let query = TableQuery {
//!     columns: Some(vec!["time".into(), "station".into(), "temp".into()]),
//!     time_range: TimeRange::new(Some(1_700_000_000_000), None),
//!     tags: vec![("station".into(), Some("st01".into()))],
//!     batch_size: 65_536,
//! };
//! for batch in reader.query_table("telemetry", &query)? {
//!     println!("{} rows", batch?.num_rows());
//! }
//! # Ok::<(), tsfile_index::Error>(())
//! ```

pub mod arrow_types;
pub mod check;
mod check_lossy;
mod check_stats;
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
