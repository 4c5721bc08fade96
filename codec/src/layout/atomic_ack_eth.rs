//! AtomicAckETH (WIRE.md A.3), 8 bytes.

/// The declaration (grammar: [`crate::layout`]).
macro_rules! atomic_ack_eth {
    ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
        /// AtomicAckETH: original remote data 64.
        AtomicAckEth / AtomicAckEthRepr, "atomicacketh", len 8, layer AtomicAckEth {
            pub orig_rem_data: u64 @ 0..8 => AtomicackethOrigremdt = "rocescope.atomicacketh.origremdt", UInt(64), "AtomicAckETH Original Remote Data";
        }
    } };
}
pub(crate) use atomic_ack_eth;
