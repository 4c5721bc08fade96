//! SDR-RDMA's sender and receiver at their taps (docs/replay.md "SDR-RDMA"; seed 001 §3.2-4, §4.1;
//! WIRE.md B.2). SDR sends every packet as a UC WRITE with Immediate naming (message id, packet
//! offset), over several data QPs, and its receiver reports what arrived in control messages on
//! a QP of its own: an SR_ACK's cumulative ACK and bitmap say which chunks of a send it holds, an
//! EC_ACK that it decoded the whole message (named by its first send, D0). A message here is an
//! SDR send (selective repeat: the user's message; erasure coding: each data and parity
//! submessage D0, P0, D1, …, with its own sequence number and CTS).
//!
//! At the **sender's tap** every control message the sender got shows arriving. Its sender
//! resends a chunk only while no SR_ACK has shown it received (on its RTO, an SR_NACK, or an
//! erasure-coded message's fallback), and nothing of a message whose EC_ACK came; so a packet
//! sent again after an SR_ACK covered its chunk, or after the EC_ACK naming its send, longer
//! than the reaction time before, is a departure (`sdr.resend-acked`). One exception: an
//! erasure-coded sender that got no EC_ACK probes with packet 0 of D0, acknowledged or not, so
//! on a connection that shows erasure coding (an EC_ACK or EC_NACK) a packet 0 sent again after
//! its SR_ACK, with no EC_ACK for its send, is not judged.
//!
//! At the **receiver's tap** every data packet the receiver got shows arriving and every control
//! message it sent shows leaving: an SR_NACK naming a chunk whose packets all arrived there
//! longer than the reaction time before is a departure (`sdr.nack-unexpected`; the receiver
//! names a chunk only while its bitmap lacks it), and so is an EC_NACK naming a data submessage
//! (send `msg_seq + 2j`) every packet of which had arrived (the receiver decodes a submessage
//! whose data is whole; its packets are the CTS's `buf_len` over the largest payload seen, so
//! an MTU not yet seen only makes the judge require more). A CTS leaving opens the id's next
//! message, so a packet counts for the message posted last under its id. (A CTS the capture
//! itself lost could let a packet of the slot's previous message count for the next one.)
//!
//! One judge serves a connection (interface, sender, receiver): all its data QPs, and its control
//! QP. A message id is the message sequence number modulo 2^ID (the immediate's split); a CTS
//! for an id opens the next message in that slot, so it starts the id afresh. Chunks are
//! `sdr_chunk_packets` packets (1 by default). Memory: the [`MSGS`] most recently used ids.

use std::collections::{BTreeMap, HashSet};

use rocescope_codec::ext::sdr::CtrlType;

use crate::recent::Recent;
use crate::rules;
use crate::{Finding, FindingKind};

/// Message ids whose state is kept.
pub const MSGS: usize = 4096;

#[derive(Debug, Default)]
struct Msg {
    /// Packet offsets sent.
    sent: HashSet<u32>,
    /// Chunks an SR_ACK showed received, and when it first did.
    acked: BTreeMap<u32, u64>,
    /// The cumulative ACK so far (every chunk below it received).
    cum: u32,
    /// When its EC_ACK came.
    decoded: Option<u64>,
    /// One past the highest packet offset sent, and past the highest chunk a control message
    /// named (for the chunk size check, [`SdrJudge::chunks_agree`]).
    packets: u32,
    chunks: u32,
    /// At the receiver's tap: each packet offset's first arrival (frame, time).
    arrived: BTreeMap<u32, (u64, u64)>,
    /// Its CTS's receive length (bytes).
    bytes: Option<u64>,
}

impl Msg {
    /// When every packet offset of `offs` had arrived (at the receiver's tap): the last one's
    /// first arrival (frame, time; of equally late ones the highest offset); `None` while one is
    /// missing.
    fn all_arrived(&self, offs: std::ops::Range<u32>) -> Option<(u64, u64)> {
        let mut last: Option<(u64, u64)> = None;
        for o in offs {
            let a = *self.arrived.get(&o)?;
            if last.is_none_or(|l| a.1 >= l.1) {
                last = Some(a);
            }
        }
        last
    }
}

/// Where the judge's tap is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Sender,
    Receiver,
}

/// One SDR connection at its sender's tap.
pub(super) struct SdrJudge {
    flow: String,
    side: Side,
    reaction_ns: u64,
    chunk_packets: u32,
    /// The message id's width (from the data packets' split).
    id_bits: u8,
    /// The largest data payload seen (bytes): the MTU, once a full packet passed.
    mtu: u32,
    msgs: Recent<u32, Msg>,
    pub requests: u64,
    pub ctrls: u64,
    findings: Vec<Finding>,
    /// Packet 0 of a send sent again after its SR_ACK, with no EC_ACK for it: a departure unless
    /// the connection shows erasure coding (the guard's probe; module doc).
    probes: Vec<Finding>,
    /// The connection shows erasure coding (an EC_ACK or EC_NACK).
    pub ec: bool,
}

impl SdrJudge {
    pub fn new(flow: String, side: Side, reaction_ns: u64, chunk_packets: u32) -> SdrJudge {
        SdrJudge {
            flow,
            side,
            reaction_ns,
            chunk_packets: chunk_packets.max(1),
            id_bits: 32,
            mtu: 0,
            msgs: Recent::new(MSGS),
            requests: 0,
            ctrls: 0,
            findings: Vec::new(),
            probes: Vec::new(),
            ec: false,
        }
    }

    /// Its findings, once every frame was read.
    pub fn findings(self) -> Vec<Finding> {
        let mut out = self.findings;
        if !self.ec {
            out.extend(self.probes);
        }
        out.sort_by_key(|f| f.frames.first().copied());
        out
    }

    fn msg(&mut self, id: u32, fresh: bool) -> &mut Msg {
        self.msgs.get_mut(id, fresh)
    }

    /// A data packet (message id, packet offset; `id_bits`: the id's width; `payload` bytes) sent
    /// at frame `number`.
    pub fn data(&mut self, number: u64, now: u64, id: u32, off: u32, id_bits: u8, payload: u32) {
        self.requests += 1;
        self.id_bits = id_bits;
        self.mtu = self.mtu.max(payload);
        let (reaction, chunk) = (self.reaction_ns, off / self.chunk_packets);
        let receiver = self.side == Side::Receiver;
        let m = self.msg(id, false);
        // (Counted at either tap: the chunk size check reads it.)
        m.packets = m.packets.max(off.saturating_add(1));
        if receiver {
            m.arrived.entry(off).or_insert((number, now));
            return;
        }
        if m.sent.insert(off) {
            return;
        }
        let long_before = |t: u64| now.saturating_sub(t) > reaction;
        let why = match (m.decoded, m.acked.get(&chunk)) {
            (Some(t), _) if long_before(t) => Some("after its message's EC_ACK".to_string()),
            (_, Some(&t)) if long_before(t) => Some(format!("after an SR_ACK showed its chunk {chunk} received")),
            _ => None,
        };
        // (Erasure coding's probe: packet 0, acknowledged or not, while no EC_ACK came.)
        let probe = off == 0 && m.decoded.is_none();
        if let Some(why) = why {
            let expected = "a packet sent again only while no SR_ACK shows its chunk received and no EC_ACK its \
                            message decoded"
                .to_string();
            let seen = format!("packet {off} of message {id} sent again {why}");
            let to = if probe { &mut self.probes } else { &mut self.findings };
            to.push(Finding::of(
                FindingKind::Departure,
                rules::SDR_RESEND_ACKED,
                &self.flow,
                vec![number],
                now,
                expected,
                seen,
            ));
        }
    }

    /// A control message (receiver → sender) at frame `number`: its kind, message sequence
    /// number, (SR_ACK) cumulative ACK and the chunks its bitmap marks received, (SR_NACK) the
    /// chunks it names.
    pub fn ctrl(&mut self, number: u64, now: u64, c: Ctrl<'_>) {
        self.ctrls += 1;
        let Ctrl { kind, msg_seq, cum, sacked, named, buf_len } = c;
        let id = rocescope_codec::ext::sdr::msg_id(msg_seq, self.id_bits);
        if self.side == Side::Receiver && kind == CtrlType::SrNack {
            self.nack_left(number, now, id, named);
            return;
        }
        if self.side == Side::Receiver && kind == CtrlType::EcNack {
            self.ec = true;
            self.ec_nack_left(number, now, msg_seq, named);
            return;
        }
        match kind {
            // The slot's next message: the id starts afresh.
            CtrlType::Cts => {
                self.msg(id, true).bytes = buf_len;
            }
            CtrlType::SrAck => {
                let m = self.msg(id, false);
                let cum = cum.unwrap_or(0);
                for c in m.cum..cum {
                    m.acked.entry(c).or_insert(now);
                }
                m.cum = m.cum.max(cum);
                for &c in sacked {
                    m.acked.entry(c).or_insert(now);
                }
                m.chunks = m.chunks.max(m.cum).max(sacked.iter().max().map_or(0, |&c| c + 1));
            }
            CtrlType::EcAck => {
                self.ec = true;
                self.msg(id, false).decoded.get_or_insert(now);
            }
            CtrlType::EcNack => self.ec = true,
            CtrlType::SrNack => {}
        }
    }
}

/// What a control message says (see [`SdrJudge::ctrl`]).
#[derive(Clone, Copy, Debug)]
pub struct Ctrl<'a> {
    pub kind: CtrlType,
    pub msg_seq: u32,
    pub cum: Option<u32>,
    pub sacked: &'a [u32],
    /// SR_NACK: its chunks; EC_NACK: its data submessages.
    pub named: &'a [u32],
    /// CTS: the receive's length.
    pub buf_len: Option<u64>,
}

impl SdrJudge {
    /// The receiver's SR_NACK at frame `number` names chunks `named` of message id `id`: each
    /// must not have arrived whole (every packet of it) longer than the reaction time before.
    fn nack_left(&mut self, number: u64, now: u64, id: u32, named: &[u32]) {
        let (n, reaction) = (self.chunk_packets, self.reaction_ns);
        let m = self.msg(id, false);
        let mut held = Vec::new();
        for &c in named {
            let first = c.saturating_mul(n);
            let Some(last) = m.all_arrived(first..first.saturating_add(n)) else { continue };
            if now.saturating_sub(last.1) > reaction {
                held.push((c, last.0));
            }
        }
        for (c, arrived) in held {
            let expected = "an SR_NACK names only chunks the receiver has not received".to_string();
            let seen =
                format!("SR_NACK of message {id} names chunk {c}, whose packets had all arrived (frame {arrived})");
            self.findings.push(Finding::of(
                FindingKind::Departure,
                rules::SDR_NACK_UNEXPECTED,
                &self.flow,
                vec![number, arrived],
                now,
                expected,
                seen,
            ));
        }
    }

    /// The receiver's EC_NACK at frame `number` (about the message whose first send is
    /// `msg_seq`) names data submessages `named`: none may have had every packet arrive longer
    /// than the reaction time before (the receiver decodes a submessage whose data is whole).
    fn ec_nack_left(&mut self, number: u64, now: u64, msg_seq: u32, named: &[u32]) {
        let (reaction, mtu, bits) = (self.reaction_ns, self.mtu as u64, self.id_bits);
        let mut held = Vec::new();
        for &j in named {
            let id = rocescope_codec::ext::sdr::msg_id(rocescope_codec::ext::sdr::ec_data_send(msg_seq, j), bits);
            let Some(m) = self.msgs.get(&id) else { continue };
            let Some(bytes) = m.bytes.filter(|_| mtu > 0) else { continue };
            let packets = bytes.div_ceil(mtu).max(1).min(u32::MAX as u64) as u32;
            let Some(last) = m.all_arrived(0..packets) else { continue };
            if now.saturating_sub(last.1) > reaction {
                held.push((j, id, last.0));
            }
        }
        for (j, id, arrived) in held {
            let expected = "an EC_NACK names only data submessages the receiver could not decode".to_string();
            let seen = format!(
                "EC_NACK of message {msg_seq} names data submessage {j} (message id {id}), whose packets had all \
                 arrived (the last: frame {arrived})"
            );
            self.findings.push(Finding::of(
                FindingKind::Departure,
                rules::SDR_NACK_UNEXPECTED,
                &self.flow,
                vec![number, arrived],
                now,
                expected,
                seen,
            ));
        }
    }

    /// Whether the chunks the control messages name match packets of `sdr_chunk_packets`: over
    /// the messages some SR_ACK named chunks of, the packets sent are not more than 1.5 times the
    /// chunks named (chunks of several packets name far fewer: the judge would read a chunk index
    /// as a packet offset, so the connection is then not judged).
    pub fn chunks_agree(&self) -> bool {
        let (packets, chunks) =
            self.msgs.values().filter(|m| m.chunks > 0).fold((0u64, 0u64), |(p, c), m| {
                (p + m.packets as u64, c + m.chunks as u64 * self.chunk_packets as u64)
            });
        packets * 2 <= chunks * 3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctrl(kind: CtrlType, msg_seq: u32, cum: Option<u32>, sacked: &[u32]) -> Ctrl<'_> {
        Ctrl { kind, msg_seq, cum, sacked, named: &[], buf_len: None }
    }

    #[test]
    fn an_sr_nack_naming_a_chunk_that_arrived_departs_at_the_receiver() {
        let mut j = SdrJudge::new("f".into(), Side::Receiver, 5_000, 1);
        j.ctrl(1, 0, ctrl(CtrlType::Cts, 7, None, &[]));
        for off in [0, 1, 3] {
            j.data(off as u64 + 2, 1_000 * off as u64, 7, off, 10, 1024);
        }
        let nack = |named: &'static [u32]| Ctrl {
            kind: CtrlType::SrNack,
            msg_seq: 7,
            cum: None,
            sacked: &[],
            named,
            buf_len: None,
        };
        // Chunk 2 is missing: fine; chunk 3 arrived at 3 µs, 1 µs before: within the reaction time.
        j.ctrl(10, 4_000, nack(&[2, 3]));
        assert!(j.findings.is_empty());
        // Chunk 1 arrived at 1 µs, 29 µs before: a departure, at the SR_NACK and the arrival.
        j.ctrl(11, 30_000, nack(&[1]));
        assert_eq!(j.findings.len(), 1);
        assert_eq!((j.findings[0].rule, j.findings[0].frames.clone()), ("sdr.nack-unexpected", vec![11, 3]));
        // The slot's next message (a CTS): nothing of it has arrived.
        j.ctrl(12, 40_000, ctrl(CtrlType::Cts, 7 + 1024, None, &[]));
        j.ctrl(13, 90_000, nack(&[1]));
        assert_eq!(j.findings.len(), 1);
    }

    #[test]
    fn a_packet_sent_again_after_its_chunk_was_acknowledged_departs() {
        let mut j = SdrJudge::new("f".into(), Side::Sender, 5_000, 1);
        for off in 0..4 {
            j.data(off as u64 + 1, 0, 3, off, 10, 1024);
        }
        // SR_ACK: chunks 0 and 1 (cumulative) and 3 (bitmap) received; chunk 2 missing.
        j.ctrl(0, 10_000, ctrl(CtrlType::SrAck, 3, Some(2), &[3]));
        j.data(5, 12_000, 3, 1, 10, 1024); // within the reaction time: not judged
        j.data(6, 30_000, 3, 2, 10, 1024); // the missing one: fine
        j.data(7, 30_000, 3, 3, 10, 1024); // received: a departure
        assert_eq!(j.findings.len(), 1);
        assert_eq!(j.findings[0].frames, vec![7]);
        assert!(j.findings[0].seen.contains("chunk 3"), "{}", j.findings[0].seen);
        // The id's slot reposted (a CTS; ids are the sequence number modulo 2^10): a new message.
        j.ctrl(0, 70_000, ctrl(CtrlType::Cts, 3 + 1024, None, &[]));
        j.data(10, 80_000, 3, 3, 10, 1024);
        assert_eq!(j.findings.len(), 1);
        assert!(!j.ec);
        // Erasure coding shows (an EC_ACK).
        j.ctrl(0, 90_000, ctrl(CtrlType::EcAck, 5, None, &[]));
        assert!(j.ec);
    }

    #[test]
    fn erasure_coding_an_ec_nack_naming_a_whole_data_submessage_departs_at_the_receiver() {
        // Message of sends D0 (seq 10, 4 packets of 1024 bytes), P0 (11), D1 (12, 2 packets).
        let mut j = SdrJudge::new("f".into(), Side::Receiver, 5_000, 1);
        let cts = |seq: u32, bytes: u64| Ctrl { buf_len: Some(bytes), ..ctrl(CtrlType::Cts, seq, None, &[]) };
        j.ctrl(1, 0, cts(10, 4096));
        j.ctrl(2, 0, cts(11, 1024));
        j.ctrl(3, 0, cts(12, 1500));
        for off in 0..4 {
            j.data(10 + off as u64, 1_000, 10, off, 10, 1024);
        }
        j.data(20, 2_000, 12, 0, 10, 1024); // D1's packet 1 (476 bytes) never arrives
        let ec_nack =
            |named: &'static [u32]| Ctrl { kind: CtrlType::EcNack, named, ..ctrl(CtrlType::EcNack, 10, None, &[]) };
        // D1 (j = 1) lacks a packet: fine.
        j.ctrl(30, 40_000, ec_nack(&[1]));
        assert!(j.findings.is_empty() && j.ec);
        // D0 (j = 0) had every packet 39 µs before: a departure, at the EC_NACK and D0's last arrival.
        j.ctrl(31, 40_000, ec_nack(&[0]));
        assert_eq!(j.findings.len(), 1);
        assert_eq!((j.findings[0].rule, j.findings[0].frames.clone()), ("sdr.nack-unexpected", vec![31, 13]));
    }

    #[test]
    fn erasure_coding_a_packet_sent_after_its_ec_ack_departs_but_a_probe_does_not() {
        let mut j = SdrJudge::new("f".into(), Side::Sender, 5_000, 1);
        for off in 0..2 {
            j.data(off as u64 + 1, 0, 20, off, 10, 1024);
        }
        // After a fallback, an SR_ACK of D0 (seq 20) shows both packets; no EC_ACK yet: the
        // guard's probe sends packet 0 again.
        j.ctrl(3, 10_000, ctrl(CtrlType::SrAck, 20, Some(2), &[]));
        j.data(4, 50_000, 20, 0, 10, 1024);
        j.ctrl(5, 60_000, ctrl(CtrlType::EcAck, 20, None, &[]));
        // Packet 1 after the EC_ACK: a departure.
        j.data(6, 90_000, 20, 1, 10, 1024);
        assert!(j.ec);
        let f = j.findings();
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!((f[0].rule, f[0].frames.clone()), ("sdr.resend-acked", vec![6]));
        // Without erasure coding, packet 0 sent again after its SR_ACK is one.
        let mut j = SdrJudge::new("f".into(), Side::Sender, 5_000, 1);
        j.data(1, 0, 20, 0, 10, 1024);
        j.ctrl(3, 10_000, ctrl(CtrlType::SrAck, 20, Some(1), &[]));
        j.data(4, 50_000, 20, 0, 10, 1024);
        assert_eq!(j.findings().len(), 1);
    }

    #[test]
    fn chunks_of_several_packets_are_told_from_the_acks() {
        // 16 packets, acknowledged as 2 chunks (of 8): the judge's one-packet chunks disagree.
        let mut j = SdrJudge::new("f".into(), Side::Sender, 5_000, 1);
        for off in 0..16 {
            j.data(off as u64 + 1, 0, 1, off, 10, 1024);
        }
        j.ctrl(0, 10_000, ctrl(CtrlType::SrAck, 1, Some(2), &[]));
        assert!(!j.chunks_agree());
        // Acknowledged packet by packet, they agree (a message still in flight included).
        let mut j = SdrJudge::new("f".into(), Side::Sender, 5_000, 1);
        for off in 0..16 {
            j.data(off as u64 + 1, 0, 1, off, 10, 1024);
        }
        j.ctrl(0, 10_000, ctrl(CtrlType::SrAck, 1, Some(14), &[15]));
        assert!(j.chunks_agree());
    }
}
