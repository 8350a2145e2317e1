//! Integration tests of `lake-map`.
