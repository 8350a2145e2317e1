//! Integration tests of the `bazan` binary.
mod lake;
mod read;
