//! Integration tests of `tsfile-index`: the I/O trace of a device lookup, the conformance
//! corpus read end to end, and bad input (truncations and overwrites of every corpus file).

mod common;
mod io_trace;
mod writer_corpus;
