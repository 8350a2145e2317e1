//! Integration tests of `tsfile-index`: the I/O trace of a device lookup, and bad input
//! (truncations and overwrites of every corpus file).

mod alloc_peak;
mod bad_input;
mod common;
mod io_trace;
mod writer_corpus;
mod writer_roundtrip;
