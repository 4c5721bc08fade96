//! SDR-RDMA's control messages as loss signals (docs/analysis.md, "SDR"; WIRE.md B.2; seed 001
//! §3.2-4; notes/sdr.md §1.5-1.7).
//!
//! SDR sends every packet as its own UC WRITE with Immediate naming (message id, packet offset),
//! spread over several QPs (channels, generations): its UC PSNs mean nothing to it, so its
//! messages, retransmissions and losses are found here, per connection (interface, sender,
//! receiver), by (message id, packet offset); the PSN tracker sees its packets as message-less.
//! A message here is an SDR send (selective repeat: the user's message; erasure coding: each
//! data or parity submessage, with its own sequence number). The receiver's control messages
//! (its own QP, receiver → sender) name a send by `msg_seq` (its id is `msg_seq` modulo 2^ID):
//! an SR_ACK's cumulative ACK and bitmap, an SR_NACK's chunks ask for the chunks they show
//! missing; the next copy of such a packet is the repair (`end_host`, signal `sdr_bitmap` when
//! the sender answered at once); an EC_NACK names data submessages (sends `msg_seq + 2j`), whose
//! every packet the sender resends at once (a trigger, no loss evidence). A send completes at
//! the first SR_ACK whose cumulative ACK passes every chunk the tap saw of it and whose bitmap
//! shows none missing, or at the EC_ACK naming it. CTSes tie a send to its sequence number, so
//! that a reused id starts a new send. Each event is listed in the timeline of the flow (QP)
//! whose frame it is; a message in the flow of its first frame.
//!
//! Chunks of `N` packets (`sdr_chunk_packets`, [`super::Options::sdr_chunk_packets`]; 1 by
//! default): chunk `c` is packets `c·N … c·N + N − 1`, and what a control message says of a chunk
//! it says of each of them. A request for a chunk of several packets says the receiver lacked
//! one of them, not which: it is evidence that a packet was lost only at the receiver's tap, for
//! a packet of the chunk the tap had seen no copy of (elsewhere the tap saw every packet leave
//! and cannot tell which one went missing: no loss, and a resend's spuriousness unknown unless an
//! acknowledgement covered it).

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use rocescope_codec::ext::sdr::CtrlType;

use super::pkt::{Pkt, PktExt, SdrCtrlPkt};
use super::report::{Cause, Evidence, Loss, Message, Ns, Repair, Retransmission, Signal};
use super::track::Place;
use super::Analyzer;

/// An SDR connection: interface, data sender, data receiver.
pub type ConnKey = (u32, IpAddr, IpAddr);

/// One SDR connection's live messages.
#[derive(Debug, Default)]
pub struct Conn {
    /// The first data flow seen (its control flow's `serves`).
    first_flow: Option<usize>,
    /// The message id's width (from the data packets' split), once a data packet told it.
    id_bits: u8,
    bits_known: bool,
    /// CTSes before that (at most [`EARLY_CTS`]).
    early_cts: Vec<u32>,
    msgs: BTreeMap<u32, Msg>,
    /// Per message id, the sequence number of the latest CTS for it (the receive posted there).
    cts: BTreeMap<u32, u32>,
}

/// CTSes kept before the connection's first data packet tells the message ids' width (the
/// receiver posts a window of receives ahead; refreshes beyond that are dropped).
const EARLY_CTS: usize = 4096;

impl Conn {
    /// A CTS for sequence number `seq`: the receive posted at its message id.
    fn note_cts(&mut self, seq: u32) {
        if self.bits_known {
            self.cts.insert(rocescope_codec::ext::sdr::msg_id(seq, self.id_bits), seq);
        } else if self.early_cts.len() < EARLY_CTS {
            self.early_cts.push(seq);
        }
    }

    /// A data packet told the ids' width.
    fn set_bits(&mut self, id_bits: u8) {
        self.id_bits = id_bits;
        if !self.bits_known {
            self.bits_known = true;
            for seq in std::mem::take(&mut self.early_cts) {
                self.note_cts(seq);
            }
        }
    }
}

/// One SDR message as the tap saw it.
#[derive(Debug, Default)]
struct Msg {
    /// The flow listing it, and its place in that flow's list.
    flow: usize,
    index: usize,
    first_time: u64,
    /// Flows (QPs) that carried it.
    flows: BTreeSet<usize>,
    pkts: BTreeMap<u32, PktCopy>,
    /// Chunks the receiver reported: all below `cum`, and `sacked`.
    cum: u32,
    sacked: BTreeSet<u32>,
    /// Packets a control message asked for, not resent yet; of those, the ones an SR_NACK named
    /// (the only request the sender answers at once: an SR_ACK's holes wait for the chunk's
    /// timer).
    asked: BTreeSet<u32>,
    nacked: BTreeSet<u32>,
    /// Erasure coding: the latest EC_NACK naming it (a data submessage): the sender resends its
    /// every packet at once, received or not (no loss evidence).
    ec_nack: Option<u64>,
    done: bool,
    /// The sequence number of the CTS for its slot before its first packet, if the tap saw one.
    seq: Option<u32>,
    /// A CTS for its slot came after it completed, or one naming another sequence number: the
    /// slot's next packets may be a new message's.
    reposted: bool,
}

/// The latest copy of one packet.
#[derive(Clone, Copy, Debug)]
struct PktCopy {
    copies: u32,
    flow: usize,
    psn: u32,
    frame: u64,
    time: u64,
}

/// One flow's SDR events, added to its timeline.
#[derive(Debug, Default)]
pub struct Out {
    pub losses: Vec<Loss>,
    pub retx: Vec<Retransmission>,
    pub msgs: Vec<Message>,
    /// Message latencies were added to the flow's counts.
    settled: bool,
    /// Runs of consecutive PSNs (unwrapped, first and last) of one message, with its index in
    /// [`Self::msgs`]: the per-packet `message` field (SDR's packets; Flor's identified copies).
    /// Kept for the capture's length: about one run a message and QP (24 bytes).
    pub ranges: Vec<(u64, u64, u64)>,
}

impl Out {
    /// PSN `v` (unwrapped) is of message `index`.
    pub(super) fn note_psn(&mut self, v: u64, index: u64) {
        match self.ranges.last_mut() {
            Some(r) if r.2 == index && r.1 + 1 == v => r.1 = v,
            _ => self.ranges.push((v, v, index)),
        }
    }
}

impl Analyzer {
    /// An SDR data packet of flow `i` (after the PSN tracker counted it).
    pub(super) fn sdr_data(&mut self, i: usize, k: &Pkt, place: Place) {
        let PktExt::SdrData { msg_id, pkt_off, id_bits } = k.ext else { return };
        let conn = self.sdr.entry((k.iface, k.src, k.dst)).or_default();
        conn.first_flow.get_or_insert(i);
        conn.set_bits(id_bits);
        let new = match conn.msgs.get_mut(&msg_id) {
            None => true,
            // A message's id in use again (a packet's copies all go to its channel's QP of the
            // message's generation; a reused id has the next generation): a packet it already
            // had arriving on a QP that did not carry it; after a CTS for its slot, a packet on
            // such a QP, or any once the message completed.
            Some(m)
                if !m.flows.contains(&i) && (m.reposted || m.pkts.contains_key(&pkt_off)) || m.done && m.reposted =>
            {
                true
            }
            Some(m) => {
                if m.done && !m.pkts.contains_key(&pkt_off) {
                    // More of a message taken for complete: it was not.
                    reopen(&mut self.flows, m);
                }
                false
            }
        };
        if new {
            let out = self.flows[i].sdr_out.get_or_insert_with(Default::default);
            let index = out.msgs.len();
            out.msgs.push(Message {
                index: index as u64,
                op: "write_imm",
                first_psn: k.psn,
                last_psn: None,
                first_frame: k.frame,
                last_frame: k.frame,
                complete_frame: None,
                complete_time_ns: None,
                packets: None,
                retransmitted: 0,
                bytes: 0,
                latency_ns: None,
            });
            self.flows[i].data.stats.messages += 1;
            let seq = conn.cts.get(&msg_id).copied();
            conn.msgs.insert(msg_id, Msg { flow: i, index, first_time: k.time_ns, seq, ..Msg::default() });
        }
        let Some(m) = conn.msgs.get_mut(&msg_id) else { return };
        m.flows.insert(i);
        let prior = m.pkts.get(&pkt_off).copied();
        // A request for it (for its chunk), evidence that the receiver lacked it (module doc).
        let asked = m.asked.remove(&pkt_off)
            && (self.opts.sdr_chunk_packets <= 1 || (place == Place::Destination && prior.is_none()));
        let ec_nacked = m.ec_nack.is_some_and(|f| prior.is_none_or(|p| f > p.frame));
        let nacked = m.nacked.remove(&pkt_off) || ec_nacked;
        // What made the sender send this copy: an SR_NACK naming it, or an EC_NACK naming its
        // data submessage since its previous copy; at the sender's tap, else its timer.
        let trigger = match place {
            _ if nacked => Signal::SdrBitmap,
            Place::Source => Signal::Timeout,
            _ => Signal::Unknown,
        };
        let in_msg_flow = |f: usize| (f == m.flow).then_some(m.index as u64);
        // (The per-packet `message` field: this PSN is the message's, in the flow listing it.)
        if let (Some(index), Some(v)) = (in_msg_flow(i), self.flows[i].data.peek(k.psn)) {
            self.flows[i].sdr_out.get_or_insert_with(Default::default).note_psn(v, index);
        }
        let mut retransmitted = false;
        match prior {
            None => {
                if let Some(msg) = listed(&mut self.flows, m) {
                    msg.bytes += k.payload as u64;
                }
                if asked {
                    // Asked for before the tap saw any copy: lost upstream; this is the repair.
                    let loss = loss(k.psn, k.frame, k.time_ns, in_msg_flow(i), trigger);
                    self.flows[i].data.stats.losses += 1;
                    self.flows[i].sdr_out.get_or_insert_with(Default::default).losses.push(loss);
                }
            }
            Some(p) => {
                retransmitted = true;
                let acked = pkt_off < m.cum || m.sacked.contains(&pkt_off);
                let spurious = match place {
                    // The receiver writes every copy in place: it had the earlier one.
                    Place::Destination => Some(true),
                    _ if acked => Some(true),
                    _ if asked => Some(false),
                    _ => None,
                };
                // Not needless: the timer's, or the lost copy's an SR_NACK asked for.
                let cause = match (spurious, trigger) {
                    (Some(true), _) => Cause::Spurious,
                    (Some(false), Signal::Timeout) => Cause::Timeout,
                    (Some(false), Signal::SdrBitmap) => Cause::Loss,
                    _ => Cause::Unknown,
                };
                let s = &mut self.flows[i].data.stats;
                // The PSN tracker took this copy for a first one (its UC PSN is new).
                s.unique_bytes = s.unique_bytes.saturating_sub(k.payload as u64);
                s.retransmitted += 1;
                s.spurious += (spurious == Some(true)) as u64;
                s.timeouts += (trigger == Signal::Timeout) as u64;
                s.max_retries = s.max_retries.max(p.copies);
                if asked {
                    let l = loss(p.psn, p.frame, p.time, in_msg_flow(p.flow), trigger);
                    self.flows[p.flow].data.stats.losses += 1;
                    self.flows[p.flow].sdr_out.get_or_insert_with(Default::default).losses.push(l);
                }
                let r = Retransmission {
                    psn: k.psn,
                    frame: k.frame,
                    time_ns: Ns(k.time_ns),
                    spurious,
                    cause,
                    trigger,
                    copy: p.copies,
                    message: in_msg_flow(i),
                };
                self.flows[i].sdr_out.get_or_insert_with(Default::default).retx.push(r);
            }
        }
        let copies = prior.map_or(0, |p| p.copies) + 1;
        m.pkts.insert(pkt_off, PktCopy { copies, flow: i, psn: k.psn, frame: k.frame, time: k.time_ns });
        let packets = m.pkts.len() as u32;
        if let Some(msg) = listed(&mut self.flows, m) {
            msg.last_frame = msg.last_frame.max(k.frame);
            msg.packets = Some(packets);
            msg.retransmitted += retransmitted as u64;
        }
    }

    /// An SDR control message (receiver → sender, on its own QP).
    pub(super) fn sdr_ctrl(&mut self, c: &SdrCtrlPkt) {
        let k = &c.pkt;
        let conn = self.sdr.entry((k.iface, k.dst, k.src)).or_default();
        if c.kind == CtrlType::Cts {
            conn.note_cts(c.msg_seq);
        }
        let Some(ci) = self.index.get(&super::Key(k.iface, k.src, k.dst, k.destqp)) else { return };
        if self.flows[ci].serves.is_none() && conn.first_flow != Some(ci) {
            self.flows[ci].serves = conn.first_flow;
        }
        if c.kind == CtrlType::EcNack {
            // About data submessages D_j of the message whose first send it names: sends
            // msg_seq + 2j.
            for j in &c.missing {
                let seq = rocescope_codec::ext::sdr::ec_data_send(c.msg_seq, *j);
                let id = rocescope_codec::ext::sdr::msg_id(seq, conn.id_bits);
                if let Some(m) = conn.msgs.get_mut(&id).filter(|m| !m.done && m.seq.is_none_or(|s| s == seq)) {
                    m.ec_nack = Some(k.frame);
                }
            }
            return;
        }
        let id = rocescope_codec::ext::sdr::msg_id(c.msg_seq, conn.id_bits);
        let Some(m) = conn.msgs.get_mut(&id) else { return };
        if m.seq.is_some_and(|s| s != c.msg_seq) {
            // About another use of its id (a receive posted there again).
            m.reposted |= c.kind == CtrlType::Cts;
            return;
        }
        // Chunks to packets (module doc): `cum` chunks are `cum·N` packets; a chunk named, its N.
        let n = self.opts.sdr_chunk_packets.max(1);
        let packets = |chunks: &[u32]| -> Vec<u32> {
            chunks.iter().flat_map(|&c| rocescope_codec::ext::sdr::chunk_packets(c, n)).collect()
        };
        let (sacked, missing) = (packets(&c.sacked), packets(&c.missing));
        if m.done {
            if c.kind == CtrlType::Cts {
                m.reposted = true;
            }
            // A request for a chunk past every one acknowledged proves the message incomplete
            // (taken for complete at an SR_ACK passing every packet this tap had seen of it: a
            // tap on one of several paths sees only some).
            let open = matches!(c.kind, CtrlType::SrAck | CtrlType::SrNack)
                && missing.iter().any(|x| *x >= m.cum && !m.sacked.contains(x));
            if !open || m.reposted {
                return;
            }
            reopen(&mut self.flows, m);
        }
        let complete = match c.kind {
            CtrlType::SrAck => {
                let cum = c.cum_ack.unwrap_or(0).saturating_mul(n);
                m.cum = m.cum.max(cum);
                m.sacked.extend(sacked);
                m.asked.extend(missing.iter().copied());
                missing.is_empty() && m.pkts.keys().all(|&o| o < cum)
            }
            CtrlType::SrNack => {
                m.asked.extend(missing.iter().copied());
                m.nacked.extend(missing);
                false
            }
            CtrlType::EcAck => {
                // Its message delivered: every packet of the send it names (D0) acknowledged.
                m.cum = u32::MAX;
                true
            }
            CtrlType::EcNack | CtrlType::Cts => false,
        };
        if complete {
            m.done = true;
            if let Some(msg) = listed(&mut self.flows, m) {
                msg.complete_frame = Some(k.frame);
                msg.complete_time_ns = Some(Ns(k.time_ns));
                msg.latency_ns = Some(k.time_ns.saturating_sub(m.first_time));
            }
        }
    }

    /// Adds the SDR messages' completions to the flows' counts (once, before the flow table).
    pub(super) fn sdr_settle(&mut self) {
        for f in &mut self.flows {
            let Some(out) = f.sdr_out.as_mut().filter(|o| !o.settled) else { continue };
            out.settled = true;
            for m in &out.msgs {
                if let (Some(l), Some(t)) = (m.latency_ns, m.complete_time_ns) {
                    f.data.stats.completed += 1;
                    f.data.stats.latency.add(l);
                    f.data.stats.last_complete = Some(f.data.stats.last_complete.map_or(t.0, |c| c.max(t.0)));
                }
            }
        }
    }
}

/// The timeline's entry of message `m`, in the flow that lists it.
fn listed<'a>(flows: &'a mut [super::FlowState], m: &Msg) -> Option<&'a mut Message> {
    flows.get_mut(m.flow)?.sdr_out.as_mut()?.msgs.get_mut(m.index)
}

/// Message `m`, taken for complete, was not: its completion is withdrawn.
fn reopen(flows: &mut [super::FlowState], m: &mut Msg) {
    m.done = false;
    if let Some(msg) = listed(flows, m) {
        msg.complete_frame = None;
        msg.complete_time_ns = None;
        msg.latency_ns = None;
    }
}

/// The loss of a copy the receiver's bitmap or NACK asked for, repaired by the sender; `signal`
/// is what made it send the repair.
fn loss(psn: u32, frame: u64, time: u64, message: Option<u64>, signal: Signal) -> Loss {
    Loss { psn, frame, time_ns: Ns(time), signal, repair: Repair::EndHost, evidence: Evidence::AskedFor, message }
}
