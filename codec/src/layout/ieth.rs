//! IETH (Invalidate ETH, WIRE.md A.3), 4 bytes.

/// The declaration (grammar: [`crate::layout`]).
macro_rules! ieth {
    ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
        /// IETH (Invalidate ETH): R_Key 32.
        Ieth / IethRepr, "ieth", len 4, layer Ieth {
            pub r_key: u32 @ 0..4 => IethRKey = "rocescope.ieth.r_key", UInt(32), "IETH Remote Key to invalidate";
        }
    } };
}
pub(crate) use ieth;
