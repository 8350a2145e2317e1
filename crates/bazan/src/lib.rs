//! `bazan`: the one library door of the Bazan toolkit. Every front end — the `bazan` command
//! line, the Python package and the SQL engine — goes through this crate, and so can any Rust
//! program: it maps a directory of data files (Parquet, ORC, Avro, Arrow IPC, CSV/TSV/PSV/TXT,
//! NDJSON/JSON, MsgPack, XLSX, TsFile) into one Lake Map, reads any global row range of the
//! lake as Arrow record batches by seeking straight to the right block, detects drift between
//! the map and the disk, and reads and writes Apache TsFile.
//!
//! The layers below it (see `docs/ARCHITECTURE.md`): `lake-locators` (one locator per
//! format), `lake-map` (the catalog), `lake-doctor` (drift), `tsfile-format` and
//! `tsfile-index` (TsFile). This crate adds what an application needs on top: every built-in
//! handler including `.tsfile`, a process-wide registry of run-time handlers, the unified
//! lake schema, streaming scans and `take` in that schema, cancellation, thread limits and one
//! error type with stable [`ErrorKind`]s. The map file and its rules are in
//! `docs/lake-map.md`.
//!
//! ```
//! use std::sync::Arc;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("a.csv"), "id,name\n1,ann\n2,bob\n")?;
//! std::fs::write(dir.path().join("b.ndjson"), "{\"id\":3,\"score\":0.5}\n")?;
//!
//! // Map the lake (writes dir/.br_map.bazan atomically), then read it back from disk.
//! bazan::create_map(dir.path(), &bazan::CreateOptions::default())?;
//! let lake = Arc::new(bazan::load_map(dir.path())?);
//! assert_eq!(lake.total_rows(), 3);
//!
//! // Global row 2 is the first row of b.ndjson.
//! let at = lake.locate_row(2)?;
//! assert_eq!((at.path.as_str(), at.local_row), ("b.ndjson", 0));
//!
//! // Rows 1..3 in the unified schema (id, name, score) with their global row numbers.
//! let options = bazan::ScanOptions { with_gid: true, ..Default::default() };
//! let batches = lake.scan(1..3, &options)?.collect_batches()?;
//! let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
//! assert_eq!(rows, 2);
//! assert_eq!(batches[0].schema().field(3).name(), "_gid");
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod block_cache;
mod cancel;
pub mod epoch;
pub mod error;
mod fresh;
mod handlers;
pub mod lake;
pub mod read;
pub mod remote;
mod scan;
pub mod tsfile;
pub mod unified;
mod views;
mod widen;

pub use arrow_array::{RecordBatch, RecordBatchReader};
pub use arrow_schema::{ArrowError, Schema, SchemaRef};
pub use block_cache::DEFAULT_CACHE_BYTES;
pub use cancel::CancelToken;
pub use epoch::{EpochOptions, EpochPlan, EpochReader, EpochState, Shard, Shuffle};
pub use error::{Error, ErrorKind, Result};
pub use handlers::{handlers, register_handler, registered_extensions, unregister_handler};
pub use lake::check_threads;
pub use lake::{
    CreateOptions, Created, DoctorOptions, DoctorReport, Fingerprint, Lake, LoadOptions, MapConfig,
    Progress, ProgressFn, RowLocation, StatsColumns, TextEncoding, Updated, Verdict, create_map,
    load_map, load_map_with, text_encoding, update_map,
};
/// The error a [`Locator`] returns (a handler written outside Bazan builds one of these;
/// [`Error`] converts from it).
pub use lake_locators::Error as LocatorError;
pub use lake_locators::columnar::quiet_guarded_panics;
pub use lake_locators::rows;
pub use lake_locators::{
    BatchIter, Block, ColumnStats, FileIndex, FineCheckpoints, IndexOptions, Locator, ReadRequest,
    Stats,
};
pub use read::{ReadOptions, locator_for, read_file};
pub use remote::{FetchCounts, StorageOptions, is_url, set_default_storage_options};
pub use scan::{DEFAULT_BATCH_SIZE, GID_COLUMN, LakeReader, PATH_COLUMN, ScanOptions};

/// The README's examples, compiled as doctests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;

/// Arrow IPC output of record batches.
pub mod ipc {
    pub use arrow_ipc::writer::{FileWriter, StreamWriter};
}

/// The engine crates, for programs that need their lower-level items (the map's entries,
/// locator internals, TsFile structures). Their APIs follow their own crates' versions.
pub mod engine {
    pub use lake_doctor;
    pub use lake_locators;
    pub use lake_map;
    pub use tsfile_format;
    pub use tsfile_index;
}
