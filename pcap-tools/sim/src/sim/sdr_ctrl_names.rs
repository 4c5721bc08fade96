//! What each of SDR's control messages says, kept for the ground truth (docs/truth.md, "SDR"):
//! the per-tap view reads from it which chunks a tap saw the receiver acknowledge or ask for,
//! and when (`observe/sdr.rs`). The messages are UC SEND frames (WIRE.md B.2) the truth records
//! as transmissions of kind `other`; their bytes are gone once delivered, so what they say is
//! read here as they are sent.
//!
//! Size: one record per control message sent (a CTS, an SR_ACK per completed chunk, …), kept
//! only when the run keeps its truth: on disk when it spills its truth (`spill_var.rs`), in
//! memory when it keeps its records there. An SR_ACK's bitmap marks every chunk received past the
//! first missing one, so each would re-list what the one before marked: a record keeps only the
//! chunks its SR_ACK marks that no earlier SR_ACK of the message still marked ([`Marks`]), and
//! its window. The receiver's chunks of a message only ever grow, so the bitmap is the window's
//! chunks marked so far, and a reader rebuilds it exactly ([`Marks::sacked`]). So the records
//! grow with the chunks and control messages sent: four bytes per chunk marked or named, not
//! per chunk listed.

use rocescope_codec::ext::sdr::{Ctrl, CtrlType};
use rocescope_codec::frame::{DecodeOptions, Frame, LinkType};
use rocescope_codec::Warnings;

use crate::spill::{Dec, Enc, Record};
use crate::spill_var::VarRecord;

/// One control message: its transmission, type and message sequence number; an SR_ACK's
/// cumulative ACK, its bitmap's width and the chunks it marks that no earlier SR_ACK of the
/// message still marked; an SR_NACK's chunks (an EC_NACK's data submessages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtrlNames {
    pub tx: u32,
    pub kind: CtrlType,
    pub msg_seq: u32,
    pub cum_ack: Option<u32>,
    pub sack_bits: u32,
    pub newly_sacked: Vec<u32>,
    pub indices: Vec<u32>,
}

/// A record's fixed fields on disk; its variable part is the chunks newly marked, then the
/// chunks named.
pub struct CtrlHead {
    kind: CtrlType,
    msg_seq: u32,
    cum_ack: Option<u32>,
    sack_bits: u32,
    newly_sacked: u32,
}

impl Record for CtrlHead {
    const SIZE: usize = 1 + 4 + 1 + 4 + 4 + 4;
    fn encode(&self, o: &mut Enc<'_>) {
        o.u8(self.kind.code());
        o.u32(self.msg_seq);
        o.u8(self.cum_ack.is_some() as u8);
        o.u32(self.cum_ack.unwrap_or(0));
        o.u32(self.sack_bits);
        o.u32(self.newly_sacked);
    }
    fn decode(i: &mut Dec<'_>) -> CtrlHead {
        // (A zeroed record reads as a CTS.)
        let kind = CtrlType::from_code(i.u8()).unwrap_or(CtrlType::Cts);
        let msg_seq = i.u32();
        let (has_cum, cum) = (i.bool(), i.u32());
        CtrlHead { kind, msg_seq, cum_ack: has_cum.then_some(cum), sack_bits: i.u32(), newly_sacked: i.u32() }
    }
}

impl VarRecord for CtrlNames {
    type Head = CtrlHead;
    fn tx(&self) -> u32 {
        self.tx
    }
    fn split(&self, words: &mut Vec<u32>) -> CtrlHead {
        words.extend_from_slice(&self.newly_sacked);
        words.extend_from_slice(&self.indices);
        let (kind, msg_seq, cum_ack, sack_bits) = (self.kind, self.msg_seq, self.cum_ack, self.sack_bits);
        CtrlHead { kind, msg_seq, cum_ack, sack_bits, newly_sacked: self.newly_sacked.len() as u32 }
    }
    fn join(tx: u32, h: CtrlHead, words: &[u32]) -> CtrlNames {
        let (newly_sacked, indices) = words.split_at((h.newly_sacked as usize).min(words.len()));
        CtrlNames {
            tx,
            kind: h.kind,
            msg_seq: h.msg_seq,
            cum_ack: h.cum_ack,
            sack_bits: h.sack_bits,
            newly_sacked: newly_sacked.to_vec(),
            indices: indices.to_vec(),
        }
    }
}

/// The chunks of one message the SR_ACKs so far mark at or past their cumulative ACK: what an
/// SR_ACK adds to them is what it newly marks, and its bitmap is them within its window.
#[derive(Clone, Debug, Default)]
pub struct Marks(std::collections::BTreeSet<u32>);

impl Marks {
    /// An SR_ACK with cumulative ACK `cum` marking `sacked`: the chunks it newly marks. (Chunks
    /// below `cum` are dropped: the cumulative ACK covers them from now on.)
    pub fn add(&mut self, cum: u32, sacked: &[u32]) -> Vec<u32> {
        self.0 = self.0.split_off(&cum);
        sacked.iter().copied().filter(|&c| self.0.insert(c)).collect()
    }

    /// The bitmap of an SR_ACK with cumulative ACK `cum` and `bits` bits that newly marks
    /// `newly`, after the SR_ACKs before it (in order) were [`Self::sacked`] through this.
    pub fn sacked(&mut self, cum: u32, bits: u32, newly: &[u32]) -> Vec<u32> {
        self.0 = self.0.split_off(&cum);
        self.0.extend(newly.iter().copied());
        self.0.range(cum..cum.saturating_add(bits)).copied().collect()
    }

    /// Nothing is marked past the cumulative ACK (the record can go).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// What an SDR control message (a whole Ethernet frame) says; `None` for a frame that is not one.
pub struct Read {
    pub kind: CtrlType,
    pub msg_seq: u32,
    /// An SR_ACK's cumulative ACK and bitmap width.
    pub cum_ack: Option<u32>,
    pub sack_bits: u32,
    pub sacked: Vec<u32>,
    pub indices: Vec<u32>,
}

pub fn read(frame: &[u8]) -> Option<Read> {
    let f =
        Frame::parse(LinkType::Ethernet, frame, frame.len(), &DecodeOptions { verify: false, ..Default::default() });
    let payload = f.roce()?.payload();
    let c = Ctrl::parse(payload, payload.len(), &mut Warnings::default())?;
    let (cum_ack, sack_bits) = match c {
        Ctrl::SrAck { cum_ack, sack_bits, .. } => (Some(cum_ack), sack_bits),
        _ => (None, 0),
    };
    let (sacked, indices) = (c.sacked(payload).collect(), c.indices(payload).collect());
    Some(Read { kind: c.kind(), msg_seq: c.msg_seq(), cum_ack, sack_bits, sacked, indices })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rocescope_codec::build::{FrameRepr, NetRepr, RoceRepr};
    use rocescope_codec::ext::sdr::{sack_bitmap, CtrlRepr};

    fn frame(payload: Vec<u8>) -> Vec<u8> {
        // A UC SEND Only (opcode 0x24) to the sender's QP.
        let mut r = RoceRepr::new(0x24, 0x100, 77);
        r.payload = &payload;
        let net = NetRepr::Ipv4 { src: [10, 0, 1, 1], dst: [10, 0, 0, 1], tos: 0, ttl: 64, ident: 0 };
        FrameRepr::new(net, r).to_vec()
    }

    #[test]
    fn reads_an_sr_ack_bitmap_and_an_sr_nack() {
        // Chunks 3 and 5 received past a cumulative ACK of 2.
        let mut map = [0u8; 1];
        sack_bitmap(2, 8, |c| c == 3 || c == 5, &mut map);
        let ack = CtrlRepr::SrAck { msg_seq: 9, cum_ack: 2, sack_bits: 8, sack: &map };
        let r = read(&frame(ack.to_vec())).unwrap();
        assert_eq!((r.kind, r.msg_seq, r.cum_ack, r.sack_bits), (CtrlType::SrAck, 9, Some(2), 8));
        assert_eq!((r.sacked, r.indices), (vec![3, 5], vec![]));
        let nack = CtrlRepr::SrNack { msg_seq: 4, indices: &[1, 7] };
        let r = read(&frame(nack.to_vec())).unwrap();
        assert_eq!((r.kind, r.msg_seq, r.cum_ack, r.sacked, r.indices), (CtrlType::SrNack, 4, None, vec![], vec![1, 7]));
        assert!(read(&frame(vec![0xAA; 20])).is_none(), "not a control message");
    }

    #[test]
    fn marks_keep_only_what_each_sr_ack_adds_and_give_each_bitmap_back() {
        // A hole at chunk 2 of a message; SR_ACKs as the receiver sends them (bitmaps of 4 bits).
        let acks: [(u32, &[u32]); 5] = [(2, &[3]), (2, &[3, 4]), (2, &[3, 4, 5]), (6, &[7]), (6, &[7, 8, 9])];
        let mut kept = Marks::default();
        let newly: Vec<Vec<u32>> = acks.iter().map(|&(cum, s)| kept.add(cum, s)).collect();
        assert_eq!(newly, [vec![3], vec![4], vec![5], vec![7], vec![8, 9]]);
        // Read back in order, each bitmap is whole again.
        let mut read = Marks::default();
        for ((cum, sacked), n) in acks.iter().zip(&newly) {
            assert_eq!(read.sacked(*cum, 4, n), sacked.to_vec());
        }
        // Once the cumulative ACK passes every mark, nothing is kept.
        kept.add(10, &[]);
        assert!(kept.is_empty());
    }
}
