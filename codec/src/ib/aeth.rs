//! ACK Extended Transport Header (WIRE.md A.3), 4 bytes: the view and `Repr` from its declaration
//! (`crate::layout::aeth`), with the syndrome decoded into a typed value (bit 7 reserved; bits
//! 6..5 00 ACK (credit), 01 RNR NAK (timer), 10 reserved, 11 NAK (code)) and the values the walk
//! derives from it.

use core::ops::Range;

use super::bytes::FieldValue;
use super::fixed_header::fixed_header;
use crate::field::FieldId as F;
use crate::value::Value;

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

/// The syndrome of an all-zero byte: ACK with credit 0.
impl Default for Syndrome {
    fn default() -> Self {
        Syndrome::Ack { credit: 0 }
    }
}

/// The AETH declares its syndrome as this type: one byte.
impl FieldValue for Syndrome {
    const BITS: u32 = 8;
    #[inline]
    fn from_raw(raw: u64) -> Self {
        Syndrome::from_byte(raw as u8)
    }
    #[inline]
    fn to_raw(self) -> u64 {
        self.to_byte() as u64
    }
}

crate::layout::aeth!(fixed_header);

impl<T: AsRef<[u8]>> Aeth<T> {
    /// The syndrome byte as on the wire.
    #[inline]
    pub fn syndrome_byte(&self) -> u8 {
        self.syndrome().to_byte()
    }

    /// The walk's values derived from the syndrome, on the syndrome's byte (the header starting
    /// at `at`): `rocescope.aeth.kind`, then the credit, RNR timer or NAK code it carries.
    #[inline(always)]
    pub fn visit_derived<'a>(&self, at: usize, f: &mut impl FnMut(F, Value<'a>, Range<usize>)) {
        let s = self.syndrome();
        let r = const { AethRepr::LAYOUT.field("syndrome").bytes() };
        let r = at + r.start..at + r.end;
        f(F::AethKind, Value::Str(s.kind_name()), r.clone());
        match s {
            Syndrome::Ack { credit } => f(F::AethCredit, Value::UInt(credit as u64), r),
            Syndrome::RnrNak { timer } => f(F::AethRnrTimer, Value::UInt(timer as u64), r),
            Syndrome::Nak { code } => f(F::AethNakCode, Value::UInt(code as u64), r),
            Syndrome::Reserved(_) => {}
        }
    }
}
