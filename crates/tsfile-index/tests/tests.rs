//! Integration tests of `tsfile-index`: the I/O trace of a device lookup, queries against the
//! full read on the corpus, index cycles, and bad input (truncations and overwrites of every
//! corpus file), and the writer's round trips.

mod alloc_peak;
mod bad_input;
mod check;
mod common;
mod index;
mod io_trace;
mod query;
mod writer_corpus;
mod writer_roundtrip;
