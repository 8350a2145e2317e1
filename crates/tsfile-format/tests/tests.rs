//! Integration tests of `tsfile-format`, one binary with one module per area.

mod alloc;
mod bad_input;
mod corpus;
mod encodings;
mod lz4_identity;
mod roundtrip;
mod structures;
mod vectors;
mod walk;
