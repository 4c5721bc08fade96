//! A cache prefetch hint: the hot loops (the capture reader, the flows' PSN windows) read memory
//! the hardware prefetcher does not bring in ahead (records in page-cache pages, and slots of
//! 128 flows' windows touched once per lap), and each such first touch otherwise stalls the
//! thread for a trip to memory. A hint never faults and changes no result.

/// Asks for the cache line holding `p` to be brought into the cache (a no-op where the target
/// has no stable hint).
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHh is a hint: it reads nothing architecturally and never faults, whatever
    // the address (SSE, which it needs, is part of x86-64's baseline).
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
