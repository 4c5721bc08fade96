//! A global allocator that counts the calling thread's allocations, for the no-allocation tests
//! (`codec/tests/no_alloc.rs`, `pcap-tools/analysis/tests/filter_no_alloc.rs`, which includes
//! this file by path). A test file that includes it gets `allocs()`.

use std::alloc::{GlobalAlloc, Layout, System};

struct Counting;

thread_local! {
    /// Allocations made by this thread (the test harness's own threads allocate too).
    static MINE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Allocations made so far by the calling thread.
pub fn allocs() -> usize {
    MINE.with(|c| c.get())
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = MINE.try_with(|c| c.set(c.get() + 1));
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;
