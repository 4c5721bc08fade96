//! Base Transport Header (WIRE.md A.2), 12 bytes:
//! OpCode 8 · SE 1 · M 1 · PadCnt 2 · TVer 4 · P_Key 16 · FECN 1 · BECN 1 · reserved 6 ·
//! DestQP 24 · A 1 · reserved 7 · PSN 24.

use super::bytes::{get, put};

/// Byte ranges of the BTH fields.
mod field {
    pub const OPCODE: usize = 0;
    pub const FLAGS: usize = 1;
    pub const P_KEY: core::ops::Range<usize> = 2..4;
    pub const ECN: usize = 4;
    pub const DEST_QP: core::ops::Range<usize> = 5..8;
    pub const ACK: usize = 8;
    pub const PSN: core::ops::Range<usize> = 9..12;
}

super::bytes::header_view!(
    /// A view over the BTH.
    Bth, len 12, Bth
);

impl<T: AsRef<[u8]>> Bth<T> {
    #[inline]
    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    #[inline]
    pub fn opcode(&self) -> u8 {
        self.b()[field::OPCODE]
    }
    #[inline]
    pub fn se(&self) -> bool {
        self.b()[field::FLAGS] & 0x80 != 0
    }
    #[inline]
    pub fn mig_req(&self) -> bool {
        self.b()[field::FLAGS] & 0x40 != 0
    }
    #[inline]
    pub fn pad_cnt(&self) -> u8 {
        (self.b()[field::FLAGS] >> 4) & 3
    }
    #[inline]
    pub fn tver(&self) -> u8 {
        self.b()[field::FLAGS] & 0x0f
    }
    #[inline]
    pub fn p_key(&self) -> u16 {
        get(&self.b()[field::P_KEY]) as u16
    }
    #[inline]
    pub fn fecn(&self) -> bool {
        self.b()[field::ECN] & 0x80 != 0
    }
    #[inline]
    pub fn becn(&self) -> bool {
        self.b()[field::ECN] & 0x40 != 0
    }
    /// Byte 4 as a whole (FECN, BECN and the six reserved bits; NetRT's mark is bit 0).
    #[inline]
    pub fn byte4(&self) -> u8 {
        self.b()[field::ECN]
    }
    #[inline]
    pub fn dest_qp(&self) -> u32 {
        get(&self.b()[field::DEST_QP]) as u32
    }
    #[inline]
    pub fn ack_req(&self) -> bool {
        self.b()[field::ACK] & 0x80 != 0
    }
    #[inline]
    pub fn psn(&self) -> u32 {
        get(&self.b()[field::PSN]) as u32
    }
}

/// An owned BTH.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BthRepr {
    pub opcode: u8,
    pub se: bool,
    pub mig_req: bool,
    pub pad_cnt: u8,
    pub tver: u8,
    pub p_key: u16,
    pub fecn: bool,
    pub becn: bool,
    /// The six reserved bits of byte 4 (bits 5..0), kept so NetRT's mark and odd captures
    /// round-trip.
    pub resv6: u8,
    pub dest_qp: u32,
    pub ack_req: bool,
    pub psn: u32,
}

impl BthRepr {
    pub const LEN: usize = 12;

    pub fn parse<T: AsRef<[u8]>>(v: &Bth<T>) -> Self {
        BthRepr {
            opcode: v.opcode(),
            se: v.se(),
            mig_req: v.mig_req(),
            pad_cnt: v.pad_cnt(),
            tver: v.tver(),
            p_key: v.p_key(),
            fecn: v.fecn(),
            becn: v.becn(),
            resv6: v.byte4() & 0x3f,
            dest_qp: v.dest_qp(),
            ack_req: v.ack_req(),
            psn: v.psn(),
        }
    }

    pub fn emit(&self, buf: &mut [u8]) {
        buf[field::OPCODE] = self.opcode;
        buf[field::FLAGS] = (self.se as u8) << 7
            | (self.mig_req as u8) << 6
            | (self.pad_cnt & 3) << 4
            | (self.tver & 0x0f);
        put(&mut buf[field::P_KEY], self.p_key as u64);
        buf[field::ECN] = (self.fecn as u8) << 7 | (self.becn as u8) << 6 | (self.resv6 & 0x3f);
        put(&mut buf[field::DEST_QP], self.dest_qp as u64);
        buf[field::ACK] = (self.ack_req as u8) << 7;
        put(&mut buf[field::PSN], self.psn as u64);
    }
}

/// PSN arithmetic modulo 2^24 (WIRE.md A.2).
pub mod psn {
    pub const MASK: u32 = 0x00ff_ffff;

    /// `a + n` modulo 2^24.
    #[inline]
    pub fn add(a: u32, n: u32) -> u32 {
        a.wrapping_add(n) & MASK
    }

    /// Signed distance `b - a` in serial-number arithmetic (range -2^23 .. 2^23).
    #[inline]
    pub fn diff(a: u32, b: u32) -> i32 {
        ((b.wrapping_sub(a) << 8) as i32) >> 8
    }

    /// `a` precedes `b` in serial-number order.
    #[inline]
    pub fn lt(a: u32, b: u32) -> bool {
        diff(a, b) > 0
    }
}
