//! ImmDt (Immediate Data, WIRE.md A.3), 4 bytes.

/// The declaration (grammar: [`crate::layout`]).
macro_rules! immdt {
    ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
        /// ImmDt: 32 bits of immediate data.
        ImmDt / ImmDtRepr, "immdt", len 4, layer ImmDt {
            pub imm: u32 @ 0..4 => Immdt = "rocescope.immdt", UInt(32), "Immediate Data";
        }
    } };
}
pub(crate) use immdt;
