//! RETH (RDMA ETH, WIRE.md A.3), 16 bytes.

/// The declaration (grammar: [`crate::layout`]).
macro_rules! reth {
    ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
        /// RETH (RDMA ETH): VA 64 · R_Key 32 · DMA Length 32.
        Reth / RethRepr, "reth", len 16, layer Reth {
            pub va:      u64 @ 0..8   => RethVa = "rocescope.reth.va", UInt(64), "RETH Virtual Address";
            pub r_key:   u32 @ 8..12  => RethRKey = "rocescope.reth.r_key", UInt(32), "RETH Remote Key";
            pub dma_len: u32 @ 12..16 => RethDmalen = "rocescope.reth.dmalen", UInt(32), "RETH DMA Length";
        }
    } };
}
pub(crate) use reth;
