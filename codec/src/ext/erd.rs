//! ERD (WIRE.md B.5; seed 004 §4.3-4.5).
//!
//! - **EETH** (stateless): every ERD data packet is an RD SEND Only (0x44: BTH · RDETH · DETH)
//!   or a UD SEND Only (0x64: BTH · DETH), or their with-Immediate variants (0x45, 0x65: the
//!   EETH follows the ImmDt), whose payload begins with the 12-byte EETH
//!   `Type 1 · Last 1 · reserved 6 · reserved 8 · Msg_ID 16 · S_Len 16 · reserved 16 · S_Offset 32`.
//!   [`Erd`] is what the frame keeps of it (no allocation).
//! - **NACK** messages: `magic 0x4E · version 1 · count 16` followed by `count` 12-byte entries
//!   `reserved 8 · source QPN 24 · reserved 8 · destination QPN 24 · reserved 8 · lost PSN 24`
//!   ([`parse_nack`], [`NackRepr`]). They travel over a TCP stream to or from the NACK port
//!   (`Params::erd_nack_port`, 4792), which the stateful decoder reassembles
//!   (`crate::decoder::NackReassembler`); the stateless frame parser shows no NACK fields.

use core::ops::Range;

use super::Ctx;
use crate::field::FieldId as F;
use crate::ib::bytes::{get, put};
use crate::ib::RocePacket;
use crate::value::Value;
use crate::warning::{ExtProblem, Layer, Warning, Warnings};

/// EETH length in bytes.
pub const EETH_LEN: usize = 12;
/// NACK message magic (`'N'`).
pub const NACK_MAGIC: u8 = 0x4e;
/// NACK message version.
pub const NACK_VERSION: u8 = 1;
/// NACK message header length (magic, version, count).
pub const NACK_HEADER_LEN: usize = 4;
/// NACK entry length.
pub const NACK_ENTRY_LEN: usize = 12;
/// The streams `NackReassembler::new` follows at most.
pub const NACK_MAX_STREAMS: usize = 1024;
/// The longest NACK message the format allows (65535 entries).
pub const NACK_MAX_LEN: usize = NACK_HEADER_LEN + u16::MAX as usize * NACK_ENTRY_LEN;

/// Byte ranges of the EETH.
pub mod field {
    use core::ops::Range;
    /// Byte 0: bit 7 Type, bit 6 Last, bits 5..0 reserved.
    pub const FLAGS: usize = 0;
    pub const MSG_ID: Range<usize> = 2..4;
    pub const S_LEN: Range<usize> = 4..6;
    pub const S_OFFSET: Range<usize> = 8..12;
    pub const TYPE_BIT: u8 = 0x80;
    pub const LAST_BIT: u8 = 0x40;
}

/// Byte ranges of a NACK message header, and of an entry (from the entry's start).
pub mod nack_field {
    use core::ops::Range;
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 1;
    pub const COUNT: Range<usize> = 2..4;
    pub const SRC_QPN: Range<usize> = 1..4;
    pub const DST_QPN: Range<usize> = 5..8;
    pub const PSN: Range<usize> = 9..12;
}

/// UD packets to these QPs (0: subnet management, 1: general services, CM) never carry an EETH.
pub const MGMT_QP_MAX: u32 = 1;

/// The opcodes whose payload begins with an EETH: RD SEND Only (0x44), RD SEND Only with
/// Immediate (0x45), UD SEND Only (0x64), UD SEND Only with Immediate (0x65).
#[inline]
pub fn carries_eeth(opcode: u8) -> bool {
    matches!(opcode, 0x44 | 0x45 | 0x64 | 0x65)
}

/// Whether the profile applies to this packet: an EETH-carrying opcode whose headers are all
/// present, excluding UD to QP0/QP1 (subnet and general management: CM MADs are never ERD data).
fn applies(p: &RocePacket<'_>) -> bool {
    let op = p.opcode().0;
    carries_eeth(op)
        && p.info().is_some_and(|i| p.headers() == i.headers)
        && !(crate::ib::Opcode(op).transport() == crate::ib::Transport::Ud && p.bth().dest_qp() <= MGMT_QP_MAX)
}

/// The ERD detection rule for data packets (WIRE.md part B): an RD or UD SEND whose payload
/// starts with an EETH whose S_Len equals the bytes that follow it (the EETH must be captured).
pub fn detect(p: &RocePacket<'_>) -> bool {
    applies(p)
        && p.payload_len() >= EETH_LEN
        && EethRepr::parse(p.payload()).is_some_and(|e| e.s_len as usize == p.payload_len() - EETH_LEN)
}

/// The EETH (ERD Extended Header), as a plain value: [`Self::parse`] and [`Self::emit`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EethRepr {
    /// Type (byte 0 bit 7): 1 = part of a multi-packet message. 0 or 1; [`Self::emit`] writes
    /// bit 0 of this value.
    pub ty: u8,
    /// Last (byte 0 bit 6): this packet holds the message's final bytes.
    pub last: bool,
    pub msg_id: u16,
    /// Valid payload bytes after the EETH.
    pub s_len: u16,
    /// Byte offset of this payload in the message.
    pub s_offset: u32,
}

impl EethRepr {
    pub const LEN: usize = EETH_LEN;

    /// Reads the first [`EETH_LEN`] bytes of `b` (reserved bits are ignored); `None` if `b` is
    /// shorter.
    #[inline]
    pub fn parse(b: &[u8]) -> Option<EethRepr> {
        let b = b.get(..EETH_LEN)?;
        Some(EethRepr {
            ty: (b[field::FLAGS] & field::TYPE_BIT != 0) as u8,
            last: b[field::FLAGS] & field::LAST_BIT != 0,
            msg_id: get(&b[field::MSG_ID]) as u16,
            s_len: get(&b[field::S_LEN]) as u16,
            s_offset: get(&b[field::S_OFFSET]) as u32,
        })
    }

    /// Writes the EETH (reserved bits zero) into the first [`EETH_LEN`] bytes of `buf`.
    pub fn emit(&self, buf: &mut [u8]) {
        let b = &mut buf[..EETH_LEN];
        b.fill(0);
        b[field::FLAGS] =
            if self.ty & 1 != 0 { field::TYPE_BIT } else { 0 } | if self.last { field::LAST_BIT } else { 0 };
        put(&mut b[field::MSG_ID], self.msg_id as u64);
        put(&mut b[field::S_LEN], self.s_len as u64);
        put(&mut b[field::S_OFFSET], self.s_offset as u64);
    }

    /// The EETH as bytes.
    pub fn to_bytes(&self) -> [u8; EETH_LEN] {
        let mut b = [0u8; EETH_LEN];
        self.emit(&mut b);
        b
    }

    /// The message's length, known from its last packet (S_Offset + S_Len).
    pub fn msg_len(&self) -> Option<u64> {
        self.last.then_some(self.s_offset as u64 + self.s_len as u64)
    }
}

/// What an ERD data packet carries beyond the IBTA headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Erd {
    pub eeth: EethRepr,
}

impl Erd {
    /// `None` for a packet ERD does not apply to (another opcode: it is then `std`, silently),
    /// for a payload too short to hold an EETH (a warning) and for an EETH the snaplen cut
    /// (the frame says truncated). An S_Len that disagrees with the payload is a warning on
    /// `rocescope.erd.s_len`; the EETH is still reported.
    pub(super) fn parse(_ctx: &Ctx<'_>, p: &RocePacket<'_>, warnings: &mut Warnings) -> Option<Erd> {
        if !applies(p) {
            return None;
        }
        let warn = |w: &mut Warnings, what| w.push(Warning::Ext { layer: Layer::Erd, what });
        let len = p.payload_len();
        if len < EETH_LEN {
            warn(warnings, ExtProblem::Short { got: len as u32, want: EETH_LEN as u32 });
            return None;
        }
        let eeth = EethRepr::parse(p.payload())?;
        let after = len - EETH_LEN;
        if eeth.s_len as usize != after {
            warn(warnings, ExtProblem::Mismatch { field: F::ErdSLen, got: eeth.s_len as u32, want: after as u32 });
        }
        Some(Erd { eeth })
    }

    pub(super) fn visit<'a>(&self, p: &RocePacket<'a>, base: usize, f: &mut impl FnMut(F, Value<'a>, Range<usize>)) {
        use super::{byte_at, range_at};
        let o = base + p.payload_offset();
        let e = &self.eeth;
        f(F::ErdType, Value::UInt(e.ty as u64), byte_at(o, field::FLAGS));
        f(F::ErdLast, Value::Bool(e.last), byte_at(o, field::FLAGS));
        f(F::ErdMsgId, Value::UInt(e.msg_id as u64), range_at(o, field::MSG_ID));
        f(F::ErdSLen, Value::UInt(e.s_len as u64), range_at(o, field::S_LEN));
        f(F::ErdSOffset, Value::UInt(e.s_offset as u64), range_at(o, field::S_OFFSET));
    }
}

// ---------------------------------------------------------------------------------------------
// NACK messages

/// One NACK entry: the lost packet's PSN on the (source QPN, destination QPN) pair.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NackEntry {
    pub src_qpn: u32,
    pub dst_qpn: u32,
    pub psn: u32,
}

impl NackEntry {
    pub const LEN: usize = NACK_ENTRY_LEN;

    /// Reads the first 12 bytes of `b` (reserved bytes are ignored); `None` if `b` is shorter.
    #[inline]
    pub fn parse(b: &[u8]) -> Option<NackEntry> {
        let b = b.get(..NACK_ENTRY_LEN)?;
        use nack_field as nf;
        Some(NackEntry {
            src_qpn: get(&b[nf::SRC_QPN]) as u32,
            dst_qpn: get(&b[nf::DST_QPN]) as u32,
            psn: get(&b[nf::PSN]) as u32,
        })
    }

    /// Writes the entry (reserved bytes zero, each value masked to 24 bits) into `buf[..12]`.
    pub fn emit(&self, buf: &mut [u8]) {
        let b = &mut buf[..NACK_ENTRY_LEN];
        b.fill(0);
        put(&mut b[1..4], (self.src_qpn & 0xff_ffff) as u64);
        put(&mut b[5..8], (self.dst_qpn & 0xff_ffff) as u64);
        put(&mut b[9..12], (self.psn & 0xff_ffff) as u64);
    }
}

/// A NACK message to emit: the header (magic, version, count = `entries.len()`) and entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NackRepr<'e> {
    pub entries: &'e [NackEntry],
}

impl<'e> NackRepr<'e> {
    pub fn new(entries: &'e [NackEntry]) -> Self {
        assert!(entries.len() <= u16::MAX as usize, "a NACK message holds at most 65535 entries");
        NackRepr { entries }
    }

    /// The message length: 4 + 12 · count.
    pub fn buffer_len(&self) -> usize {
        NACK_HEADER_LEN + NACK_ENTRY_LEN * self.entries.len()
    }

    /// Writes the message into the first [`Self::buffer_len`] bytes of `buf`.
    pub fn emit(&self, buf: &mut [u8]) {
        buf[0] = NACK_MAGIC;
        buf[1] = NACK_VERSION;
        put(&mut buf[2..4], self.entries.len() as u64);
        for (e, chunk) in
            self.entries.iter().zip(buf[NACK_HEADER_LEN..self.buffer_len()].chunks_exact_mut(NACK_ENTRY_LEN))
        {
            e.emit(chunk);
        }
    }

    /// Appends the message to `out`.
    pub fn emit_to(&self, out: &mut Vec<u8>) {
        let o = out.len();
        out.resize(o + self.buffer_len(), 0);
        self.emit(&mut out[o..]);
    }

    /// The message as a new vector.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.buffer_len());
        self.emit_to(&mut v);
        v
    }
}

/// Reads one whole NACK message from the start of `b`: its entries and its length. Errors are
/// the problem with the header (`Magic`, `Version`, or `Short` when `b` ends early).
pub fn parse_nack(b: &[u8]) -> Result<(impl Iterator<Item = NackEntry> + '_, usize), ExtProblem> {
    let short = |want: usize| ExtProblem::Short { got: b.len() as u32, want: want as u32 };
    match b.get(nack_field::MAGIC) {
        None => return Err(short(NACK_HEADER_LEN)),
        Some(&m) if m != NACK_MAGIC => return Err(ExtProblem::Magic { got: m, want: NACK_MAGIC }),
        _ => {}
    }
    match b.get(nack_field::VERSION) {
        None => return Err(short(NACK_HEADER_LEN)),
        Some(&v) if v != NACK_VERSION => return Err(ExtProblem::Version { got: v, want: NACK_VERSION }),
        _ => {}
    }
    let count = get(b.get(nack_field::COUNT).ok_or(short(NACK_HEADER_LEN))?) as usize;
    let len = NACK_HEADER_LEN + NACK_ENTRY_LEN * count;
    let body = b.get(NACK_HEADER_LEN..len).ok_or(short(len))?;
    Ok((body.chunks_exact(NACK_ENTRY_LEN).filter_map(NackEntry::parse), len))
}

/// The entries of `b` when it holds whole NACK messages and nothing else (a TCP segment as the
/// reference stack writes one: a resent segment repeats its bytes); `None` for an empty `b`, a
/// bad header, or a message cut short. (A stream split otherwise needs the decoder's
/// reassembly, `decoder::NackReassembler`.)
pub fn whole_nacks(b: &[u8]) -> Option<impl Iterator<Item = NackEntry> + '_> {
    if b.is_empty() {
        return None;
    }
    let mut rest = b;
    while !rest.is_empty() {
        let (_, len) = parse_nack(rest).ok()?;
        rest = &rest[len..];
    }
    // (Every message checked above: each one's start, then its entries.)
    let messages = std::iter::successors(Some(b), |r| {
        let (_, len) = parse_nack(r).ok()?;
        Some(&r[len..]).filter(|next| !next.is_empty())
    });
    Some(messages.flat_map(|r| parse_nack(r).ok().into_iter().flat_map(|(entries, _)| entries)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_nacks_reads_every_message_of_a_segment_or_none() {
        let e = |psn| NackEntry { src_qpn: 0x100, dst_qpn: 0x200, psn };
        let mut b = NackRepr::new(&[e(7), e(9)]).to_vec();
        b.extend(NackRepr::new(&[e(0xFF_FFFF)]).to_vec());
        let psns: Vec<u32> = whole_nacks(&b).expect("whole messages").map(|x| x.psn).collect();
        assert_eq!(psns, [7, 9, 0xFF_FFFF]);
        assert!(whole_nacks(&[]).is_none());
        assert!(whole_nacks(&b[..b.len() - 1]).is_none(), "the last message cut short");
        let mut bad = b.clone();
        bad.extend([0xAA, 1, 0, 0]);
        assert!(whole_nacks(&bad).is_none(), "a bad header after good messages");
        // An empty message (no entries) is whole too.
        assert_eq!(whole_nacks(&NackRepr::new(&[]).to_vec()).map(|i| i.count()), Some(0));
    }

    #[test]
    fn eeth_bits_and_fields() {
        let e = EethRepr { ty: 1, last: true, msg_id: 0x1234, s_len: 8, s_offset: 0x0001_0000 };
        assert_eq!(e.to_bytes(), [0xc0, 0, 0x12, 0x34, 0, 8, 0, 0, 0, 1, 0, 0]);
        assert_eq!(EethRepr::parse(&e.to_bytes()), Some(e));
        assert_eq!(e.msg_len(), Some(0x1_0008));
        // Reserved bits are ignored.
        assert_eq!(
            EethRepr::parse(&[0xbf, 0xff, 0, 1, 0, 2, 0xff, 0xff, 0, 0, 0, 3]),
            Some(EethRepr { ty: 1, last: false, msg_id: 1, s_len: 2, s_offset: 3 })
        );
        assert_eq!(EethRepr::parse(&[0; 11]), None);
    }
}
