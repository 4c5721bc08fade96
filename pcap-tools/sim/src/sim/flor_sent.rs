//! Flor: what each WQE transmission the sender put on the wire carries, read from its first
//! packet (docs/truth.md "Flor"; seed 002 §4-5, Appendix A.1; WIRE.md B.3). Flor's unit of
//! reliability is the WQE: a WRITE-with-Immediate chunk (its RETH names the buffer offset and
//! length), a SEND with Flor's header (DATA: a small message; WRITE_RETX: a lost chunk's units,
//! re-sliced; ADDR_REQ: a large message's address exchange). Every transmission of a WQE is a
//! new WQE with a new global number (GN) and new PSNs, and its packets are consecutive PSNs, so
//! the truth names a packet's WQE by PSN range and its units by the WQE's span.

use rocescope_codec::ext::flor::{self as wire, Addr, SendType, SEND_HEADER_LEN};
use rocescope_codec::ib::opcode::Position;
use rocescope_codec::ib::RocePacket;
use rocescope_codec::params::ImmSplit;
use rocescope_codec::Warnings;

use crate::spill::{Dec, Enc, Record};
use crate::spill_var::VarRecord;

/// What a WQE carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WqeKind {
    /// A WRITE chunk (its message: the transmission's).
    Chunk,
    /// A WRITE_RETX SEND: units of a lost chunk, by SEND reliable number `rn`.
    Piece { rn: u32 },
    /// A small message's SEND, by SEND reliable number.
    Data { rn: u32 },
    /// A large message's ADDR_REQ (MID `mid`).
    AddrReq { mid: u32, rn: u32 },
}

/// One WQE transmission: its packets are the connection's data PSNs `first_psn` and the
/// `packets − 1` after it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentWqe {
    pub conn: u32,
    pub first_tx: u32,
    pub first_psn: u32,
    pub packets: u32,
    /// The connection's WQE count so far (the sender's GN: every WQE takes the next).
    pub gn: u64,
    pub kind: WqeKind,
    /// Its units (chunks and pieces; a DATA or ADDR_REQ is one unit of its own, `off` 0).
    pub off: u32,
    pub units: u32,
}

impl SentWqe {
    /// Whether it covers unit `u` of its message (for DATA and ADDR_REQ: their one unit, 0).
    pub fn covers(&self, u: u32) -> bool {
        u >= self.off && u - self.off < self.units
    }
}

/// On disk (`spill.rs`), when the run spills its truth: the WQE's fields; its kind as a tag and
/// its reliable numbers (a zeroed record reads as a chunk).
impl Record for SentWqe {
    const SIZE: usize = 4 * 4 + 8 + 1 + 4 + 4 + 4 + 4;
    fn encode(&self, o: &mut Enc<'_>) {
        for v in [self.conn, self.first_tx, self.first_psn, self.packets] {
            o.u32(v);
        }
        o.u64(self.gn);
        let (tag, rn, mid) = match self.kind {
            WqeKind::Chunk => (0, 0, 0),
            WqeKind::Piece { rn } => (1, rn, 0),
            WqeKind::Data { rn } => (2, rn, 0),
            WqeKind::AddrReq { mid, rn } => (3, rn, mid),
        };
        o.u8(tag);
        o.u32(rn);
        o.u32(mid);
        o.u32(self.off);
        o.u32(self.units);
    }
    fn decode(i: &mut Dec<'_>) -> SentWqe {
        let (conn, first_tx, first_psn, packets, gn) = (i.u32(), i.u32(), i.u32(), i.u32(), i.u64());
        let (tag, rn, mid) = (i.u8(), i.u32(), i.u32());
        let kind = match tag {
            1 => WqeKind::Piece { rn },
            2 => WqeKind::Data { rn },
            3 => WqeKind::AddrReq { mid, rn },
            _ => WqeKind::Chunk,
        };
        SentWqe { conn, first_tx, first_psn, packets, gn, kind, off: i.u32(), units: i.u32() }
    }
}

/// What one receiver ACK (transmission `tx`) lists: the GNs of the WQEs it acknowledges, in
/// its order (kept for the truth: in memory, or on disk when the run spills its truth).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckGns {
    pub tx: u32,
    pub gns: Vec<u64>,
}

/// On disk (`spill_var.rs`): the GN count is the fixed part, each GN two words (low first).
impl VarRecord for AckGns {
    type Head = u32;
    fn tx(&self) -> u32 {
        self.tx
    }
    fn split(&self, words: &mut Vec<u32>) -> u32 {
        words.extend(self.gns.iter().flat_map(|g| [*g as u32, (g >> 32) as u32]));
        self.gns.len() as u32
    }
    fn join(tx: u32, _: u32, words: &[u32]) -> AckGns {
        AckGns { tx, gns: words.chunks_exact(2).map(|w| w[0] as u64 | (w[1] as u64) << 32).collect() }
    }
}

/// The GNs a receiver's ACK lists (a WRITE chunk's reliable number resolved through
/// `chunk_gns`, which a chunk leaves when first listed: Flor never resends a chunk as a WRITE),
/// or `None` when `p` is no Flor ACK.
pub fn ack_gns(
    p: &RocePacket<'_>,
    set_means: rocescope_codec::params::FlorAckSetMeans,
    split: ImmSplit,
    chunk_gns: &mut std::collections::HashMap<(u32, u32), u64>,
) -> Option<Vec<u64>> {
    if p.opcode().0 != wire::OPCODE_ACK {
        return None;
    }
    let body = p.payload();
    let ack = wire::Ack::parse(body, p.payload_len(), set_means, &mut Warnings::default())?;
    let gns = ack
        .acked(body)
        .filter_map(|a| match a {
            wire::Acked::Send { gn } => Some(gn),
            wire::Acked::Write { rn } => {
                let r = wire::WriteRn::from_imm(split, rn);
                chunk_gns.remove(&(r.mid, r.chunk_off))
            }
        })
        .collect();
    Some(gns)
}

/// A WRITE chunk's last packet: its reliable number (MID, chunk offset), from its immediate.
pub fn chunk_rn(p: &RocePacket<'_>, split: ImmSplit) -> Option<(u32, u32)> {
    let op = p.opcode();
    if !op.is_write() || !matches!(op.position()?, Position::Last | Position::Only) {
        return None;
    }
    let r = wire::WriteRn::from_imm(split, p.immdt()?.imm());
    Some((r.mid, r.chunk_off))
}

/// The WQE whose first packet `p` is (a First or Only request packet of Flor's data QP), with
/// `unit`-byte units, an MTU of `mtu` bytes and immediates split by `split`; `None` for any other
/// packet (its WQE's first packet named it).
pub fn read(p: &RocePacket<'_>, unit: u32, mtu: u32, split: ImmSplit) -> Option<(WqeKind, u32, u32, u32)> {
    let op = p.opcode();
    if !matches!(op.position()?, Position::First | Position::Only) {
        return None;
    }
    let (unit, mtu) = (unit.max(1), mtu.max(1));
    if op.is_write() {
        let r = p.reth()?;
        // (The sender's buffer address: the message's base plus the chunk's byte offset, in
        // the low 32 bits: `stacks::remote_va`.)
        let off = ((r.va() & 0xffff_ffff) / unit as u64) as u32;
        return Some((WqeKind::Chunk, off, r.dma_len().div_ceil(unit).max(1), r.dma_len().div_ceil(mtu).max(1)));
    }
    let body = p.payload();
    let only = op.position() == Some(Position::Only);
    let h = wire::SendHeader::parse(body, p.payload_len(), only, split, &mut Warnings::default())?;
    let packets = (SEND_HEADER_LEN as u32 + h.body_len).div_ceil(mtu).max(1);
    let (kind, off, units) = match h.kind {
        SendType::Data => (WqeKind::Data { rn: h.rn }, 0, 1),
        SendType::WriteRetx => (WqeKind::Piece { rn: h.rn }, h.write().chunk_off, h.body_len.div_ceil(unit).max(1)),
        SendType::AddrReq => match h.addr(body) {
            Some(Addr::Req { mid, .. }) => (WqeKind::AddrReq { mid, rn: h.rn }, 0, 1),
            _ => return None,
        },
        SendType::AddrResp => return None,
    };
    Some((kind, off, units, packets))
}
