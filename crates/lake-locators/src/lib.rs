//! `lake-locators`: one locator per data-file format of a lake.
//!
//! Layer 1 of Bazan's lake stack. A [`Locator`] knows a format's handler name and file
//! extensions and offers two operations over a path: [`Locator::index`], one pass that yields
//! the row count, the blocks (row groups, stripes, OCF blocks, record batches or row
//! checkpoints), the Arrow schema the reader returns and the column statistics; and
//! [`Locator::read`], which returns local rows `[a, b)` of the file as Arrow record batches,
//! seeking straight to the first needed block when the blocks are given; and
//! [`Locator::read_rows`], which returns chosen rows of the file in one call (the random
//! `take` of a lake), decoding only the blocks, pages or records they need.
//!
//! This crate owns format knowledge only. It must never know about the map file, global row
//! numbers, fingerprints or the directory walk: those belong to `lake-map`.
//!
//! The source is in three layers, one folder each, each using only the ones below it:
//!
//! - `formats/`: one module per format family (Parquet, ORC, Avro, Arrow IPC, XLSX, MsgPack,
//!   delimited text, JSON), re-exported at the crate root ([`parquet`], [`csv`], ...).
//! - `text/`: the scanning and inference core shared by the row formats (file bytes and
//!   line scanning, number classification, column type inference, runs of records of one
//!   shape, checkpoint reads).
//! - `simd/`: the byte-class masks of 64-byte windows, with the one CPU-feature detection and
//!   dispatch point: one module per instruction set (SSE2, AVX2, AVX-512, all x86_64 only) beside
//!   the portable path every other architecture runs and every vector path is tested against.
//!
//! Beside them, at the root, the contract every layer shares: [`locator`] (the [`Locator`]
//! trait and its index types), [`error`], [`registry`], [`sniff`], [`columnar`] (helpers of the
//! formats with native blocks), [`stats`], [`types`] (the stable type names of the CLI contract
//! and the schema JSON stored in the map), [`rows`] (the JSON value representation of rows)
//! and [`take`] (the pieces of [`Locator::read_rows`] every format shares).

pub mod columnar;
mod encoding;
pub mod error;
mod formats;
#[doc(hidden)]
pub mod fuzzing;
pub mod locator;
pub mod registry;
pub mod rows;
mod simd;
pub mod sniff;
pub mod stats;
#[cfg(test)]
mod testutil;
mod text;
pub mod types;

pub use error::{Error, Result};
pub use formats::parquet::trace;
pub use formats::{avro, csv, ipc, json, msgpack, orc, parquet, xlsx};
pub use locator::bytes::{BlockEnd, ByteLayout, RangeRead};
pub use locator::take;
pub use locator::{
    BatchIter, Block, ColumnChunk, ColumnStats, DEFAULT_STRIDE, FileIndex, FineCheckpoints,
    IndexOptions, Locator, PageLocation, ReadRequest, RowsCost, RowsRequest, Stats, StatsColumns,
};
pub use text::scan::prefetch_file;
pub use text::split::reads_ahead_itself;
