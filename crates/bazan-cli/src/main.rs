//! The `bazan` binary: the command line of `bazan_cli`.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    keep_freed_memory();
    bazan_cli::main_with_env_args()
}

/// Keeps memory that the command frees for its next allocations (glibc only).
///
/// glibc's malloc serves blocks of 128 KiB and more with `mmap` and unmaps them on free,
/// and trims the top of the heap once more than 128 KiB of it is free; both thresholds rise
/// to the size of the largest mapped block freed so far, up to 32 MiB (mallopt(3),
/// `M_MMAP_THRESHOLD`). A command that builds and drops batches of a few MB in turn (one
/// TsFile device after another, slices of a lake) would hand each batch's memory back to the
/// kernel and fault it in again, page by page, for the next: 1,000 of the 1,750 page faults
/// of `tsfile query --format arrow` on the 200,000-row conformance file. Allocating and
/// freeing one block of just under 32 MiB at start (one `mmap` and `munmap`; only the
/// block's header page is touched) raises both thresholds at once, so freed memory stays in
/// the heap. Other platforms and allocators see one short-lived reservation.
fn keep_freed_memory() {
    if cfg!(all(target_os = "linux", target_env = "gnu")) {
        std::hint::black_box(Vec::<u8>::with_capacity((32 << 20) - (1 << 16)));
    }
}
