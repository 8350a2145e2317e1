//! The format layer: one module per format family, each with its [`crate::Locator`]. The
//! columnar formats read their own blocks (with [`crate::columnar`]); the row formats (delimited
//! text, JSON, MsgPack, XLSX) share the scanning and inference core of [`crate::text`].

pub mod avro;
pub mod csv;
pub mod ipc;
pub mod json;
pub mod msgpack;
pub mod orc;
pub mod parquet;
pub mod xlsx;
