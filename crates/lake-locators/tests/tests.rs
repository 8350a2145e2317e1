//! Integration tests of `lake-locators`, one binary with one module per format.
mod columnar_conformance;
mod rows_conformance;
mod parquet;
mod csv;
mod json;
mod ipc;
mod msgpack;
mod orc;
mod xlsx;
mod avro;
