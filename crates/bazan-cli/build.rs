//! Build script of `bazan-cli`: links the `bazan` binary as a position-dependent executable
//! on Linux with glibc.
//!
//! The binary carries every format of the lake (Arrow, Parquet, ORC, Avro, Excel, …): as a
//! position-independent executable it has about 71,000 relative relocations in 1.5 MB of
//! `.data.rel.ro`, which the dynamic loader applies at every start, copying each of those
//! pages (about 380 page faults and 1 ms, more than half of `bazan --version`). Linked
//! without `-pie` the loader has nothing to relocate and those pages are read only when used.
//! The price is that the executable's own image is not placed at a random address (its
//! libraries, heap and stack still are), which suits a command-line data tool. Only the
//! final link changes; the library (used by the Python package) is untouched.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bin=bazan=-no-pie");
    }
}
