//! Flor (WIRE.md B.3; seed 002 §5 and Appendix A.1).
//!
//! - **WRITE chunks**: the immediate of an RC or UC RDMA WRITE (Last or Only) with Immediate is
//!   the chunk's reliable sequence number, hint · message id · chunk offset
//!   (`Params::flor_split`, default 1 · 21 · 10).
//! - **SEND header**: 24 bytes at the start of the first (or only) packet of every RC/UC SEND:
//!   version, type (DATA, WRITE_RETX, ADDR_REQ, ADDR_RESP), flags, SEND reliable number, global
//!   number, original WRITE reliable number, body length; ADDR_REQ/ADDR_RESP bodies.
//! - **Software ACK**: a UD SEND Only of 24 + 4n bytes (1 ≤ n ≤ 32): QPN, entry bitmap, least
//!   acknowledged global number, ACK delay and n acknowledged numbers.

use core::ops::Range;

use super::sdr::bit_bytes;
use super::Ctx;
use crate::field::FieldId as F;
use crate::field::FLOR_SEND_VALUES;
use crate::ib::bytes::{get, put};
use crate::ib::{Hdr, RocePacket};
use crate::params::{FlorAckSetMeans, ImmSplit};
use crate::value::Value;
use crate::warning::{ExtProblem, Layer, Note, Warning, Warnings};

pub const VERSION: u8 = 1;
pub const SEND_HEADER_LEN: usize = 24;
/// ADDR_REQ body: message id 32 · reserved 32 · message length 64.
pub const ADDR_REQ_LEN: usize = 16;
/// ADDR_RESP body: message id 32 · R_Key 32 · remote address 64 · buffer length 64.
pub const ADDR_RESP_LEN: usize = 24;
/// SEND header flags.
pub const FLAG_HINT: u8 = 0x80;
pub const FLAG_RETX: u8 = 0x40;
/// ACK: fixed part, and the entry limit.
pub const ACK_HEADER_LEN: usize = 24;
pub const ACK_MAX_ENTRIES: usize = 32;
/// The UD SEND Only that carries ACKs.
pub const OPCODE_ACK: u8 = 0x64;

/// Byte offsets in the SEND header (one byte: `usize`; wider: `Range`).
pub mod send_field {
    use core::ops::Range;
    pub const VERSION: usize = 0;
    pub const TYPE: usize = 1;
    pub const FLAGS: usize = 2;
    pub const RESERVED: usize = 3;
    pub const RN: Range<usize> = 4..8;
    pub const GN: Range<usize> = 8..16;
    pub const WRITE_RN: Range<usize> = 16..20;
    pub const BODY_LEN: Range<usize> = 20..24;
}

/// Byte offsets in an ADDR_REQ body (after the SEND header).
pub mod addr_req_field {
    use core::ops::Range;
    pub const MID: Range<usize> = 0..4;
    pub const MSG_LEN: Range<usize> = 8..16;
}

/// Byte offsets in an ADDR_RESP body (after the SEND header).
pub mod addr_resp_field {
    use core::ops::Range;
    pub const MID: Range<usize> = 0..4;
    pub const R_KEY: Range<usize> = 4..8;
    pub const VA: Range<usize> = 8..16;
    pub const BUF_LEN: Range<usize> = 16..24;
}

/// Byte offsets in a software ACK; entry `i` is `ENTRY` moved by `i` entries.
pub mod ack_field {
    use core::ops::Range;
    pub const QPN: Range<usize> = 0..4;
    pub const BITMAP: Range<usize> = 4..8;
    pub const LEAST_GN: Range<usize> = 8..16;
    pub const DELAY_NS: Range<usize> = 16..24;
    pub const ENTRY: Range<usize> = super::ACK_HEADER_LEN..super::ACK_HEADER_LEN + 4;
    pub const ENTRY_LEN: usize = ENTRY.end - ENTRY.start;
}

/// The SEND header flag bits that are reserved (must be 0).
pub const FLAGS_RESERVED: u8 = !(FLAG_HINT | FLAG_RETX);
/// The bits of the ACK's QPN word above the 24-bit QP number (must be 0).
pub const ACK_QPN_HIGH: u32 = 0xff00_0000;

/// RC or UC RDMA WRITE Last or Only with Immediate: the packets whose immediate is a chunk's
/// reliable number.
#[inline]
pub const fn is_write_imm(opcode: u8) -> bool {
    matches!(opcode, 0x09 | 0x0b | 0x29 | 0x2b)
}

/// RC or UC SEND First (`Some(false)`) or Only, with or without Immediate (`Some(true)`): the
/// packets that start with a SEND header (`None`: any other opcode).
#[inline]
pub const fn send_header_only(opcode: u8) -> Option<bool> {
    match opcode {
        0x00 | 0x20 => Some(false),
        0x04 | 0x05 | 0x24 | 0x25 => Some(true),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// WRITE reliable numbers (the immediate).

/// A WRITE chunk's reliable sequence number: hint · message id · chunk offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteRn {
    /// Last WQE in the congestion window.
    pub hint: bool,
    pub mid: u32,
    /// In UNIT_SIZE units from the message's start.
    pub chunk_off: u32,
    /// The split it was read with.
    pub split: ImmSplit,
}

impl WriteRn {
    #[inline]
    pub fn from_imm(split: ImmSplit, imm: u32) -> WriteRn {
        let (hint, mid, chunk_off) = split.split(imm);
        WriteRn { hint: hint != 0, mid, chunk_off, split }
    }
    #[inline]
    pub fn imm(&self) -> u32 {
        imm(self.split, self.hint, self.mid, self.chunk_off)
    }

    /// Walks hint, mid and chunk_off of the 4 bytes at `at` (the hint only if the split gives it
    /// a bit).
    fn visit<'a>(&self, at: usize, with_hint: bool, f: &mut impl FnMut(F, Value<'a>, Range<usize>)) {
        let ImmSplit(h, m, o) = self.split;
        let (h, m, o) = (h as u32, m as u32, o as u32);
        if with_hint && h != 0 {
            f(F::FlorHint, Value::Bool(self.hint), bit_bytes(at, 0, h));
        }
        f(F::FlorMid, Value::UInt(self.mid as u64), bit_bytes(at, h, m));
        f(F::FlorChunkOff, Value::UInt(self.chunk_off as u64), bit_bytes(at, h + m, o));
    }
}

/// The immediate (reliable number) of a WRITE chunk.
#[inline]
pub fn imm(split: ImmSplit, hint: bool, mid: u32, chunk_off: u32) -> u32 {
    split.join(hint as u32, mid, chunk_off)
}

/// The chunk offset of a chunk at `chunk_addr` in a message at `msg_addr`.
#[inline]
pub fn chunk_off(msg_addr: u64, chunk_addr: u64, unit_size: u32) -> u32 {
    (chunk_addr.wrapping_sub(msg_addr) / unit_size.max(1) as u64) as u32
}

// ---------------------------------------------------------------------------------------------
// SEND header.

/// SEND header types (codes 1-4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum SendType {
    /// A small message.
    Data = 1,
    /// A SEND carrying (part of) a lost WRITE chunk.
    WriteRetx = 2,
    AddrReq = 3,
    AddrResp = 4,
}

impl SendType {
    pub fn from_code(code: u8) -> Option<SendType> {
        Some(match code {
            1 => SendType::Data,
            2 => SendType::WriteRetx,
            3 => SendType::AddrReq,
            4 => SendType::AddrResp,
            _ => return None,
        })
    }
    pub fn code(self) -> u8 {
        self as u8
    }
    /// `data`, `write_retx`, … (`rocescope.flor.send.type`).
    pub fn name(self) -> &'static str {
        FLOR_SEND_VALUES[self as usize - 1]
    }
    /// Body length the type requires (`None`: any).
    pub fn body_len(self) -> Option<usize> {
        match self {
            SendType::AddrReq => Some(ADDR_REQ_LEN),
            SendType::AddrResp => Some(ADDR_RESP_LEN),
            _ => None,
        }
    }
}

/// An address-exchange body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addr {
    /// Sender → receiver, before a large message.
    Req { mid: u32, msg_len: u64 },
    /// Receiver → sender: where the WRITE chunks go (VA = va + chunk_off · UNIT_SIZE).
    Resp { mid: u32, r_key: u32, va: u64, buf_len: u64 },
}

impl Addr {
    pub fn mid(&self) -> u32 {
        match *self {
            Addr::Req { mid, .. } | Addr::Resp { mid, .. } => mid,
        }
    }
}

/// A parsed SEND header. Its ADDR body, when present and consistent, is read from the payload
/// ([`SendHeader::addr`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendHeader {
    pub kind: SendType,
    pub flags: u8,
    /// SEND reliable sequence number.
    pub rn: u32,
    /// Global sequence number.
    pub gn: u64,
    /// The original WRITE reliable number (WRITE_RETX; 0 otherwise).
    pub write_rn: u32,
    /// Bytes of the message after the header.
    pub body_len: u32,
    /// An ADDR_REQ/ADDR_RESP body of the right length follows, fully captured.
    pub has_addr: bool,
    /// The split `write_rn` is read with.
    pub split: ImmSplit,
}

impl SendHeader {
    /// Last WQE in the congestion window (flags bit 7).
    pub fn hint(&self) -> bool {
        self.flags & FLAG_HINT != 0
    }
    /// Retransmission of a SEND (flags bit 6).
    pub fn retx(&self) -> bool {
        self.flags & FLAG_RETX != 0
    }
    /// `write_rn` split like a WRITE immediate (meaningful for WRITE_RETX).
    pub fn write(&self) -> WriteRn {
        WriteRn::from_imm(self.split, self.write_rn)
    }

    /// The ADDR_REQ/ADDR_RESP body, from the SEND payload (header included) this was parsed
    /// from.
    pub fn addr(&self, payload: &[u8]) -> Option<Addr> {
        if !self.has_addr {
            return None;
        }
        let body = payload.get(SEND_HEADER_LEN..)?;
        match self.kind {
            SendType::AddrReq => {
                use addr_req_field as a;
                let b = body.get(..ADDR_REQ_LEN)?;
                Some(Addr::Req { mid: get(&b[a::MID]) as u32, msg_len: get(&b[a::MSG_LEN]) })
            }
            SendType::AddrResp => {
                use addr_resp_field as a;
                let b = body.get(..ADDR_RESP_LEN)?;
                Some(Addr::Resp {
                    mid: get(&b[a::MID]) as u32,
                    r_key: get(&b[a::R_KEY]) as u32,
                    va: get(&b[a::VA]),
                    buf_len: get(&b[a::BUF_LEN]),
                })
            }
            _ => None,
        }
    }

    /// Parses the header at the start of a SEND payload: `payload` is what was captured of it,
    /// `wire_len` its length on the wire, `only` whether the packet is a SEND Only (the whole
    /// message) rather than a First. A wrong version or type, or fewer than 24 bytes, is a warning
    /// and `None`; `None` without a warning when the capture stops before the header's end.
    /// Inconsistencies in a complete header are warnings on a header that still decodes: reserved
    /// bits set, `write_rn` on a type other than WRITE_RETX, a body length that disagrees with the
    /// bytes present (Only: equal; First: at least) or with the ADDR type (whose body is then not
    /// decoded).
    pub fn parse(payload: &[u8], wire_len: usize, only: bool, split: ImmSplit, warnings: &mut Warnings) -> Option<SendHeader> {
        let warn = |w: &mut Warnings, what| w.push(Warning::Ext { layer: Layer::Flor, what });
        use send_field as sf;
        let b = &payload[..payload.len().min(wire_len)];
        if let Some(&v) = b.get(sf::VERSION) {
            if v != VERSION {
                warn(warnings, ExtProblem::Version { got: v, want: VERSION });
                return None;
            }
        }
        let kind = match b.get(sf::TYPE) {
            Some(&t) => match SendType::from_code(t) {
                Some(k) => Some(k),
                None => {
                    warn(warnings, ExtProblem::Type(t));
                    return None;
                }
            },
            None => None,
        };
        if wire_len < SEND_HEADER_LEN {
            warn(warnings, ExtProblem::Short { got: wire_len as u32, want: SEND_HEADER_LEN as u32 });
            return None;
        }
        if b.len() < SEND_HEADER_LEN {
            return None;
        }
        let kind = kind?;
        let h = SendHeader {
            kind,
            flags: b[sf::FLAGS],
            rn: get(&b[sf::RN]) as u32,
            gn: get(&b[sf::GN]),
            write_rn: get(&b[sf::WRITE_RN]) as u32,
            body_len: get(&b[sf::BODY_LEN]) as u32,
            has_addr: false,
            split,
        };
        if h.flags & FLAGS_RESERVED != 0 || b[sf::RESERVED] != 0 {
            warn(warnings, ExtProblem::Other(Note::FlorReserved));
        }
        if kind != SendType::WriteRetx && h.write_rn != 0 {
            warn(warnings, ExtProblem::Other(Note::FlorWriteRnNotRetx));
        }
        let present = wire_len - SEND_HEADER_LEN;
        let body_len = h.body_len as usize;
        if (only && body_len != present) || (!only && body_len < present) {
            warn(warnings, ExtProblem::Mismatch {
                field: F::FlorSendBodyLen,
                got: h.body_len,
                want: present.min(u32::MAX as usize) as u32,
            });
        }
        let mut h = h;
        if let Some(want) = kind.body_len() {
            if body_len != want {
                warn(warnings, ExtProblem::BodyLength { got: h.body_len, want: want as u32 });
            } else {
                h.has_addr = present >= want && b.len() >= SEND_HEADER_LEN + want;
            }
        }
        Some(h)
    }

    /// Walks the header's fields; `payload` is the SEND payload, `at` its offset in the frame.
    pub fn visit<'a>(&self, payload: &[u8], at: usize, f: &mut impl FnMut(F, Value<'a>, Range<usize>)) {
        use super::{byte_at, range_at};
        use send_field as sf;
        let u = |v: u64| Value::UInt(v);
        f(F::FlorSendType, Value::Str(self.kind.name()), byte_at(at, sf::TYPE));
        f(F::FlorSendFlags, u(self.flags as u64), byte_at(at, sf::FLAGS));
        f(F::FlorHint, Value::Bool(self.hint()), byte_at(at, sf::FLAGS));
        f(F::FlorSendRn, u(self.rn as u64), range_at(at, sf::RN));
        f(F::FlorSendGn, u(self.gn), range_at(at, sf::GN));
        f(F::FlorSendWriteRn, u(self.write_rn as u64), range_at(at, sf::WRITE_RN));
        if self.kind == SendType::WriteRetx {
            self.write().visit(at + sf::WRITE_RN.start, false, f);
        }
        f(F::FlorSendBodyLen, u(self.body_len as u64), range_at(at, sf::BODY_LEN));
        let b = at + SEND_HEADER_LEN;
        match self.addr(payload) {
            Some(Addr::Req { mid, msg_len }) => {
                f(F::FlorAddrMid, u(mid as u64), range_at(b, addr_req_field::MID));
                f(F::FlorAddrMsgLen, u(msg_len), range_at(b, addr_req_field::MSG_LEN));
            }
            Some(Addr::Resp { mid, r_key, va, buf_len }) => {
                use addr_resp_field as a;
                f(F::FlorAddrMid, u(mid as u64), range_at(b, a::MID));
                f(F::FlorAddrRKey, u(r_key as u64), range_at(b, a::R_KEY));
                f(F::FlorAddrVa, u(va), range_at(b, a::VA));
                f(F::FlorAddrBufLen, u(buf_len), range_at(b, a::BUF_LEN));
            }
            None => {}
        }
    }
}

/// Detection (WIRE.md B "Detection rules"): the SEND payload starts with a Flor header (version
/// 1, type 1-4) whose body length matches the bytes present (`only`: equal; a SEND First: at
/// least), with nothing else to warn about.
pub fn is_send_header(payload: &[u8], wire_len: usize, only: bool) -> bool {
    let mut w = Warnings::default();
    SendHeader::parse(payload, wire_len, only, ImmSplit(1, 21, 10), &mut w).is_some() && w.is_empty()
}

/// Builds a SEND header. Fields are written as given (tests build malformed headers too).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SendHeaderRepr {
    pub version: u8,
    pub kind: u8,
    pub flags: u8,
    pub reserved: u8,
    pub rn: u32,
    pub gn: u64,
    pub write_rn: u32,
    pub body_len: u32,
}

impl SendHeaderRepr {
    pub const LEN: usize = SEND_HEADER_LEN;

    /// Version 1, no flags, `write_rn` 0.
    pub fn new(kind: SendType, rn: u32, gn: u64, body_len: u32) -> Self {
        SendHeaderRepr { version: VERSION, kind: kind.code(), rn, gn, body_len, ..Default::default() }
    }
    /// Sets or clears the hint flag.
    pub fn with_hint(mut self, hint: bool) -> Self {
        self.flags = (self.flags & !FLAG_HINT) | if hint { FLAG_HINT } else { 0 };
        self
    }
    pub fn buffer_len(&self) -> usize {
        Self::LEN
    }
    /// Writes the 24 bytes into the start of `buf`.
    pub fn emit(&self, buf: &mut [u8]) {
        let b = &mut buf[..Self::LEN];
        b[0] = self.version;
        b[1] = self.kind;
        b[2] = self.flags;
        b[3] = self.reserved;
        put(&mut b[4..8], self.rn as u64);
        put(&mut b[8..16], self.gn);
        put(&mut b[16..20], self.write_rn as u64);
        put(&mut b[20..24], self.body_len as u64);
    }
}

/// Builds an ADDR_REQ / ADDR_RESP body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrRepr {
    Req { mid: u32, msg_len: u64 },
    Resp { mid: u32, r_key: u32, va: u64, buf_len: u64 },
}

impl AddrRepr {
    pub fn kind(&self) -> SendType {
        match self {
            AddrRepr::Req { .. } => SendType::AddrReq,
            AddrRepr::Resp { .. } => SendType::AddrResp,
        }
    }
    pub fn buffer_len(&self) -> usize {
        match self {
            AddrRepr::Req { .. } => ADDR_REQ_LEN,
            AddrRepr::Resp { .. } => ADDR_RESP_LEN,
        }
    }
    pub fn emit(&self, buf: &mut [u8]) {
        let b = &mut buf[..self.buffer_len()];
        match *self {
            AddrRepr::Req { mid, msg_len } => {
                put(&mut b[0..4], mid as u64);
                put(&mut b[4..8], 0);
                put(&mut b[8..16], msg_len);
            }
            AddrRepr::Resp { mid, r_key, va, buf_len } => {
                put(&mut b[0..4], mid as u64);
                put(&mut b[4..8], r_key as u64);
                put(&mut b[8..16], va);
                put(&mut b[16..24], buf_len);
            }
        }
    }
}

/// What follows the SEND header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendBody<'a> {
    Bytes(&'a [u8]),
    Addr(AddrRepr),
}

/// Builds a whole SEND message (header and body). Split it into packets of at most the MTU for
/// a multi-packet SEND; a small message is one SEND Only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SendRepr<'a> {
    pub header: SendHeaderRepr,
    pub body: SendBody<'a>,
}

impl<'a> SendRepr<'a> {
    /// A small message (DATA).
    pub fn data(rn: u32, gn: u64, hint: bool, body: &'a [u8]) -> Self {
        SendRepr {
            header: SendHeaderRepr::new(SendType::Data, rn, gn, body.len() as u32).with_hint(hint),
            body: SendBody::Bytes(body),
        }
    }
    /// A SEND carrying (part of) the lost WRITE chunk `write_rn`.
    pub fn write_retx(rn: u32, gn: u64, write_rn: u32, body: &'a [u8]) -> Self {
        let mut header = SendHeaderRepr::new(SendType::WriteRetx, rn, gn, body.len() as u32);
        header.write_rn = write_rn;
        SendRepr { header, body: SendBody::Bytes(body) }
    }
    /// ADDR_REQ or ADDR_RESP.
    pub fn addr(rn: u32, gn: u64, addr: AddrRepr) -> Self {
        SendRepr {
            header: SendHeaderRepr::new(addr.kind(), rn, gn, addr.buffer_len() as u32),
            body: SendBody::Addr(addr),
        }
    }
    pub fn buffer_len(&self) -> usize {
        SEND_HEADER_LEN
            + match self.body {
                SendBody::Bytes(b) => b.len(),
                SendBody::Addr(a) => a.buffer_len(),
            }
    }
    pub fn emit(&self, buf: &mut [u8]) {
        self.header.emit(buf);
        let b = &mut buf[SEND_HEADER_LEN..self.buffer_len()];
        match self.body {
            SendBody::Bytes(body) => b.copy_from_slice(body),
            SendBody::Addr(a) => a.emit(b),
        }
    }
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0; self.buffer_len()];
        self.emit(&mut v);
        v
    }
}

// ---------------------------------------------------------------------------------------------
// Software ACK.

/// What one ACK entry acknowledges.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acked {
    /// A SEND, by its global number (`least_gn` + entry).
    Send { gn: u64 },
    /// A WRITE chunk, by its reliable number as echoed (hint bit included).
    Write { rn: u32 },
}

impl Acked {
    /// The value `rocescope.flor.ack.acked` shows.
    pub fn value(&self) -> u64 {
        match *self {
            Acked::Send { gn } => gn,
            Acked::Write { rn } => rn as u64,
        }
    }
}

/// A parsed software ACK; the entries are read from the payload ([`Ack::acked`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ack {
    /// The data QP acknowledged.
    pub qpn: u32,
    pub bitmap: u32,
    pub least_gn: u64,
    pub delay_ns: u64,
    /// Number of entries (1-32).
    pub count: u8,
    /// The polarity the bitmap is read with.
    pub set_means: FlorAckSetMeans,
}

impl Ack {
    /// Parses an ACK payload (`payload` as captured, `wire_len` on the wire). A length other than
    /// 24 + 4n (1 ≤ n ≤ 32) is a warning and `None`; `None` without a warning when the capture
    /// stops inside the fixed part. Bitmap bits beyond entry n and a QPN above 24 bits are
    /// warnings on an ACK that still decodes.
    pub fn parse(payload: &[u8], wire_len: usize, set_means: FlorAckSetMeans, warnings: &mut Warnings) -> Option<Ack> {
        let warn = |w: &mut Warnings, what| w.push(Warning::Ext { layer: Layer::FlorAck, what });
        use ack_field as af;
        let n = wire_len.wrapping_sub(ACK_HEADER_LEN) / af::ENTRY_LEN;
        if wire_len < ACK_HEADER_LEN + af::ENTRY_LEN || !wire_len.is_multiple_of(af::ENTRY_LEN) || n > ACK_MAX_ENTRIES {
            warn(warnings, ExtProblem::Other(Note::FlorAckLength));
            return None;
        }
        let b = &payload[..payload.len().min(wire_len)];
        if b.len() < ACK_HEADER_LEN {
            return None;
        }
        let ack = Ack {
            qpn: get(&b[af::QPN]) as u32,
            bitmap: get(&b[af::BITMAP]) as u32,
            least_gn: get(&b[af::LEAST_GN]),
            delay_ns: get(&b[af::DELAY_NS]),
            count: n as u8,
            set_means,
        };
        if ack.qpn & ACK_QPN_HIGH != 0 {
            warn(warnings, ExtProblem::Other(Note::FlorAckQpnHigh));
        }
        let beyond = if n >= 32 { 0 } else { ack.bitmap & (u32::MAX >> n) };
        if beyond != 0 {
            warn(warnings, ExtProblem::Other(Note::FlorAckBitmapBeyond));
        }
        Some(ack)
    }

    /// Entry `i` is a SEND (bit 31 − i of the bitmap, read with the polarity).
    pub fn is_send(&self, i: usize) -> bool {
        let set = i < 32 && self.bitmap >> (31 - i) & 1 != 0;
        match self.set_means {
            FlorAckSetMeans::Send => set,
            FlorAckSetMeans::Write => !set,
        }
    }

    /// The raw entries, as far as captured.
    pub fn entries<'a>(&self, payload: &'a [u8]) -> impl Iterator<Item = u32> + 'a {
        use ack_field::{ENTRY, ENTRY_LEN};
        (0..self.count as usize)
            .map_while(move |i| payload.get(ENTRY.start + ENTRY_LEN * i..ENTRY.end + ENTRY_LEN * i))
            .map(|b| get(b) as u32)
    }

    /// What each entry acknowledges, as far as captured.
    pub fn acked<'a>(&self, payload: &'a [u8]) -> impl Iterator<Item = Acked> + 'a {
        let me = *self;
        self.entries(payload).enumerate().map(move |(i, e)| {
            if me.is_send(i) {
                Acked::Send { gn: me.least_gn.wrapping_add(e as u64) }
            } else {
                Acked::Write { rn: e }
            }
        })
    }

    /// Walks the ACK's fields; `at` is the payload's offset in the frame.
    pub fn visit<'a>(&self, payload: &'a [u8], at: usize, f: &mut impl FnMut(F, Value<'a>, Range<usize>)) {
        use super::range_at;
        use ack_field as af;
        let u = |v: u64| Value::UInt(v);
        f(F::FlorAckQpn, u(self.qpn as u64), range_at(at, af::QPN));
        if let Some(bm) = payload.get(af::BITMAP) {
            f(F::FlorAckBitmap, Value::Bytes(bm), range_at(at, af::BITMAP));
        }
        f(F::FlorAckLeastGn, u(self.least_gn), range_at(at, af::LEAST_GN));
        f(F::FlorAckDelayNs, u(self.delay_ns), range_at(at, af::DELAY_NS));
        f(F::FlorAckCount, u(self.count as u64), 0..0);
        for (i, a) in self.acked(payload).enumerate() {
            let e = at + af::ENTRY.start + af::ENTRY_LEN * i;
            f(F::FlorAckAcked, u(a.value()), e..e + af::ENTRY_LEN);
        }
    }
}

/// Detection (WIRE.md B "Detection rules"): a UD SEND payload of 24 + 4n bytes (1 ≤ n ≤ 32)
/// whose bitmap has no bit set beyond entry n (and whose QPN fits in 24 bits).
pub fn is_ack(payload: &[u8], wire_len: usize) -> bool {
    let mut w = Warnings::default();
    Ack::parse(payload, wire_len, FlorAckSetMeans::Send, &mut w).is_some() && w.is_empty()
}

/// The bitmap marking which entries are SENDs (entry 0 first) under a polarity.
pub fn ack_bitmap(is_send: impl IntoIterator<Item = bool>, set_means: FlorAckSetMeans) -> u32 {
    let mut bm = 0u32;
    for (i, s) in is_send.into_iter().take(32).enumerate() {
        let set = match set_means {
            FlorAckSetMeans::Send => s,
            FlorAckSetMeans::Write => !s,
        };
        if set {
            bm |= 1 << (31 - i);
        }
    }
    bm
}

/// Builds an ACK payload. Fields are written as given: `bitmap` is not derived from the
/// entries (see [`ack_bitmap`]), and any number of entries is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckRepr<'a> {
    pub qpn: u32,
    pub bitmap: u32,
    pub least_gn: u64,
    pub delay_ns: u64,
    /// Compressed SEND numbers (`gn − least_gn`) and WRITE reliable numbers.
    pub entries: &'a [u32],
}

impl AckRepr<'_> {
    pub fn buffer_len(&self) -> usize {
        ACK_HEADER_LEN + 4 * self.entries.len()
    }
    pub fn emit(&self, buf: &mut [u8]) {
        let b = &mut buf[..self.buffer_len()];
        put(&mut b[0..4], self.qpn as u64);
        put(&mut b[4..8], self.bitmap as u64);
        put(&mut b[8..16], self.least_gn);
        put(&mut b[16..24], self.delay_ns);
        for (i, e) in self.entries.iter().enumerate() {
            put(&mut b[24 + 4 * i..28 + 4 * i], *e as u64);
        }
    }
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0; self.buffer_len()];
        self.emit(&mut v);
        v
    }
}

// ---------------------------------------------------------------------------------------------
// The parsed extension.

/// What a Flor packet carries beyond the IBTA headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flor {
    /// A WRITE with Immediate: the chunk's reliable number.
    Write(WriteRn),
    /// The first or only packet of a SEND: its header.
    Send(SendHeader),
    /// A software ACK.
    Ack(Ack),
}

impl Flor {
    /// `None` for a packet Flor does not apply to (WRITEs without immediate, SEND Middle/Last,
    /// READs, …) and for a malformed header or ACK (with a warning).
    pub(super) fn parse(ctx: &Ctx<'_>, p: &RocePacket<'_>, warnings: &mut Warnings) -> Option<Flor> {
        let params = ctx.params;
        let op = p.opcode().0;
        if is_write_imm(op) {
            return p.immdt().map(|i| Flor::Write(WriteRn::from_imm(params.flor_split, i.imm())));
        }
        if let Some(only) = send_header_only(op) {
            return SendHeader::parse(p.payload(), p.payload_len(), only, params.flor_split, warnings).map(Flor::Send);
        }
        match op {
            OPCODE_ACK => Ack::parse(p.payload(), p.payload_len(), params.flor_ack_set_means, warnings).map(Flor::Ack),
            _ => None,
        }
    }

    pub(super) fn visit<'a>(&self, p: &RocePacket<'a>, base: usize, f: &mut impl FnMut(F, Value<'a>, Range<usize>)) {
        let at = base + p.payload_offset();
        match self {
            Flor::Write(w) => {
                if let Some(o) = p.header_offset(Hdr::ImmDt) {
                    w.visit(base + o, true, f);
                }
            }
            Flor::Send(h) => h.visit(p.payload(), at, f),
            Flor::Ack(a) => a.visit(p.payload(), at, f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_md_immediates() {
        let s = ImmSplit(1, 21, 10);
        assert_eq!(imm(s, false, 1, 0), 0x0000_0400);
        assert_eq!(imm(s, false, 1, 2), 0x0000_0402);
        assert_eq!(imm(s, true, 1, 2), 0x8000_0402);
        assert_eq!(WriteRn::from_imm(s, 0x8000_0402), WriteRn { hint: true, mid: 1, chunk_off: 2, split: s });
        assert_eq!(chunk_off(0x1000, 0x1000 + 2 * 4096, 4096), 2);
    }

    #[test]
    fn detection_helpers() {
        let data = SendRepr::data(1, 2, false, b"abcd").to_vec();
        assert!(is_send_header(&data, data.len(), true));
        assert!(!is_send_header(&data, data.len() + 1, true));
        assert!(is_send_header(&data[..26], 26, false));
        assert!(!is_send_header(&data, data.len() + 100, false));
        assert!(!is_send_header(b"\x01\x05", 30, true));
        let ack = AckRepr { qpn: 5, bitmap: 0x8000_0000, least_gn: 1, delay_ns: 2, entries: &[7] }.to_vec();
        assert!(is_ack(&ack, ack.len()));
        let beyond = AckRepr { bitmap: 0x4000_0000, ..AckRepr { qpn: 5, bitmap: 0, least_gn: 1, delay_ns: 2, entries: &[7] } }.to_vec();
        assert!(!is_ack(&beyond, beyond.len()));
        assert!(!is_ack(&ack[..26], 26));
    }

    #[test]
    fn ack_bitmap_polarity() {
        let kinds = [false, false, true, true];
        assert_eq!(ack_bitmap(kinds, FlorAckSetMeans::Send), 0x3000_0000);
        assert_eq!(ack_bitmap(kinds, FlorAckSetMeans::Write), 0xC000_0000);
        let a = Ack { qpn: 1, bitmap: 0x3000_0000, least_gn: 10, delay_ns: 0, count: 4, set_means: FlorAckSetMeans::Send };
        assert_eq!((0..4).map(|i| a.is_send(i)).collect::<Vec<_>>(), kinds);
        let b = Ack { bitmap: 0xC000_0000, set_means: FlorAckSetMeans::Write, ..a };
        assert_eq!((0..4).map(|i| b.is_send(i)).collect::<Vec<_>>(), kinds);
    }
}
