//! DETH (Datagram ETH, WIRE.md A.3), 8 bytes.

/// The declaration (grammar: [`crate::layout`]).
macro_rules! deth {
    ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
        /// DETH (Datagram ETH): Q_Key 32 · reserved 8 · SrcQP 24.
        Deth / DethRepr, "deth", len 8, layer Deth {
            pub q_key:  u32 @ 0..4 => DethQKey = "rocescope.deth.q_key", UInt(32), "DETH Queue Key";
            reserved:   u8  @ 4..5 => DethReserved = "rocescope.deth.reserved", UInt(8), "DETH reserved byte";
            pub src_qp: u32 @ 5..8 => DethSrcqp = "rocescope.deth.srcqp", UInt(24), "DETH Source QP";
        }
    } };
}
pub(crate) use deth;
