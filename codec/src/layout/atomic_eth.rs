//! AtomicETH (WIRE.md A.3), 28 bytes.

/// The declaration (grammar: [`crate::layout`]).
macro_rules! atomic_eth {
    ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
        /// AtomicETH: VA 64 · R_Key 32 · Swap (or Add) Data 64 · Compare Data 64.
        AtomicEth / AtomicEthRepr, "atomiceth", len 28, layer AtomicEth {
            pub va:       u64 @ 0..8   => AtomicethVa = "rocescope.atomiceth.va", UInt(64), "AtomicETH Virtual Address";
            pub r_key:    u32 @ 8..12  => AtomicethRKey = "rocescope.atomiceth.r_key", UInt(32), "AtomicETH Remote Key";
            pub swap_add: u64 @ 12..20 => AtomicethSwapdt = "rocescope.atomiceth.swapdt", UInt(64), "AtomicETH Swap (or Add) Data";
            pub compare:  u64 @ 20..28 => AtomicethCmpdt = "rocescope.atomiceth.cmpdt", UInt(64), "AtomicETH Compare Data";
        }
    } };
}
pub(crate) use atomic_eth;
