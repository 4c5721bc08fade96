//! DCP (WIRE.md B.1; seed 000 §4.2-4.5): the 2-bit ToS tag, DCPETH (MSN · sRetryNo) after the
//! BTH of every RC SEND/WRITE/READ Request with tag 10, RETH in every WRITE packet, SSNETH in
//! SENDs and the last packet of a WRITE with Immediate, header-only packets (tag 11: BTH + 3
//! bytes of MSN, no ICRC), and ACKs (tag 01) whose AETH MSN is the receiver's eMSN.

use core::ops::Range;

use super::Ctx;
use crate::field::FieldId as F;
use crate::ib::packet::Layout;
use crate::ib::{AethRepr, Hdr, Opcode, RocePacket};
use crate::value::Value;

/// Tag values.
pub const TAG_NONE: u8 = 0b00;
pub const TAG_ACK: u8 = 0b01;
pub const TAG_DATA: u8 = 0b10;
pub const TAG_HO: u8 = 0b11;

/// The opcode whose AETH MSN is the receiver's eMSN under tag 01: RC Acknowledge.
pub const OPCODE_ACK: u8 = 0x11;
/// Bytes after the BTH of a header-only packet: the MSN.
pub const HO_MSN_LEN: usize = 3;

/// The tag of a ToS byte.
#[inline]
pub fn tag(tos: u8, shift: u8) -> u8 {
    tos.checked_shr(shift as u32).unwrap_or(0) & 3
}

/// Sets the tag bits of a ToS byte.
pub fn with_tag(tos: u8, shift: u8, tag: u8) -> u8 {
    let mask = 3u8.checked_shl(shift as u32).unwrap_or(0);
    (tos & !mask) | ((tag & 3).checked_shl(shift as u32).unwrap_or(0) & mask)
}

#[inline]
pub(super) fn layout(ctx: &Ctx<'_>, opcode: u8) -> Layout {
    let Some(tos) = ctx.tos else { return Layout::Std };
    match tag(tos, ctx.params.dcp_tag_shift) {
        TAG_HO => Layout::DcpHeaderOnly,
        TAG_DATA if Opcode(opcode).is_dcp_request() => Layout::DcpData,
        _ => Layout::Std,
    }
}

/// What a DCP packet carries beyond the IBTA headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dcp {
    pub tag: u8,
    /// Header-only (trimmed) packet.
    pub ho: bool,
    /// The eMSN of a DCP ACK (tag 01, RC Acknowledge).
    pub emsn: Option<u32>,
}

impl Dcp {
    /// `None` for a packet DCP does not apply to (tag 00, or RoCEv1).
    pub(super) fn parse(ctx: &Ctx<'_>, p: &RocePacket<'_>) -> Option<Dcp> {
        let tag = tag(ctx.tos?, ctx.params.dcp_tag_shift);
        if tag == TAG_NONE {
            return None;
        }
        let emsn = if tag == TAG_ACK && p.opcode().0 == OPCODE_ACK { p.aeth().map(|a| a.msn()) } else { None };
        Some(Dcp { tag, ho: tag == TAG_HO, emsn })
    }

    /// The message sequence number: from the DCPETH, or the header-only packet's 3 bytes.
    pub fn msn(&self, p: &RocePacket<'_>) -> Option<u32> {
        if self.ho {
            p.ho_msn()
        } else {
            p.dcpeth().map(|d| d.msn())
        }
    }

    pub(super) fn visit<'a>(&self, p: &RocePacket<'a>, base: usize, f: &mut impl FnMut(F, Value<'a>, Range<usize>)) {
        f(F::DcpTag, Value::UInt(self.tag as u64), 0..0);
        f(F::DcpHo, Value::Bool(self.ho), 0..0);
        if self.ho {
            if let Some(msn) = p.ho_msn() {
                f(F::DcpMsn, Value::UInt(msn as u64), base + 12..base + 15);
            }
        }
        if let (Some(d), Some(o)) = (p.dcpeth(), p.header_offset(Hdr::Dcpeth)) {
            d.visit(base + o, f);
        }
        if let (Some(s), Some(o)) = (p.sseth(), p.header_offset(Hdr::Sseth)) {
            s.visit(base + o, f);
        }
        if let (Some(e), Some(o)) = (self.emsn, p.header_offset(Hdr::Aeth)) {
            let msn = const { AethRepr::LAYOUT.field("msn").bytes() };
            f(F::DcpEmsn, Value::UInt(e as u64), base + o + msn.start..base + o + msn.end);
        }
    }
}
