//! LRH (Local Route Header, IBTA Vol. 1 §7.7; docs/link-types.md), 8 bytes: the first header of a
//! native InfiniBand packet (link type 247). RoCE has none (its ICRC puts 8 bytes of ones where it
//! would be).

/// The declaration (grammar: [`crate::layout`]).
macro_rules! lrh {
    ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
        /// LRH: VL 4 · LVer 4 · SL 4 · reserved 2 · LNH 2 · DLID 16 · reserved 5 · PktLen 11 · SLID 16.
        /// PktLen counts 4-byte words from the LRH's first byte through the ICRC (the VCRC is
        /// not counted).
        Lrh / LrhRepr, "lrh", len 8, layer Lrh {
            pub vl:      u8   @ 0..1 bits 7..4  => LrhVl = "rocescope.lrh.vl", UInt(8), "LRH Virtual Lane";
            pub lver:    u8   @ 0..1 bits 3..0  => LrhLver = "rocescope.lrh.lver", UInt(8), "LRH Link Version";
            pub sl:      u8   @ 1..2 bits 7..4  => LrhSl = "rocescope.lrh.sl", UInt(8), "LRH Service Level";
            /// The two reserved bits of byte 1, kept so odd captures round-trip.
            pub resv2:   u8   @ 1..2 bits 3..2;
            pub lnh:     u8   @ 1..2 bits 1..0  => LrhLnh = "rocescope.lrh.lnh", UInt(8), "LRH Link Next Header (2 local, 3 global)";
            pub dlid:    u16  @ 2..4            => LrhDlid = "rocescope.lrh.dlid", UInt(16), "LRH Destination Local ID";
            /// The five reserved bits before PktLen, kept so odd captures round-trip.
            pub resv5:   u16  @ 4..6 bits 15..11;
            pub pkt_len: u16  @ 4..6 bits 10..0 => LrhPktlen = "rocescope.lrh.pktlen", UInt(16), "LRH Packet Length in words, LRH..ICRC";
            pub slid:    u16  @ 6..8            => LrhSlid = "rocescope.lrh.slid", UInt(16), "LRH Source Local ID";
        }
    } };
}
pub(crate) use lrh;
