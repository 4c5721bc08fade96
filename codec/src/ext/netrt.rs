//! NetRT (WIRE.md B.4; seed 003 §III): the switch-to-switch retransmission request (type 1:
//! ePSN and a 128-bit bitmap of PSNs held) and unfulfilled request (type 2), carried as
//! `BTH (OpCode 0xC0, configurable) · body · ICRC`, and the optional in-network retransmission
//! mark (bit 0 of BTH byte 4) on data packets.

use core::ops::Range;

use super::Ctx;
use crate::field::FieldId as F;
use crate::ib::bytes::get;
use crate::ib::bth::psn;
use crate::ib::packet::Layout;
use crate::ib::{BthRepr, RocePacket};
use crate::value::Value;
use crate::warning::{ExtProblem, Layer, Note, Warning, Warnings};

pub const TYPE_REQUEST: u8 = 1;
pub const TYPE_UNFULFILLED: u8 = 2;
pub const REQUEST_LEN: usize = 20;
pub const UNFULFILLED_LEN: usize = 4;

/// Byte offsets in a message body (`BITMAP`: requests only).
pub mod field {
    use core::ops::Range;
    pub const TYPE: usize = 0;
    /// The request's ePSN, the unfulfilled request's PSN.
    pub const PSN: Range<usize> = 1..4;
    pub const BITMAP: Range<usize> = 4..20;
}

/// The in-network retransmission mark: this bit of BTH byte 4 (data packets).
pub const RTX_MARK: u8 = 0x01;

#[inline]
pub(super) fn layout(ctx: &Ctx<'_>, opcode: u8) -> Layout {
    if opcode == ctx.params.netrt_opcode {
        Layout::ExtensionBody
    } else {
        Layout::Std
    }
}

/// What a packet of a NetRT flow carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Netrt {
    /// A data packet of the flow, with the in-network retransmission mark.
    Data { rtx_mark: bool },
    /// Retransmission request (type 1).
    Request { epsn: u32 },
    /// Unfulfilled request (type 2).
    Unfulfilled { psn: u32 },
}

/// The PSNs a retransmission request asks for: ePSN, then ePSN+1+i for every clear bit i below
/// the highest set bit of the 128-bit bitmap (bit 0 = least significant bit of the last byte).
pub fn requested(epsn: u32, bitmap: &[u8; 16]) -> impl Iterator<Item = u32> + '_ {
    let bits = u128::from_be_bytes(*bitmap);
    let top = if bits == 0 { 0 } else { 128 - bits.leading_zeros() };
    core::iter::once(epsn).chain((0..top).filter(move |i| bits >> i & 1 == 0).map(move |i| psn::add(epsn, 1 + i)))
}

impl Netrt {
    pub(super) fn parse(ctx: &Ctx<'_>, p: &RocePacket<'_>, warnings: &mut Warnings) -> Option<Netrt> {
        let bth = p.bth();
        if bth.opcode() != ctx.params.netrt_opcode {
            return Some(Netrt::Data { rtx_mark: bth.byte4() & RTX_MARK != 0 });
        }
        let warn = |w: &mut Warnings, what| w.push(Warning::Ext { layer: Layer::Netrt, what });
        if bth.se() || bth.mig_req() || bth.pad_cnt() != 0 || bth.tver() != 0 || bth.byte4() != 0 || bth.ack_req() {
            warn(warnings, ExtProblem::Other(Note::NetrtBthFlags));
        }
        let body_len = p.payload_len();
        let body = p.payload();
        let Some(&ty) = body.get(field::TYPE) else {
            // No body on the wire is a short message; one the snaplen cut, the frame says so.
            if body_len == 0 {
                warn(warnings, ExtProblem::Short { got: 0, want: UNFULFILLED_LEN as u32 });
            }
            return None;
        };
        let want = match ty {
            TYPE_REQUEST => REQUEST_LEN,
            TYPE_UNFULFILLED => UNFULFILLED_LEN,
            t => {
                warn(warnings, ExtProblem::Type(t));
                return None;
            }
        };
        if body_len != want {
            warn(warnings, ExtProblem::BodyLength { got: body_len as u32, want: want as u32 });
            return None;
        }
        if body.len() < want {
            return None; // truncated by the snaplen: the frame says so
        }
        let body_psn = get(&body[field::PSN]) as u32;
        if body_psn != bth.psn() {
            let field = if ty == TYPE_REQUEST { F::NetrtEpsn } else { F::NetrtUnfulfilledPsn };
            warn(warnings, ExtProblem::Mismatch { field, got: body_psn, want: bth.psn() });
        }
        Some(if ty == TYPE_REQUEST { Netrt::Request { epsn: body_psn } } else { Netrt::Unfulfilled { psn: body_psn } })
    }

    /// The request's bitmap, if this is a request.
    pub fn bitmap<'a>(&self, p: &RocePacket<'a>) -> Option<&'a [u8; 16]> {
        match self {
            Netrt::Request { .. } => p.payload().get(field::BITMAP).and_then(|b| b.try_into().ok()),
            _ => None,
        }
    }

    pub(super) fn visit<'a>(&self, p: &RocePacket<'a>, base: usize, f: &mut impl FnMut(F, Value<'a>, Range<usize>)) {
        use super::{byte_at, range_at};
        let body = base + p.payload_offset();
        match *self {
            Netrt::Data { rtx_mark } => {
                let byte4 = const { BthRepr::LAYOUT.field("resv6").bytes() };
                f(F::NetrtRtxMark, Value::Bool(rtx_mark), base + byte4.start..base + byte4.end)
            }
            Netrt::Request { epsn } => {
                f(F::NetrtType, Value::Str("request"), byte_at(body, field::TYPE));
                f(F::NetrtEpsn, Value::UInt(epsn as u64), range_at(body, field::PSN));
                if let Some(bm) = self.bitmap(p) {
                    f(F::NetrtBitmap, Value::Bytes(bm), range_at(body, field::BITMAP));
                    for psn in requested(epsn, bm) {
                        f(F::NetrtRequested, Value::UInt(psn as u64), range_at(body, field::BITMAP));
                    }
                }
            }
            Netrt::Unfulfilled { psn } => {
                f(F::NetrtType, Value::Str("unfulfilled"), byte_at(body, field::TYPE));
                f(F::NetrtUnfulfilledPsn, Value::UInt(psn as u64), range_at(body, field::PSN));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_md_worked_example() {
        // ePSN 0x000102, bitmap 0x0B (0x103, 0x104, 0x106 held) asks for 0x102 and 0x105.
        let mut bm = [0u8; 16];
        bm[15] = 0x0b;
        assert_eq!(requested(0x102, &bm).collect::<Vec<_>>(), [0x102, 0x105]);
        assert_eq!(requested(0xffffff, &[0; 16]).collect::<Vec<_>>(), [0xffffff]);
        let mut wrap = [0u8; 16];
        wrap[15] = 0b100;
        assert_eq!(requested(0xfffffe, &wrap).collect::<Vec<_>>(), [0xfffffe, 0xffffff, 0]);
    }
}

/// Builds a NetRT message (WIRE.md B.4): its body here; `NetrtRepr::roce` (in `build/netrt.rs`)
/// gives the whole RoCE packet with the pinned BTH (opcode, DestQP and PSN of the served flow;
/// SE, M, PadCnt, TVer, byte 4 and A all 0; P_Key as given).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetrtRepr {
    /// Retransmission request: ePSN and the 128-bit bitmap of PSNs ePSN+1+i held.
    Request { epsn: u32, bitmap: u128 },
    /// Unfulfilled request.
    Unfulfilled { psn: u32 },
}

impl NetrtRepr {
    /// The body's PSN (the BTH carries the same).
    pub fn psn(&self) -> u32 {
        match *self {
            NetrtRepr::Request { epsn, .. } => epsn,
            NetrtRepr::Unfulfilled { psn } => psn,
        }
    }
    pub fn buffer_len(&self) -> usize {
        match self {
            NetrtRepr::Request { .. } => REQUEST_LEN,
            NetrtRepr::Unfulfilled { .. } => UNFULFILLED_LEN,
        }
    }
    /// Writes the body (type · PSN · \[bitmap\]).
    pub fn emit(&self, buf: &mut [u8]) {
        let (ty, p) = match *self {
            NetrtRepr::Request { epsn, .. } => (TYPE_REQUEST, epsn),
            NetrtRepr::Unfulfilled { psn } => (TYPE_UNFULFILLED, psn),
        };
        buf[0] = ty;
        crate::ib::bytes::put(&mut buf[1..4], (p & psn::MASK) as u64);
        if let NetrtRepr::Request { bitmap, .. } = *self {
            buf[4..20].copy_from_slice(&bitmap.to_be_bytes());
        }
    }
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0; self.buffer_len()];
        self.emit(&mut v);
        v
    }
}
