//! Integration tests of the facade: everything the CLI does, through `bazan` alone.

mod lake;
mod take;
mod tsfile;
