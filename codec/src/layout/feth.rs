//! FETH (FLUSH ETH, IBTA 1.5; WIRE.md A.3), 4 bytes.

/// The declaration (grammar: [`crate::layout`]).
macro_rules! feth {
    ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
        /// FETH (FLUSH ETH): reserved 26 · selectivity level 2 · placement type 4.
        Feth / FethRepr, "feth", len 4, layer Feth {
            /// Selectivity level.
            pub sel: u8 @ 3..4 bits 5..4 => FethSel = "rocescope.feth.sel", UInt(8), "FETH selectivity level";
            /// Placement type.
            pub plt: u8 @ 3..4 bits 3..0 => FethPlt = "rocescope.feth.plt", UInt(8), "FETH placement type";
        }
    } };
}
pub(crate) use feth;
