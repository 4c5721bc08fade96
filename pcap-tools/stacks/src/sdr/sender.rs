//! SDR's sender (the requester): first passes in send order as CTSes allow, per-chunk RTOs in
//! selective repeat, SR_ACK / SR_NACK / EC_ACK / EC_NACK handling, parity encoding, and the EC
//! guard (module docs of [`super`]; seed 001 §3.1, §4.1).

use std::collections::{BTreeSet, HashMap, VecDeque};

use rocescope_codec::ext::sdr::{Ctrl, DataRepr, OPCODE_CTRL_UC, OPCODE_CTRL_UD};
use rocescope_codec::{Frame, Warnings};

use super::code;
use super::layout::{self, Role, Send};
use super::{message_ids, slot_of, SdrConfig, SdrMode};
use crate::common::{payload, Wire};
use crate::{imm_data, Action, ConnConfig, Endpoint, Message, Nanos, Op, Requester, RetxReason, TxInfo, R_KEY};

/// One SDR send of a posted message, as the sender tracks it.
#[derive(Debug)]
struct OutSend {
    s: Send,
    /// First pass: the next packet to send.
    next: u32,
    acked: Vec<bool>,
    /// Chunks queued for retransmission (not yet fully resent).
    queued: Vec<bool>,
    /// The current RTO of each chunk (a timer of an older epoch is stale).
    epoch: Vec<u32>,
    /// Its chunks run on RTOs (selective repeat; an EC data send after a fallback).
    sr: bool,
}

/// A posted message.
#[derive(Debug)]
struct OutMsg {
    msg: Message,
    /// `msg_seq` of its first send.
    base: u64,
    sends: Vec<OutSend>,
    user_imm: u32,
    /// EC: parity chunks of each data submessage, once encoded.
    parity: Vec<Option<Vec<Vec<u8>>>>,
    /// EC: the receiver asked for a fallback, or the guard fell back.
    fallback: bool,
    done: bool,
}

/// A packet to send again.
#[derive(Clone, Copy, Debug)]
struct Resend {
    msg: u64,
    send: u32,
    pkt: u32,
    reason: RetxReason,
    /// Sent even though acknowledged: the EC guard's probe for a lost EC_ACK.
    probe: bool,
}

#[derive(Clone, Copy, Debug)]
enum Job {
    Chunk { msg: u64, send: u32, chunk: u32, epoch: u32 },
    Guard { msg: u64 },
}

/// SDR's sender.
pub struct SdrSender {
    cfg: ConnConfig,
    sdr: SdrConfig,
    wire: Wire,
    /// UC PSN of each data QP (generation · C + channel).
    psns: Vec<u32>,
    msgs: VecDeque<OutMsg>,
    next_seq: u64,
    /// CTSes seen: every `msg_seq` below `cts_upto`, and `cts_extra`.
    cts_upto: u64,
    cts_extra: BTreeSet<u64>,
    /// Packets to resend, in order.
    retx: VecDeque<Resend>,
    timers: HashMap<u64, Job>,
    next_token: u64,
    failed: bool,
}

impl SdrSender {
    pub fn new(cfg: &ConnConfig, sdr: &SdrConfig) -> SdrSender {
        SdrSender {
            cfg: cfg.clone(),
            sdr: sdr.clone(),
            wire: Wire::new(cfg, true),
            psns: vec![cfg.start_psn & 0xff_ffff; (sdr.generations * sdr.channels) as usize],
            msgs: VecDeque::new(),
            next_seq: 0,
            cts_upto: 0,
            cts_extra: BTreeSet::new(),
            retx: VecDeque::new(),
            timers: HashMap::new(),
            next_token: 0,
            failed: false,
        }
    }

    fn msg_index(&self, id: u64) -> Option<usize> {
        let front = self.msgs.front()?.msg.id;
        let i = id.checked_sub(front)? as usize;
        (i < self.msgs.len()).then_some(i)
    }

    /// The message and send of `msg_seq` `seq`.
    fn send_of(&self, seq: u64) -> Option<(usize, usize)> {
        self.msgs.iter().enumerate().find_map(|(i, m)| {
            let s = seq.checked_sub(m.base)? as usize;
            (s < m.sends.len()).then_some((i, s))
        })
    }

    fn cts_ok(&self, seq: u64) -> bool {
        seq < self.cts_upto || self.cts_extra.contains(&seq)
    }

    /// The next first-pass packet: the first send (in posting order) with packets left, if its
    /// CTS has come.
    fn next_first_pass(&self) -> Option<(usize, usize)> {
        for (i, m) in self.msgs.iter().enumerate().filter(|(_, m)| !m.done) {
            if let Some(s) = m.sends.iter().position(|s| s.next < s.s.packets) {
                return self.cts_ok(m.base + s as u64).then_some((i, s));
            }
        }
        None
    }

    fn timer(&mut self, at: Nanos, job: Job, out: &mut Vec<Action>) {
        let token = self.next_token;
        self.next_token += 1;
        self.timers.insert(token, job);
        out.push(Action::Timer { at, token });
    }

    /// Queues the packets of chunk `c` of send `s` of message index `i` for resending.
    fn queue_chunk(&mut self, i: usize, s: usize, c: u32, reason: RetxReason) {
        let n = self.sdr.chunk_packets;
        let m = &mut self.msgs[i];
        let os = &mut m.sends[s];
        if os.acked[c as usize] || os.queued[c as usize] {
            return;
        }
        os.queued[c as usize] = true;
        os.sr = true;
        for p in os.s.chunk_packets(c, n) {
            self.retx.push_back(Resend { msg: m.msg.id, send: s as u32, pkt: p, reason, probe: false });
        }
    }

    /// Payload of packet `p` of send `s` of message index `i` (parity encoded on first use).
    fn packet_payload(&mut self, i: usize, s: usize, p: u32) -> Vec<u8> {
        let (mtu, n) = (self.cfg.mtu, self.sdr.chunk_packets);
        let m = &mut self.msgs[i];
        let send = m.sends[s].s;
        match send.role {
            Role::Whole | Role::Data(_) => {
                payload(m.msg.id, send.byte_off + p as u64 * mtu as u64, send.packet_len(p, mtu))
            }
            Role::Parity(j) => {
                let SdrMode::Ec { k, m: mm, code } = self.sdr.mode else { unreachable!("parity without EC") };
                let shard = (n * mtu) as usize;
                if m.parity[j as usize].is_none() {
                    let d = m.sends[2 * j as usize].s;
                    let chunks = (0..d.chunks)
                        .map(|c| {
                            let off = c as u64 * shard as u64;
                            payload(m.msg.id, d.byte_off + off, (d.bytes - off).min(shard as u64) as u32)
                        })
                        .collect::<Vec<_>>();
                    m.parity[j as usize] = Some(code::encode(code, k, mm, &chunks, shard));
                }
                let shards = m.parity[j as usize].as_ref().expect("encoded");
                let at = (p % n * mtu) as usize;
                shards[(p / n) as usize][at..at + mtu as usize].to_vec()
            }
        }
    }

    /// Sends packet `p` of send `s` of message index `i` now.
    fn transmit(&mut self, i: usize, s: usize, p: u32, retx: Option<RetxReason>, out: &mut Vec<Action>) {
        let data = self.packet_payload(i, s, p);
        let m = &self.msgs[i];
        let seq = m.base + s as u64;
        let (msg_id, gen) = slot_of(&self.cfg, &self.sdr, seq);
        let chan = p % self.sdr.channels;
        let q = (gen * self.sdr.channels + chan) as usize;
        let psn = self.psns[q];
        self.psns[q] = (psn + 1) & 0xff_ffff;
        let mut repr = DataRepr::new(self.cfg.params.sdr_split, msg_id, p, m.user_imm);
        repr.r_key = R_KEY;
        let qpn = self.sdr.data_qpn(&self.cfg, gen, chan);
        let roce = repr.roce(&self.cfg.params, self.cfg.mtu, qpn, psn, &data);
        let frame = self.wire.frame(self.cfg.tos, roce);
        out.push(Action::Transmit { frame, info: TxInfo { psn, msg: Some(m.msg.id), retx } });
    }

    /// After packet `p` of send `s` left: a chunk on RTOs arms its timer when its last packet
    /// leaves.
    fn after_packet(&mut self, now: Nanos, i: usize, s: usize, p: u32, out: &mut Vec<Action>) {
        let n = self.sdr.chunk_packets;
        let c = Send::chunk_of(p, n);
        let msg = self.msgs[i].msg.id;
        let os = &mut self.msgs[i].sends[s];
        if !os.sr || p + 1 != os.s.chunk_packets(c, n).end {
            return;
        }
        os.queued[c as usize] = false;
        os.epoch[c as usize] += 1;
        let job = Job::Chunk { msg, send: s as u32, chunk: c, epoch: os.epoch[c as usize] };
        let at = now + self.sdr.rto_ns();
        self.timer(at, job, out);
    }

    /// Data submessage `j` of message index `i` falls back to selective repeat: its chunks are
    /// resent (`reason`) under RTOs; what was left of its and its parity's first pass is not sent
    /// (a first pass held up by a lost CTS must not hold the message up: the resends need none).
    fn fall_back(&mut self, i: usize, j: usize, reason: RetxReason) {
        for s in [2 * j, 2 * j + 1] {
            let os = &mut self.msgs[i].sends[s];
            os.next = os.s.packets;
        }
        for c in 0..self.msgs[i].sends[2 * j].s.chunks {
            self.queue_chunk(i, 2 * j, c, reason);
        }
    }

    fn complete(&mut self, i: usize, out: &mut Vec<Action>) {
        let m = &mut self.msgs[i];
        if m.done {
            return;
        }
        m.done = true;
        m.parity.clear();
        out.push(Action::Completed { msg: m.msg.id });
        while self.msgs.front().is_some_and(|m| m.done) {
            self.msgs.pop_front();
        }
        let front = self.msgs.front().map(|m| m.msg.id);
        self.retx.retain(|r| front.is_some_and(|f| r.msg >= f));
    }

    /// The EC guard of message `m`, from its first packet ([`SdrConfig::guard_ns`]).
    fn guard_ns(&self, m: &OutMsg) -> Nanos {
        self.sdr.guard_ns(self.cfg.mtu, layout::chunks(m.msg.len, self.cfg.mtu, self.sdr.chunk_packets))
    }

    fn on_ctrl(&mut self, ctrl: Ctrl, body: &[u8], out: &mut Vec<Action>) {
        // 32-bit msg_seq back to the run's 64-bit count, near what the sender has assigned.
        let seq = {
            let near = self.cts_upto;
            let d = ctrl.msg_seq().wrapping_sub(near as u32) as i32 as i64;
            (near as i64 + d).max(0) as u64
        };
        match ctrl {
            Ctrl::Cts { .. } => {
                if seq >= self.cts_upto && seq < self.next_seq + message_ids(&self.cfg) {
                    self.cts_extra.insert(seq);
                }
                while self.cts_extra.remove(&self.cts_upto) {
                    self.cts_upto += 1;
                }
                // The receiver posts `seq` only once every receive before `seq + 1 − 2^ID` has
                // completed: messages wholly below that are complete, whatever final ACK was lost.
                let done_below = (seq + 1).saturating_sub(message_ids(&self.cfg));
                while let Some(i) =
                    self.msgs.iter().position(|m| !m.done && m.base + (m.sends.len() as u64) <= done_below)
                {
                    self.complete(i, out);
                }
            }
            Ctrl::SrAck { cum_ack, .. } => {
                let Some((i, s)) = self.send_of(seq) else { return };
                let os = &mut self.msgs[i].sends[s];
                for c in 0..cum_ack.min(os.s.chunks) {
                    os.acked[c as usize] = true;
                }
                for c in ctrl.sacked(body).filter(|&c| c < os.s.chunks) {
                    os.acked[c as usize] = true;
                }
                let all = os.acked.iter().all(|&a| a);
                if all && self.msgs[i].sends[s].s.role == Role::Whole {
                    self.complete(i, out);
                }
            }
            Ctrl::SrNack { .. } => {
                let Some((i, s)) = self.send_of(seq) else { return };
                let chunks = self.msgs[i].sends[s].s.chunks;
                for c in ctrl.indices(body).filter(|&c| c < chunks).collect::<Vec<_>>() {
                    self.queue_chunk(i, s, c, RetxReason::Sack);
                }
            }
            Ctrl::EcAck { .. } => {
                if let Some(i) = self.msgs.iter().position(|m| m.base == seq) {
                    self.complete(i, out);
                }
            }
            Ctrl::EcNack { .. } => {
                let Some(i) = self.msgs.iter().position(|m| m.base == seq && !m.done) else { return };
                self.msgs[i].fallback = true;
                let subs = self.msgs[i].sends.len() as u32 / 2;
                for j in ctrl.indices(body).filter(|&j| j < subs).collect::<Vec<_>>() {
                    self.fall_back(i, j as usize, RetxReason::Sack);
                }
            }
        }
    }
}

impl Endpoint for SdrSender {
    fn on_frame(&mut self, _now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        let Some(p) = frame.roce() else { return };
        if !matches!(p.opcode().0, OPCODE_CTRL_UC | OPCODE_CTRL_UD) || p.bth().dest_qp() != self.cfg.requester.qpn {
            return;
        }
        let body = p.payload();
        let mut warnings = Warnings::default();
        if let Some(ctrl) = Ctrl::parse(body, p.payload_len(), &mut warnings) {
            self.on_ctrl(ctrl, body, out);
        }
    }

    fn on_timer(&mut self, now: Nanos, token: u64, out: &mut Vec<Action>) {
        let Some(job) = self.timers.remove(&token) else { return };
        match job {
            Job::Chunk { msg, send, chunk, epoch } => {
                let Some(i) = self.msg_index(msg) else { return };
                let os = &self.msgs[i].sends[send as usize];
                if !self.msgs[i].done && os.epoch[chunk as usize] == epoch {
                    self.queue_chunk(i, send as usize, chunk, RetxReason::Timeout);
                }
            }
            Job::Guard { msg } => {
                let Some(i) = self.msg_index(msg) else { return };
                if self.msgs[i].done {
                    return;
                }
                let m = &self.msgs[i];
                let injecting =
                    m.sends.iter().position(|s| s.next < s.s.packets).is_some_and(|s| self.cts_ok(m.base + s as u64));
                if !m.fallback && injecting {
                    // The first pass is still going (a paced NIC), not held up by a lost CTS:
                    // wait for it, then the FTO.
                    let at = now + self.guard_ns(m);
                    return self.timer(at, Job::Guard { msg }, out);
                }
                let first = !self.msgs[i].fallback;
                self.msgs[i].fallback = true;
                if first {
                    for j in 0..self.msgs[i].sends.len() / 2 {
                        self.fall_back(i, j, RetxReason::Timeout);
                    }
                } else {
                    // Still no EC_ACK: a probe (packet 0 of D0) makes a receiver that completed
                    // the message say it again (a late packet is answered with its final ACK).
                    self.retx.push_back(Resend { msg, send: 0, pkt: 0, reason: RetxReason::Timeout, probe: true });
                }
                let at = now + self.sdr.rto_ns();
                self.timer(at, Job::Guard { msg }, out);
            }
        }
    }
}

impl Requester for SdrSender {
    fn post(&mut self, _now: Nanos, msg: Message, out: &mut Vec<Action>) {
        if self.failed {
            return;
        }
        if msg.op == Op::Read {
            return crate::common::fail(&mut self.failed, "SDR models no RDMA READ", out);
        }
        if self.sdr.lengths.of(msg.id) != Some(msg.len) {
            // The receiver would post a receive of another length: it could never complete.
            return crate::common::fail(&mut self.failed, "SDR message longer or shorter than its posted receive", out);
        }
        let ec = self.sdr.ec();
        let sends = layout::sends(msg.len, self.cfg.mtu, self.sdr.chunk_packets, ec);
        let base = self.next_seq;
        self.next_seq += sends.len() as u64;
        let sr = ec.is_none();
        let subs = sends.len() / 2;
        self.msgs.push_back(OutMsg {
            msg,
            base,
            sends: sends
                .into_iter()
                .map(|s| OutSend {
                    s,
                    next: 0,
                    acked: vec![false; s.chunks as usize],
                    queued: vec![false; s.chunks as usize],
                    epoch: vec![0; s.chunks as usize],
                    sr,
                })
                .collect(),
            user_imm: if msg.op == Op::WriteImm { imm_data(msg.id) } else { 0 },
            parity: (0..subs).map(|_| None).collect(),
            fallback: false,
            done: false,
        });
    }

    fn idle(&self) -> bool {
        self.failed || self.msgs.iter().all(|m| m.done)
    }

    fn ready(&self) -> bool {
        !self.failed && (!self.retx.is_empty() || self.next_first_pass().is_some())
    }

    fn pull(&mut self, now: Nanos, out: &mut Vec<Action>) -> bool {
        if self.failed {
            return false;
        }
        while let Some(Resend { msg, send: s, pkt: p, reason, probe }) = self.retx.pop_front() {
            let Some(i) = self.msg_index(msg) else { continue };
            let c = Send::chunk_of(p, self.sdr.chunk_packets) as usize;
            let done = self.msgs[i].done;
            let os = &mut self.msgs[i].sends[s as usize];
            if done || (os.acked[c] && !probe) {
                os.queued[c] = false;
                continue;
            }
            self.transmit(i, s as usize, p, Some(reason), out);
            self.after_packet(now, i, s as usize, p, out);
            return true;
        }
        let Some((i, s)) = self.next_first_pass() else { return false };
        let p = self.msgs[i].sends[s].next;
        self.msgs[i].sends[s].next += 1;
        let first_of_msg = s == 0 && p == 0;
        self.transmit(i, s, p, None, out);
        self.after_packet(now, i, s, p, out);
        if first_of_msg && self.sdr.ec().is_some() {
            let at = now + self.guard_ns(&self.msgs[i]);
            let msg = self.msgs[i].msg.id;
            self.timer(at, Job::Guard { msg }, out);
        }
        true
    }
}
