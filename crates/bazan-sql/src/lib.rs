//! `bazan-sql`: SQL over Bazan lake maps and Apache TsFile files with Apache DataFusion.
//!
//! - [`LakeTable`] is a DataFusion `TableProvider` over a loaded lake: the unified schema plus
//!   the virtual columns `_gid` (Int64, global row) and `_path` (the relative file path), in
//!   the types the facade reads them in for SQL (strings and `_path` as Utf8View);
//!   projection, limit and filter pushdown (exact for `_gid` and `_path`, file and block
//!   pruning by the map's min/max statistics otherwise); exact row counts, so `count(*)` reads no file;
//!   partitions of block groups, so one large file is read by several cores; the map's
//!   size+mtime stale check on every file a scan opens.
//! - [`TsFileTable`] is one table of a table-model TsFile: `time` ranges and tag equality
//!   pushed into the reader (chunk/page statistics, device pruning), projection to the named
//!   measurements.
//! - [`SqlSession`] is what the CLI and Python call: register lakes, TsFiles and Arrow
//!   streams by name, run a query, get `(schema, batches)`, or stream its batches as they
//!   come ([`SqlSession::sql_stream`], an Arrow `RecordBatchReader`).
//! - With feature `proto`, [`codec::BazanCodec`] serializes both scans with
//!   `datafusion-proto`; with feature `distributed`, [`distributed`] runs plans on several
//!   datafusion-distributed workers; with feature `grpc`, [`cluster`] serves a worker process
//!   and runs queries on worker processes over gRPC.
//!
//! ```no_run
//! # fn main() -> Result<(), bazan_sql::Error> {
//! let session = bazan_sql::SqlSession::new()?;
//! session.register_lake("lake", std::path::Path::new("/data/lake"))?;
//! let (schema, batches) = session.sql("select count(*) from lake where _gid < 1000")?;
//! # Ok(())
//! # }
//! ```

mod error;
mod exec;
mod filters;
mod leaf;
mod parts;
mod rowset;
mod session;
mod table;
mod tsfile;

#[cfg(feature = "grpc")]
pub mod cluster;
#[cfg(feature = "proto")]
pub mod codec;
#[cfg(feature = "distributed")]
pub mod distributed;

pub use error::{Error, Result};
pub use exec::{LakeScanExec, counters};
pub use parts::Part;
pub use session::{QueryOutput, ScanCounts, SqlSession, SqlStream, run_query, scan_counts};
pub use table::LakeTable;
pub use tsfile::{TsFileScanExec, TsFileTable};
