//! Links the `bazan` binary as a position-dependent executable on Linux.
//!
//! A position-independent executable (the toolchain's default) is relocated by the dynamic
//! loader at every start: about 86,000 relative relocations for this binary, written into
//! 1.7 MB of `.data.rel.ro`, so that every run faults in and copies those pages before
//! `main`. That was two thirds of `bazan --version` (docs/benchmarks.md, start-up). Linked
//! with `-no-pie`, the addresses are fixed at link time and the pages are read lazily from
//! the page cache like the code. The cost is that the binary's own code and data load at a
//! fixed address (shared libraries, heap and stack stay randomized), as Go binaries do by
//! default. Only the binary changes: the crate's library and every dependency are compiled
//! as before, so nothing is rebuilt for it.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
