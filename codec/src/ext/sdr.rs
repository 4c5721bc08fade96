//! SDR-RDMA (WIRE.md B.2; seed 001 §3.2-4).
//!
//! - **Data**: every packet is a UC RDMA WRITE Only with Immediate (0x2B) whose immediate is split
//!   (`Params::sdr_split`, default 10 · 18 · 4) into message id · packet offset · user-immediate
//!   fragment.
//! - **Control**: the whole payload of a UC SEND Only (0x24) or UD SEND Only (0x64): magic 0x53,
//!   version 1, type (CTS, SR_ACK, SR_NACK, EC_ACK, EC_NACK), flags, msg_seq and a body whose
//!   length follows from the type. Anything else is a warning, never a guess.
//!
//! The per-flow state (the user immediate rebuilt from its fragments, the RETH VA cross-check) is
//! the stateful decoder's: `crate::decoder::SdrTracker`.

use core::ops::Range;

use super::Ctx;
use crate::field::FieldId as F;
use crate::field::SDR_CTRL_VALUES;
use crate::ib::bytes::{get, put};
use crate::ib::{Hdr, RocePacket};
use crate::params::{ImmSplit, Params};
use crate::value::Value;
use crate::warning::{ExtProblem, Layer, Note, Warning, Warnings};

/// BTH OpCode of a data packet: UC RDMA WRITE Only with Immediate.
pub const OPCODE_DATA: u8 = 0x2b;
/// BTH OpCodes of a control message: UC SEND Only, UD SEND Only.
pub const OPCODE_CTRL_UC: u8 = 0x24;
pub const OPCODE_CTRL_UD: u8 = 0x64;
/// First byte of every control message ('S').
pub const MAGIC: u8 = 0x53;
pub const VERSION: u8 = 1;
/// Control header: magic, version, type, flags, msg_seq.
pub const CTRL_HEADER_LEN: usize = 8;
/// Byte offsets in a control message: the header (all types), then the body of each type
/// (`SR_ACK`'s bitmap from `SACK` on; `SR_NACK` / `EC_NACK` index `i` is `INDEX` moved by `i`
/// indices).
pub mod ctrl_field {
    use core::ops::Range;
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 1;
    pub const TYPE: usize = 2;
    pub const FLAGS: usize = 3;
    pub const MSG_SEQ: Range<usize> = 4..8;
    /// CTS.
    pub const BUF_LEN: Range<usize> = 8..16;
    /// SR_ACK.
    pub const CUM_ACK: Range<usize> = 8..12;
    pub const SACK_BITS: Range<usize> = 12..16;
    pub const SACK: core::ops::RangeFrom<usize> = 16..;
    /// SR_NACK, EC_NACK.
    pub const COUNT: Range<usize> = 8..12;
    pub const INDEX: Range<usize> = 12..16;
    pub const INDEX_LEN: usize = INDEX.end - INDEX.start;
}

/// The fixed part of a control message's body (after the 8-byte header): what the type always
/// carries before its variable part.
pub const fn ctrl_body_fixed(kind: CtrlType) -> usize {
    match kind {
        CtrlType::Cts => ctrl_field::BUF_LEN.end - CTRL_HEADER_LEN,
        CtrlType::SrAck => ctrl_field::SACK.start - CTRL_HEADER_LEN,
        CtrlType::SrNack | CtrlType::EcNack => ctrl_field::INDEX.start - CTRL_HEADER_LEN,
        CtrlType::EcAck => 0,
    }
}

/// Whether an opcode carries SDR control messages (UC or UD SEND Only).
#[inline]
pub const fn is_ctrl_opcode(opcode: u8) -> bool {
    opcode == OPCODE_CTRL_UC || opcode == OPCODE_CTRL_UD
}

/// The MTU assumed when neither configured nor seen (WIRE.md B.2).
pub const DEFAULT_MTU: u32 = 4096;

/// Bytes of an SR_ACK bitmap of `sack_bits` bits.
#[inline]
pub fn sack_len(sack_bits: u32) -> usize {
    (sack_bits as usize).div_ceil(8)
}

/// Byte range (relative to `at`) holding bits `start .. start + width` of a big-endian 32-bit
/// word, bit 0 being its most significant bit.
#[inline]
pub(super) fn bit_bytes(at: usize, start: u32, width: u32) -> Range<usize> {
    let first = (start / 8).min(4) as usize;
    if width == 0 {
        return at + first..at + first;
    }
    at + first..at + (start.saturating_add(width).div_ceil(8)).min(4) as usize
}

// ---------------------------------------------------------------------------------------------
// Data packets.

/// Number of user-immediate fragments `F = 32 / FR` of a split, `None` when the split carries no
/// fragments (FR = 0) or FR does not divide 32.
#[inline]
pub fn fragment_count(split: ImmSplit) -> Option<u32> {
    let fr = split.2 as u32;
    (fr != 0 && 32 % fr == 0).then(|| 32 / fr)
}

/// The packet offsets of chunk `c` in chunks of `n` packets (`sdr_chunk_packets`; 0 is 1):
/// `c·n … c·n + n − 1`, as control messages name them (WIRE.md B.2; a short last chunk's past
/// the send's end name no packet).
#[inline]
pub fn chunk_packets(c: u32, n: u32) -> core::ops::Range<u32> {
    let n = n.max(1);
    c.saturating_mul(n)..c.saturating_mul(n).saturating_add(n)
}

/// Erasure coding: the message sequence number of data submessage `j` of the message whose first
/// send is `base` (its sends go D0, P0, D1, P1, …: D_j is `base + 2j`, modulo 2^32 as on the
/// wire), as an EC_NACK's indices name them (WIRE.md B.2).
#[inline]
pub fn ec_data_send(base: u32, j: u32) -> u32 {
    base.wrapping_add(j.wrapping_mul(2))
}

/// The message id of message sequence number `seq`: `seq mod 2^id_bits` (WIRE.md B.2; the
/// immediate carries the id, control messages the whole sequence number).
#[inline]
pub fn msg_id(seq: u32, id_bits: u8) -> u32 {
    if id_bits >= 32 {
        seq
    } else {
        seq & ((1u32 << id_bits) - 1)
    }
}

/// The fragment of `user_imm` that the packet at offset `pkt_off` carries: fragment
/// `j = pkt_off mod F`, `(user_imm >> (32 − FR·(j+1))) & (2^FR − 1)` (WIRE.md B.2); 0 when the
/// split carries no fragments.
pub fn fragment(split: ImmSplit, user_imm: u32, pkt_off: u32) -> u32 {
    let Some(f) = fragment_count(split) else { return 0 };
    let fr = split.2 as u32;
    let j = pkt_off % f;
    let shift = 32 - fr * (j + 1);
    (((user_imm as u64) >> shift) & ((1u64 << fr) - 1)) as u32
}

/// The immediate of a data packet: `msg_id · pkt_off · frag` joined by the split.
#[inline]
pub fn data_imm(split: ImmSplit, msg_id: u32, pkt_off: u32, frag: u32) -> u32 {
    split.join(msg_id, pkt_off, frag)
}

/// The MTU the VA check uses: the configured one, else `seen_max` (the largest DMA length of the
/// flow so far), else [`DEFAULT_MTU`].
#[inline]
pub fn effective_mtu(params: &Params, seen_max: u32) -> u32 {
    match params.sdr_mtu {
        Some(m) if m != 0 => m,
        _ if seen_max != 0 => seen_max,
        _ => DEFAULT_MTU,
    }
}

/// The maximum message size the VA layout uses: the configured one, else `2^OFF · mtu`.
#[inline]
pub fn max_message(params: &Params, mtu: u32) -> u128 {
    match params.sdr_max_message {
        Some(m) => m as u128,
        None => (mtu as u128) << params.sdr_split.1.min(64),
    }
}

/// The RETH VA of the packet at `pkt_off` of message `msg_id`: `msg_id · max_message_bytes +
/// pkt_off · MTU` (WIRE.md B.2), `None` if it does not fit in 64 bits.
pub fn expected_va(params: &Params, mtu: u32, msg_id: u32, pkt_off: u32) -> Option<u64> {
    let va = (msg_id as u128).checked_mul(max_message(params, mtu))?.checked_add(pkt_off as u128 * mtu as u128)?;
    u64::try_from(va).ok()
}

/// What the immediate of a data packet says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Data {
    pub msg_id: u32,
    pub pkt_off: u32,
    /// The user-immediate fragment (FR bits).
    pub frag: u32,
    /// The split it was read with.
    pub split: ImmSplit,
}

impl Data {
    /// Splits an immediate.
    #[inline]
    pub fn from_imm(split: ImmSplit, imm: u32) -> Data {
        let (msg_id, pkt_off, frag) = split.split(imm);
        Data { msg_id, pkt_off, frag, split }
    }
    /// The immediate back.
    #[inline]
    pub fn imm(&self) -> u32 {
        self.split.join(self.msg_id, self.pkt_off, self.frag)
    }
}

/// Builds SDR data packets (tests, fuzz seeds, the simulator); `DataRepr::roce`, the whole RoCE
/// packet, is in `build/sdr.rs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataRepr {
    pub msg_id: u32,
    pub pkt_off: u32,
    /// The user-immediate fragment this packet carries (see [`DataRepr::new`]).
    pub frag: u32,
    /// RETH R_Key (the receiver's root indirect key).
    pub r_key: u32,
}

impl DataRepr {
    /// The packet at `pkt_off` of message `msg_id`, carrying its fragment of `user_imm`.
    pub fn new(split: ImmSplit, msg_id: u32, pkt_off: u32, user_imm: u32) -> DataRepr {
        DataRepr { msg_id, pkt_off, frag: fragment(split, user_imm, pkt_off), r_key: 0 }
    }
    /// The immediate.
    pub fn imm(&self, split: ImmSplit) -> u32 {
        data_imm(split, self.msg_id, self.pkt_off, self.frag)
    }
    /// The RETH VA for an MTU (`params.sdr_max_message` or `2^OFF · mtu` per message; wraps
    /// beyond 64 bits).
    pub fn va(&self, params: &Params, mtu: u32) -> u64 {
        (self.msg_id as u128).wrapping_mul(max_message(params, mtu)).wrapping_add(self.pkt_off as u128 * mtu as u128) as u64
    }
}

// ---------------------------------------------------------------------------------------------
// Control messages.

/// Control message types (codes 1-5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CtrlType {
    Cts = 1,
    SrAck = 2,
    SrNack = 3,
    EcAck = 4,
    EcNack = 5,
}

impl CtrlType {
    pub fn from_code(code: u8) -> Option<CtrlType> {
        Some(match code {
            1 => CtrlType::Cts,
            2 => CtrlType::SrAck,
            3 => CtrlType::SrNack,
            4 => CtrlType::EcAck,
            5 => CtrlType::EcNack,
            _ => return None,
        })
    }
    pub fn code(self) -> u8 {
        self as u8
    }
    /// `cts`, `sr_ack`, … (`rocescope.sdr.ctrl.type`).
    pub fn name(self) -> &'static str {
        SDR_CTRL_VALUES[self as usize - 1]
    }
}

/// A control message as parsed: its fixed fields. The SR_ACK bitmap and the NACK indices are
/// read from the payload ([`Ctrl::sack`], [`Ctrl::indices`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ctrl {
    Cts { msg_seq: u32, buf_len: u64 },
    SrAck { msg_seq: u32, cum_ack: u32, sack_bits: u32 },
    SrNack { msg_seq: u32, count: u32 },
    EcAck { msg_seq: u32 },
    EcNack { msg_seq: u32, count: u32 },
}

impl Ctrl {
    pub fn kind(&self) -> CtrlType {
        match self {
            Ctrl::Cts { .. } => CtrlType::Cts,
            Ctrl::SrAck { .. } => CtrlType::SrAck,
            Ctrl::SrNack { .. } => CtrlType::SrNack,
            Ctrl::EcAck { .. } => CtrlType::EcAck,
            Ctrl::EcNack { .. } => CtrlType::EcNack,
        }
    }

    pub fn msg_seq(&self) -> u32 {
        match *self {
            Ctrl::Cts { msg_seq, .. }
            | Ctrl::SrAck { msg_seq, .. }
            | Ctrl::SrNack { msg_seq, .. }
            | Ctrl::EcAck { msg_seq }
            | Ctrl::EcNack { msg_seq, .. } => msg_seq,
        }
    }

    /// Parses a control message from the SEND payload: `payload` is what was captured of it,
    /// `wire_len` its length on the wire. A wrong magic, version or type, or a length that does
    /// not match the type, is a warning and `None`; `None` without a warning when the capture
    /// (snaplen) stops before the bytes that decide. A non-zero flags byte or set bitmap bits
    /// beyond `sack_bits` are warnings on a message that still decodes.
    pub fn parse(payload: &[u8], wire_len: usize, warnings: &mut Warnings) -> Option<Ctrl> {
        use ctrl_field as cf;
        let warn = |w: &mut Warnings, what| w.push(Warning::Ext { layer: Layer::Sdr, what });
        let b = &payload[..payload.len().min(wire_len)];
        let sat = |v: u64| v.min(u32::MAX as u64) as u32;
        if let Some(&m) = b.get(cf::MAGIC) {
            if m != MAGIC {
                warn(warnings, ExtProblem::Magic { got: m, want: MAGIC });
                return None;
            }
        }
        if let Some(&v) = b.get(cf::VERSION) {
            if v != VERSION {
                warn(warnings, ExtProblem::Version { got: v, want: VERSION });
                return None;
            }
        }
        let kind = match b.get(cf::TYPE) {
            Some(&t) => match CtrlType::from_code(t) {
                Some(k) => Some(k),
                None => {
                    warn(warnings, ExtProblem::Type(t));
                    return None;
                }
            },
            None => None,
        };
        if wire_len < CTRL_HEADER_LEN {
            warn(warnings, ExtProblem::Short { got: wire_len as u32, want: CTRL_HEADER_LEN as u32 });
            return None;
        }
        if b.len() < CTRL_HEADER_LEN {
            return None; // cut by the snaplen
        }
        let kind = kind?;
        let msg_seq = get(&b[cf::MSG_SEQ]) as u32;
        let body = wire_len - CTRL_HEADER_LEN;
        // The fixed part of the body, then the length it implies.
        let fixed = ctrl_body_fixed(kind);
        if body < fixed {
            warn(warnings, ExtProblem::BodyLength { got: sat(body as u64), want: fixed as u32 });
            return None;
        }
        if b.len() < CTRL_HEADER_LEN + fixed {
            return None;
        }
        let word = |r: Range<usize>| get(&b[r]) as u32;
        let fixed = fixed as u64;
        let (ctrl, want) = match kind {
            CtrlType::Cts => (Ctrl::Cts { msg_seq, buf_len: get(&b[cf::BUF_LEN]) }, fixed),
            CtrlType::SrAck => {
                let (cum_ack, sack_bits) = (word(cf::CUM_ACK), word(cf::SACK_BITS));
                (Ctrl::SrAck { msg_seq, cum_ack, sack_bits }, fixed + sack_len(sack_bits) as u64)
            }
            CtrlType::SrNack => {
                let count = word(cf::COUNT);
                (Ctrl::SrNack { msg_seq, count }, fixed + cf::INDEX_LEN as u64 * count as u64)
            }
            CtrlType::EcAck => (Ctrl::EcAck { msg_seq }, fixed),
            CtrlType::EcNack => {
                let count = word(cf::COUNT);
                (Ctrl::EcNack { msg_seq, count }, fixed + cf::INDEX_LEN as u64 * count as u64)
            }
        };
        if body as u64 != want {
            warn(warnings, ExtProblem::BodyLength { got: sat(body as u64), want: sat(want) });
            return None;
        }
        if b[cf::FLAGS] != 0 {
            warn(warnings, ExtProblem::Other(Note::SdrCtrlFlags));
        }
        if let Ctrl::SrAck { sack_bits, .. } = ctrl {
            let n = sack_len(sack_bits);
            let used = sack_bits % 8;
            if let (true, Some(&last)) = (used != 0, b.get(cf::SACK.start + n - 1).filter(|_| n > 0)) {
                if last >> used != 0 {
                    warn(warnings, ExtProblem::Other(Note::SdrSackTrailingBits));
                }
            }
        }
        Some(ctrl)
    }

    /// The SR_ACK bitmap (`⌈sack_bits/8⌉` bytes; bit j, byte j/8 bit j mod 8 LSB first, is chunk
    /// `cum_ack + j`), if this is an SR_ACK and the bitmap was captured in full.
    pub fn sack<'a>(&self, payload: &'a [u8]) -> Option<&'a [u8]> {
        match *self {
            Ctrl::SrAck { sack_bits, .. } => payload.get(ctrl_field::SACK.start..ctrl_field::SACK.start + sack_len(sack_bits)),
            _ => None,
        }
    }

    /// The SR_ACK's chunks marked received in the bitmap (`cum_ack + j` for every set bit j).
    pub fn sacked<'a>(&self, payload: &'a [u8]) -> impl Iterator<Item = u32> + 'a {
        let (cum_ack, bits, map) = match *self {
            Ctrl::SrAck { cum_ack, sack_bits, .. } => (cum_ack, sack_bits, self.sack(payload).unwrap_or(&[])),
            _ => (0, 0, &[][..]),
        };
        let bits = if map.is_empty() { 0 } else { bits };
        (0..bits).filter(move |&j| map[(j / 8) as usize] >> (j % 8) & 1 != 0).map(move |j| cum_ack.wrapping_add(j))
    }

    /// The NACK's indices (chunk indices for SR_NACK, data-submessage indices for EC_NACK), as
    /// far as they were captured.
    pub fn indices<'a>(&self, payload: &'a [u8]) -> impl Iterator<Item = u32> + 'a {
        let count = match *self {
            Ctrl::SrNack { count, .. } | Ctrl::EcNack { count, .. } => count as usize,
            _ => 0,
        };
        use ctrl_field::{INDEX, INDEX_LEN};
        (0..count).map_while(move |i| payload.get(INDEX.start + INDEX_LEN * i..INDEX.end + INDEX_LEN * i)).map(|b| get(b) as u32)
    }

    /// Walks the message's fields; `at` is the payload's offset in the frame.
    pub fn visit<'a>(&self, payload: &'a [u8], at: usize, f: &mut impl FnMut(F, Value<'a>, Range<usize>)) {
        use super::{byte_at, range_at};
        use ctrl_field as cf;
        let u = |v: u64| Value::UInt(v);
        f(F::SdrCtrlType, Value::Str(self.kind().name()), byte_at(at, cf::TYPE));
        f(F::SdrCtrlMsgSeq, u(self.msg_seq() as u64), range_at(at, cf::MSG_SEQ));
        match *self {
            Ctrl::Cts { buf_len, .. } => f(F::SdrCtrlBufLen, u(buf_len), range_at(at, cf::BUF_LEN)),
            Ctrl::SrAck { cum_ack, sack_bits, .. } => {
                f(F::SdrCtrlCumAck, u(cum_ack as u64), range_at(at, cf::CUM_ACK));
                f(F::SdrCtrlSackBits, u(sack_bits as u64), range_at(at, cf::SACK_BITS));
                if let Some(map) = self.sack(payload) {
                    f(F::SdrCtrlSack, Value::Bytes(map), at + cf::SACK.start..at + cf::SACK.start + map.len());
                }
            }
            Ctrl::SrNack { count, .. } | Ctrl::EcNack { count, .. } => {
                f(F::SdrCtrlCount, u(count as u64), range_at(at, cf::COUNT));
                for (i, v) in self.indices(payload).enumerate() {
                    let e = at + cf::INDEX.start + cf::INDEX_LEN * i;
                    f(F::SdrCtrlIndices, u(v as u64), e..e + cf::INDEX_LEN);
                }
            }
            Ctrl::EcAck { .. } => {}
        }
    }
}

/// Detection (WIRE.md B "Detection rules"): a SEND payload that starts with the control magic
/// and version.
pub fn is_ctrl(payload: &[u8]) -> bool {
    payload.get(ctrl_field::MAGIC) == Some(&MAGIC) && payload.get(ctrl_field::VERSION) == Some(&VERSION)
}

/// Builds a control message (the SEND payload). Fields are written as given, so a test can
/// build inconsistent messages (an SR_ACK whose `sack` is not `⌈sack_bits/8⌉` bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtrlRepr<'a> {
    Cts { msg_seq: u32, buf_len: u64 },
    SrAck { msg_seq: u32, cum_ack: u32, sack_bits: u32, sack: &'a [u8] },
    SrNack { msg_seq: u32, indices: &'a [u32] },
    EcAck { msg_seq: u32 },
    EcNack { msg_seq: u32, indices: &'a [u32] },
}

impl CtrlRepr<'_> {
    pub fn kind(&self) -> CtrlType {
        match self {
            CtrlRepr::Cts { .. } => CtrlType::Cts,
            CtrlRepr::SrAck { .. } => CtrlType::SrAck,
            CtrlRepr::SrNack { .. } => CtrlType::SrNack,
            CtrlRepr::EcAck { .. } => CtrlType::EcAck,
            CtrlRepr::EcNack { .. } => CtrlType::EcNack,
        }
    }

    pub fn msg_seq(&self) -> u32 {
        match *self {
            CtrlRepr::Cts { msg_seq, .. }
            | CtrlRepr::SrAck { msg_seq, .. }
            | CtrlRepr::SrNack { msg_seq, .. }
            | CtrlRepr::EcAck { msg_seq }
            | CtrlRepr::EcNack { msg_seq, .. } => msg_seq,
        }
    }

    /// Length of the message in bytes.
    pub fn buffer_len(&self) -> usize {
        CTRL_HEADER_LEN
            + match self {
                CtrlRepr::Cts { .. } => 8,
                CtrlRepr::SrAck { sack, .. } => 8 + sack.len(),
                CtrlRepr::SrNack { indices, .. } | CtrlRepr::EcNack { indices, .. } => 4 + 4 * indices.len(),
                CtrlRepr::EcAck { .. } => 0,
            }
    }

    /// Writes the message into the first [`Self::buffer_len`] bytes of `buf` (flags 0).
    pub fn emit(&self, buf: &mut [u8]) {
        let buf = &mut buf[..self.buffer_len()];
        buf[0] = MAGIC;
        buf[1] = VERSION;
        buf[2] = self.kind().code();
        buf[3] = 0;
        put(&mut buf[4..8], self.msg_seq() as u64);
        match *self {
            CtrlRepr::Cts { buf_len, .. } => put(&mut buf[8..16], buf_len),
            CtrlRepr::SrAck { cum_ack, sack_bits, sack, .. } => {
                put(&mut buf[8..12], cum_ack as u64);
                put(&mut buf[12..16], sack_bits as u64);
                buf[16..].copy_from_slice(sack);
            }
            CtrlRepr::SrNack { indices, .. } | CtrlRepr::EcNack { indices, .. } => {
                put(&mut buf[8..12], indices.len() as u64);
                for (i, v) in indices.iter().enumerate() {
                    put(&mut buf[12 + 4 * i..16 + 4 * i], *v as u64);
                }
            }
            CtrlRepr::EcAck { .. } => {}
        }
    }

    /// The message as a new vector.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0; self.buffer_len()];
        self.emit(&mut v);
        v
    }
}

/// Writes the SR_ACK bitmap of `sack_bits` bits into `out` (at least [`sack_len`] bytes, which
/// it clears first): bit j set when `received(cum_ack + j)`.
pub fn sack_bitmap(cum_ack: u32, sack_bits: u32, received: impl Fn(u32) -> bool, out: &mut [u8]) {
    let out = &mut out[..sack_len(sack_bits)];
    out.fill(0);
    for j in 0..sack_bits {
        if received(cum_ack.wrapping_add(j)) {
            out[(j / 8) as usize] |= 1 << (j % 8);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The parsed extension.

/// What an SDR packet carries beyond the IBTA headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sdr {
    Data(Data),
    Ctrl(Ctrl),
}

impl Sdr {
    /// `None` for a packet SDR does not apply to (anything but UC WRITE Only with Immediate and
    /// UC/UD SEND Only) and for a malformed control message (with a warning).
    pub(super) fn parse(ctx: &Ctx<'_>, p: &RocePacket<'_>, warnings: &mut Warnings) -> Option<Sdr> {
        match p.opcode().0 {
            OPCODE_DATA => p.immdt().map(|i| Sdr::Data(Data::from_imm(ctx.params.sdr_split, i.imm()))),
            op if is_ctrl_opcode(op) => Ctrl::parse(p.payload(), p.payload_len(), warnings).map(Sdr::Ctrl),
            _ => None,
        }
    }

    pub(super) fn visit<'a>(&self, p: &RocePacket<'a>, base: usize, f: &mut impl FnMut(F, Value<'a>, Range<usize>)) {
        match self {
            Sdr::Data(d) => {
                let Some(o) = p.header_offset(Hdr::ImmDt) else { return };
                let at = base + o;
                let ImmSplit(id, off, fr) = d.split;
                let (id, off, fr) = (id as u32, off as u32, fr as u32);
                f(F::SdrMsgId, Value::UInt(d.msg_id as u64), bit_bytes(at, 0, id));
                f(F::SdrPktOff, Value::UInt(d.pkt_off as u64), bit_bytes(at, id, off));
                if fr != 0 {
                    f(F::SdrImmFrag, Value::UInt(d.frag as u64), bit_bytes(at, id + off, fr));
                }
            }
            Sdr::Ctrl(c) => c.visit(p.payload(), base + p.payload_offset(), f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ec_nack_names_data_submessages_two_sends_apart() {
        // D0 P0 D1 P1 D2 from sequence number 40: D2 is 44; across the 32-bit wrap as on the wire.
        assert_eq!(ec_data_send(40, 2), 44);
        assert_eq!(ec_data_send(u32::MAX, 1), 1);
        assert_eq!(ec_data_send(7, u32::MAX), 5);
        assert_eq!(msg_id(ec_data_send(1023, 1), 10), 1);
    }

    #[test]
    fn fragments_follow_the_pinned_order() {
        let s = ImmSplit(10, 18, 4);
        let imm = 0x1234_5678;
        assert_eq!((0..8).map(|p| fragment(s, imm, p)).collect::<Vec<_>>(), [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(fragment(s, imm, 9), 2);
        assert_eq!(fragment(ImmSplit(8, 22, 2), 0xC000_0001, 0), 3);
        assert_eq!(fragment(ImmSplit(8, 22, 2), 0xC000_0001, 15), 1);
        assert_eq!(fragment(ImmSplit(12, 20, 0), 0xffff_ffff, 3), 0);
        assert_eq!(fragment(ImmSplit(0, 0, 32), 0xdead_beef, 7), 0xdead_beef);
        assert_eq!(fragment_count(ImmSplit(10, 19, 3)), None);
    }

}
