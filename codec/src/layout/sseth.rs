//! SSNETH (DCP, WIRE.md B.1, pinned), 4 bytes.

/// The declaration (grammar: [`crate::layout`]).
macro_rules! sseth {
    ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
        /// SSNETH (DCP, WIRE.md B.1, pinned): SSN 24 · reserved 8.
        Sseth / SsethRepr, "sseth", len 4, layer Sseth {
            pub ssn: u32 @ 0..3 => DcpSsn = "rocescope.dcp.ssn", UInt(24), "DCP SEND sequence number (SSNETH)";
        }
    } };
}
pub(crate) use sseth;
