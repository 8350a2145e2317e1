//! A global allocator for the test binary that records the largest single allocation made by
//! the current thread, so the bad-input test can show that no length read from a file drives
//! a huge allocation (other tests of the binary run on other threads and are not counted).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct PeakAlloc;

thread_local! {
    // `const` initialisation and no destructor: safe to touch from inside the allocator.
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

fn record(size: usize) {
    let _ = PEAK.try_with(|p| p.set(p.get().max(size)));
}

// SAFETY: every call is forwarded unchanged to the system allocator; only a counter is added.
unsafe impl GlobalAlloc for PeakAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: same layout contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: PeakAlloc = PeakAlloc;

/// Forgets the peak recorded so far on this thread.
pub(crate) fn reset() {
    PEAK.with(|p| p.set(0));
}

/// The largest single allocation of this thread since the last [`reset`].
pub(crate) fn peak() -> usize {
    PEAK.with(Cell::get)
}
