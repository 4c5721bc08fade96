//! IRN's selective NAK tail (WIRE.md A.3, pinned), 4 bytes after the AETH.

/// The declaration (grammar: [`crate::layout`]).
macro_rules! irn_sack {
    ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
        /// IRN's selective NAK tail (WIRE.md A.3, pinned): reserved 8 · SACK PSN 24, after the AETH.
        IrnSack / IrnSackRepr, "irn_sack", len 4, layer IrnSack {
            pub sack_psn: u32 @ 1..4 => IrnSackPsn = "rocescope.irn.sack_psn", UInt(24), "IRN selective NAK: PSN of the out-of-order packet that triggered it";
        }
    } };
}
pub(crate) use irn_sack;
