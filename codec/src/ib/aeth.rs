//! ACK Extended Transport Header (WIRE.md A.3): Syndrome 8 · MSN 24, with the syndrome decoded
//! into a typed value: bit 7 reserved; bits 6..5 00 ACK (credit), 01 RNR NAK (timer),
//! 10 reserved, 11 NAK (code).

use super::bytes::{get, put};

/// The meaning of an AETH syndrome byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Syndrome {
    /// ACK with a credit count (31 = invalid).
    Ack { credit: u8 },
    /// Receiver not ready, with the IBTA timer code.
    RnrNak { timer: u8 },
    /// NAK with a code (0 PSN sequence error, 1 invalid request, 2 remote access error,
    /// 3 remote operational error, 4 invalid RD request).
    Nak { code: u8 },
    /// Pattern 10, or bit 7 set: kept raw.
    Reserved(u8),
}

impl Syndrome {
    pub fn from_byte(b: u8) -> Self {
        if b & 0x80 != 0 {
            return Syndrome::Reserved(b);
        }
        let low = b & 0x1f;
        match (b >> 5) & 3 {
            0 => Syndrome::Ack { credit: low },
            1 => Syndrome::RnrNak { timer: low },
            3 => Syndrome::Nak { code: low },
            _ => Syndrome::Reserved(b),
        }
    }

    pub fn to_byte(self) -> u8 {
        match self {
            Syndrome::Ack { credit } => credit & 0x1f,
            Syndrome::RnrNak { timer } => 0x20 | (timer & 0x1f),
            Syndrome::Nak { code } => 0x60 | (code & 0x1f),
            Syndrome::Reserved(b) => b,
        }
    }

    /// The `rocescope.aeth.kind` name.
    pub fn kind_name(self) -> &'static str {
        match self {
            Syndrome::Ack { .. } => "ack",
            Syndrome::RnrNak { .. } => "rnr_nak",
            Syndrome::Nak { .. } => "nak",
            Syndrome::Reserved(_) => "reserved",
        }
    }

    /// NAK code 0, PSN sequence error.
    pub fn is_psn_seq_error(self) -> bool {
        self == Syndrome::Nak { code: 0 }
    }
}

super::bytes::header_view!(
    /// A view over the AETH.
    Aeth, len 4, Aeth
);

impl<T: AsRef<[u8]>> Aeth<T> {
    #[inline]
    pub fn syndrome_byte(&self) -> u8 {
        self.buffer.as_ref()[0]
    }
    #[inline]
    pub fn syndrome(&self) -> Syndrome {
        Syndrome::from_byte(self.syndrome_byte())
    }
    #[inline]
    pub fn msn(&self) -> u32 {
        get(&self.buffer.as_ref()[1..4]) as u32
    }
}

/// An owned AETH.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AethRepr {
    pub syndrome: Syndrome,
    pub msn: u32,
}

impl AethRepr {
    pub const LEN: usize = 4;

    pub fn parse<T: AsRef<[u8]>>(v: &Aeth<T>) -> Self {
        AethRepr { syndrome: v.syndrome(), msn: v.msn() }
    }
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0] = self.syndrome.to_byte();
        put(&mut buf[1..4], self.msn as u64);
    }
}
