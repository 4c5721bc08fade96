//! RDETH (Reliable Datagram ETH, WIRE.md A.3), 4 bytes.

/// The declaration (grammar: [`crate::layout`]).
macro_rules! rdeth {
    ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
        /// RDETH (Reliable Datagram ETH): reserved 8 · EE-Context 24.
        Rdeth / RdethRepr, "rdeth", len 4, layer Rdeth {
            pub eecnxt: u32 @ 1..4 => RdethEecnxt = "rocescope.rdeth.eecnxt", UInt(24), "RDETH EE-Context";
        }
    } };
}
pub(crate) use rdeth;
