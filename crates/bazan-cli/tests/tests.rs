//! Integration tests of the `bazan` binary.
