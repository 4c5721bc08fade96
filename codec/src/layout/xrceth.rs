//! XRCETH (WIRE.md A.3), 4 bytes.

/// The declaration (grammar: [`crate::layout`]).
macro_rules! xrceth {
    ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
        /// XRCETH: reserved 8 · XRC SRQ 24.
        Xrceth / XrcethRepr, "xrceth", len 4, layer Xrceth {
            pub xrc_srq: u32 @ 1..4 => XrcethXrcsrq = "rocescope.xrceth.xrcsrq", UInt(24), "XRCETH XRC Shared Receive Queue";
        }
    } };
}
pub(crate) use xrceth;
