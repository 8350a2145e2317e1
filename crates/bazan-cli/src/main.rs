//! The `bazan` binary: the command line of `bazan_cli`.
#![forbid(unsafe_code)]

/// mimalloc serves the command's allocations, as datafusion-cli's: it keeps freed memory
/// for the next allocations (glibc's malloc hands blocks of 128 KiB and more back to the
/// kernel on free, and every batch of the next file faults them in again) and its per-thread
/// small-object pages make the many short allocations of a scan cheap. Measured on
/// `group by` over the Parquet files of `cargo xtask bench sql`: 15% less CPU than glibc.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    bazan_cli::main_with_env_args()
}
