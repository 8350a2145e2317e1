//! Integration tests of the `bazan` binary.
mod read;
