//! Integration tests of the `bazan` binary.
mod common;
mod doctor;
mod lake;
mod latin1;
mod pipes;
mod read;
#[cfg(feature = "sql")]
mod sql;
#[cfg(feature = "sql")]
mod sql_workers;
mod tsfile;
mod tsfile_import;
mod update;
