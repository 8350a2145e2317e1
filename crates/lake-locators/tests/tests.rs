//! Integration tests of `lake-locators`, one binary with one module per format.
mod columnar_conformance;
mod rows_conformance;
