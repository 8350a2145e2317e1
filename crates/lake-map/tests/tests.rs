//! Integration tests of `lake-map`.

mod atomic;
mod common;
mod latin1;
mod legacy;
mod map_file;
mod security;
mod slicing;
mod testdata_lake;
mod update;
