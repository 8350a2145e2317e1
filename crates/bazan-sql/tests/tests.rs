//! Integration tests of bazan-sql (one binary): queries against DuckDB over a copy of the
//! conformance lake, the lake table's pushdown and stale check, TsFile tables, plan
//! serialization and two-worker execution.

mod common;
mod duckdb_queries;
mod lake_scan;
mod tsfile;

#[cfg(feature = "proto")]
mod proto;

#[cfg(feature = "distributed")]
mod distributed;

#[cfg(feature = "grpc")]
mod cluster;
