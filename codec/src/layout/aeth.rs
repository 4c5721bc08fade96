//! AETH (ACK Extended Transport Header, WIRE.md A.3), 4 bytes.
//!
//! The syndrome's derived values (`rocescope.aeth.kind`, `.credit`, `.rnr_timer`, `.nak_code`)
//! are computed beside the view, in `ib/aeth.rs`.

/// The declaration (grammar: [`crate::layout`]).
macro_rules! aeth {
    ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
        /// AETH (ACK ETH): Syndrome 8 · MSN 24.
        Aeth / AethRepr, "aeth", len 4, layer Aeth {
            /// The syndrome byte, typed (`Syndrome::from_byte`); the walk shows the byte as is.
            pub syndrome: Syndrome @ 0..1 => AethSyndrome = "rocescope.aeth.syndrome", UInt(8), "AETH Syndrome byte";
            pub msn:      u32      @ 1..4 => AethMsn = "rocescope.aeth.msn", UInt(24), "AETH Message Sequence Number";
        }
    } };
}
pub(crate) use aeth;
