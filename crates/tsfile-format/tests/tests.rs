//! Integration tests of `tsfile-format`, one binary with one module per area.
