//! Integration tests of `tsfile-index`.
