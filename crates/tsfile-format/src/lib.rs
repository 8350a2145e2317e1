//! `tsfile-format`: the byte-level codec layer of Apache TsFile V4 (and V3).
//!
//! Layer 1 of Bazan's TsFile stack. This crate owns the binary vocabulary of the format:
//! the primitive encodings (big-endian integers, LEB128 and ZigZag varints, length-prefixed
//! strings), the on-disk enumerations, every footer and data-section structure, the value
//! encodings of page payloads and the page compressions, each as a `decode` from a byte slice
//! and an `encode` back to the same bytes. Section numbers in this crate's docs ("reference
//! §8.3") are those of the format notes in `docs/tsfile.md`.
//!
//! It must never do file I/O, walk the index, or depend on Arrow or any other heavy crate:
//! downstream users take this crate alone for its codecs. Opening files and reading series
//! lives in `tsfile-index`.
//!
//! All decoding goes through [`cursor::Cursor`], whose reads return [`Result`] and whose
//! errors name what was being read and the absolute file offset where it failed. Lengths and
//! counts read from the input are checked against the bytes that remain before anything is
//! allocated, so hostile input yields an [`Error`], never a panic or a huge allocation.
//!
//! ```
//! use tsfile_format::cursor::{Cursor, Writer};
//!
//! let mut w = Writer::new();
//! w.write_var_str(Some("d1"));
//! assert_eq!(w.as_bytes(), &[0x04, b'd', b'1']);
//! let mut c = Cursor::new(w.as_bytes(), 0);
//! assert_eq!(c.read_var_str("device segment").unwrap().as_deref(), Some("d1"));
//! ```

pub mod bloom_filter;
pub mod chunk;
pub mod compression;
pub mod cursor;
pub mod device_id;
pub mod encoding;
pub mod error;
pub mod file;
#[cfg(feature = "lz4")]
mod lz4;
pub mod metadata_index;
pub mod page;
pub mod page_payload;
pub mod schema;
pub mod statistics;
pub mod timeseries;
pub mod types;

pub use error::{Error, Result};
