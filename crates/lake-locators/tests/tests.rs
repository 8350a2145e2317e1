//! Integration tests of `lake-locators`, one binary with one module per format.
mod avro;
mod columnar_conformance;
mod common;
mod csv;
mod csv_latin1;
mod ipc;
mod json;
mod json_conflicts;
mod msgpack;
mod orc;
mod parquet;
mod read_rows;
mod real_world;
mod rows_conformance;
mod xlsx;
