//! Base Transport Header (BTH, WIRE.md A.2), 12 bytes.

/// The declaration (grammar: [`crate::layout`]).
macro_rules! bth {
    ($($then:tt)*) => { $crate::layout::header! { [$($then)*]
        /// BTH (WIRE.md A.2): OpCode 8 · SE 1 · M 1 · PadCnt 2 · TVer 4 · P_Key 16 · FECN 1 · BECN 1 ·
        /// reserved 6 · DestQP 24 · A 1 · reserved 7 · PSN 24.
        Bth / BthRepr, "bth", len 12, layer Bth {
            pub opcode:  u8   @ 0..1           => BthOpcode = "rocescope.bth.opcode", UInt(8), "BTH OpCode";
            pub se:      bool @ 1..2 bits 7    => BthSe = "rocescope.bth.se", Bool, "BTH Solicited Event";
            pub mig_req: bool @ 1..2 bits 6    => BthM = "rocescope.bth.m", Bool, "BTH MigReq";
            pub pad_cnt: u8   @ 1..2 bits 5..4 => BthPadcnt = "rocescope.bth.padcnt", UInt(8), "BTH Pad Count";
            pub tver:    u8   @ 1..2 bits 3..0 => BthTver = "rocescope.bth.tver", UInt(8), "BTH Transport Header Version";
            pub p_key:   u16  @ 2..4           => BthPKey = "rocescope.bth.p_key", UInt(16), "BTH Partition Key";
            pub fecn:    bool @ 4..5 bits 7    => BthFecn = "rocescope.bth.fecn", Bool, "BTH Forward ECN (reserved in RoCEv2)";
            pub becn:    bool @ 4..5 bits 6    => BthBecn = "rocescope.bth.becn", Bool, "BTH Backward ECN";
            /// The six reserved bits of byte 4, kept so NetRT's mark (bit 0) and odd captures round-trip.
            pub resv6:   u8   @ 4..5 bits 5..0;
            pub dest_qp: u32  @ 5..8           => BthDestqp = "rocescope.bth.destqp", UInt(24), "BTH Destination QP";
            pub ack_req: bool @ 8..9 bits 7    => BthA = "rocescope.bth.a", Bool, "BTH Acknowledge Request";
            pub psn:     u32  @ 9..12          => BthPsn = "rocescope.bth.psn", UInt(24), "BTH Packet Sequence Number";
        }
    } };
}
pub(crate) use bth;
