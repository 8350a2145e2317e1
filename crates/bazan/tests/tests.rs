//! Integration tests of the facade: everything the CLI does, through `bazan` alone.

mod lake;
mod latin1;
mod remote;
mod take;
mod tsfile;
mod views;
