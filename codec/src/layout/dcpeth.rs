//! DCPETH (DCP, WIRE.md B.1, pinned), 4 bytes right after the BTH.
//!
//! DCP's extension walks these fields (`ext/dcp.rs`), which also shows a header-only packet's
//! MSN as `rocescope.dcp.msn`.

/// The declaration (grammar: [`crate::layout`]).
macro_rules! dcpeth {
    ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
        /// DCPETH (DCP, WIRE.md B.1, pinned): MSN 24 · sRetryNo 8, right after the BTH.
        Dcpeth / DcpethRepr, "dcpeth", len 4, layer Dcpeth {
            pub msn:      u32 @ 0..3 => DcpMsn = "rocescope.dcp.msn", UInt(24), "DCP message sequence number (DCPETH, or the header-only packet's 3 bytes)";
            pub sretryno: u8  @ 3..4 => DcpSretryno = "rocescope.dcp.sretryno", UInt(8), "DCP sender retry number (DCPETH)";
        }
    } };
}
pub(crate) use dcpeth;
