//! `lake-locators`: one locator per data-file format of a lake.
//!
//! Layer 1 of Bazan's lake stack. A [`Locator`] knows a format's handler name and file
//! extensions and offers two operations over a path: [`Locator::index`], one pass that yields
//! the row count, the blocks (row groups, stripes, OCF blocks, record batches or row
//! checkpoints), the Arrow schema the reader returns and the column statistics; and
//! [`Locator::read`], which returns local rows `[a, b)` of the file as Arrow record batches,
//! seeking straight to the first needed block when the blocks are given.
//!
//! This crate owns format knowledge only. It must never know about the map file, global row
//! numbers, fingerprints or the directory walk: those belong to `lake-map`.
//!
//! Shared pieces used by every format live here too: [`types`] (the stable type names of the
//! CLI contract and the schema JSON stored in the map) and [`rows`] (the JSON value
//! representation of rows).

pub mod avro;
pub mod columnar;
pub mod csv;
pub mod error;
mod infer;
pub mod ipc;
pub mod json;
mod jsonrun;
mod jsontok;
mod jsonwin;
pub mod locator;
pub mod msgpack;
mod numbers;
pub mod orc;
pub mod parquet;
pub mod registry;
mod rowread;
pub mod rows;
mod rowshape;
mod scan;
pub mod sniff;
pub mod stats;
#[cfg(test)]
mod testutil;
pub mod trace;
pub mod types;
mod window;
#[cfg(target_arch = "x86_64")]
mod window512;
pub mod xlsx;

pub use error::{Error, Result};
pub use locator::{
    BatchIter, Block, ColumnChunk, ColumnStats, FileIndex, IndexOptions, Locator, PageLocation,
    ReadRequest, Stats, StatsColumns,
};
