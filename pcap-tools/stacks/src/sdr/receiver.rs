//! SDR's receiver (the responder): posted receives and their CTS, the per-packet and chunk
//! bitmaps, SR_ACK / SR_NACK, EC recovery with the FTO and EC_NACK, late packets (module docs
//! of [`super`]; seed 001 §3.1, §4.1).

use std::collections::{BTreeMap, HashMap};

use rocescope_codec::build::RoceRepr;
use rocescope_codec::ext::sdr::{sack_bitmap, CtrlRepr, Data, OPCODE_CTRL_UC, OPCODE_DATA};
use rocescope_codec::Frame;

use super::code;
use super::layout::{self, Role, Send};
use super::{message_ids, slot_of, SdrConfig, SdrMode};
use crate::common::{is_content, Wire};
use crate::{Action, ConnConfig, Endpoint, Nanos, TxInfo};

/// What a message-id slot holds: the receive posted there last.
#[derive(Clone, Copy, Debug)]
struct Slot {
    seq: u64,
    gen: u32,
    msg: u64,
    send: u32,
    /// Its message completed (what a late packet of it is told: `finals`).
    done: bool,
}

/// A completed message's last word.
#[derive(Clone, Copy, Debug)]
enum FinalAck {
    /// SR_ACK of `seq` with every one of its `chunks`.
    Sr { seq: u64, chunks: u32 },
    /// EC_ACK of `base`.
    Ec { base: u64 },
}

/// One posted receive (one SDR send of a message).
#[derive(Debug)]
struct InSend {
    s: Send,
    got: Vec<bool>,
    /// Packets still missing, per chunk.
    missing: Vec<u32>,
    /// Chunks complete (all their packets), in a row from 0 counted by `cum`.
    done: Vec<bool>,
    cum: u32,
    /// SR_NACK variant: chunks already named.
    nacked: Vec<bool>,
    /// EC: the chunks' bytes while their submessage is not yet recovered.
    bytes: Vec<Option<Vec<u8>>>,
}

/// A message being received.
#[derive(Debug)]
struct InMsg {
    len: u32,
    base: u64,
    sends: Vec<InSend>,
    intact: bool,
    started: bool,
    /// EC: the FTO expired (the EC_NACK went out): data submessages are acknowledged by SR_ACK.
    fto_fired: bool,
    /// EC: data submessages recovered.
    recovered: Vec<bool>,
}

/// SDR's receiver.
pub struct SdrReceiver {
    cfg: ConnConfig,
    sdr: SdrConfig,
    wire: Wire,
    ctrl_psn: u32,
    /// The next message to post receives for, and the next `msg_seq`.
    next_msg: u64,
    next_seq: u64,
    slots: HashMap<u32, Slot>,
    /// The final ACK of the last message completed under each (message id, generation): what a
    /// late packet of it is answered with, after its slot moved on, and when it was last said
    /// (at most once a round trip: the parity of a message recovered before it arrived is late
    /// too). At most 2^ID · G entries.
    finals: HashMap<(u32, u32), (FinalAck, Nanos)>,
    msgs: BTreeMap<u64, InMsg>,
    /// Timers: token → what it is for.
    timers: HashMap<u64, RxJob>,
    next_token: u64,
    /// Coalesced SR_ACKs due: (message, send); the timer is armed while non-empty.
    acks_due: Vec<(u64, u32)>,
    /// Packets discarded as late (completed message or stale generation).
    pub late: u64,
}

/// What a receiver's timer is for.
#[derive(Clone, Copy, Debug)]
enum RxJob {
    /// The message's FTO (erasure coding).
    Fto(u64),
    /// The CTS refresh of the message's receives, next after `wait`.
    Cts { msg: u64, wait: Nanos },
}

/// CTS refreshes back off by doubling up to this many RTOs.
const CTS_MAX_BACKOFF: u64 = 64;

/// The token of the SR_ACK coalescing timer.
const ACK_TOKEN: u64 = u64::MAX;

impl SdrReceiver {
    pub fn new(cfg: &ConnConfig, sdr: &SdrConfig) -> SdrReceiver {
        SdrReceiver {
            cfg: cfg.clone(),
            sdr: sdr.clone(),
            wire: Wire::new(cfg, false),
            ctrl_psn: cfg.start_psn & 0xff_ffff,
            next_msg: 0,
            next_seq: 0,
            slots: HashMap::new(),
            finals: HashMap::new(),
            msgs: BTreeMap::new(),
            timers: HashMap::new(),
            next_token: 0,
            acks_due: Vec::new(),
            late: 0,
        }
    }

    fn timer(&mut self, at: Nanos, job: RxJob, out: &mut Vec<Action>) {
        let token = self.next_token;
        self.next_token += 1;
        self.timers.insert(token, job);
        out.push(Action::Timer { at, token });
    }

    /// A CTS refresh of `msg`: the CTS of its first receive whose send has not begun (no packet
    /// of it arrived), if it is the connection's first such (the sender sends in order, so
    /// that is the one it may be waiting for): `Some(true)` sent, `Some(false)` an earlier
    /// message's turn, `None` when every send of `msg` has begun.
    fn refresh_cts(&mut self, msg: u64, out: &mut Vec<Action>) -> Option<bool> {
        let unstarted = |m: &InMsg| m.sends.iter().position(|s| !s.got.iter().any(|&g| g));
        let i = self.msgs.get(&msg).and_then(unstarted)?;
        if self.msgs.range(..msg).any(|(_, m)| unstarted(m).is_some()) {
            return Some(false);
        }
        let m = &self.msgs[&msg];
        let (seq, buf_len) = (m.base + i as u64, m.sends[i].s.bytes);
        self.ctrl(CtrlRepr::Cts { msg_seq: seq as u32, buf_len }, out);
        Some(true)
    }

    fn ctrl(&mut self, c: CtrlRepr<'_>, out: &mut Vec<Action>) {
        let body = c.to_vec();
        let psn = self.ctrl_psn;
        self.ctrl_psn = (psn + 1) & 0xff_ffff;
        let roce = RoceRepr::new(OPCODE_CTRL_UC, self.wire.peer_qpn(), psn).with_payload(&body);
        let frame = self.wire.frame(self.cfg.tos, roce);
        out.push(Action::Transmit { frame, info: TxInfo { psn, msg: None, retx: None } });
    }

    /// Posts receives (and sends their CTS) for up to `recv_window` messages ahead, while the
    /// message ids allow. The control path is unreliable: the first receive whose send has not
    /// begun has its CTS sent again one RTO after its message was posted, then 2, 4, … up to
    /// 64 RTOs apart (a lost CTS costs about an RTO; a sender with nothing to send yet, a few
    /// CTSes).
    fn post_receives(&mut self, now: Nanos, out: &mut Vec<Action>) {
        let ids = message_ids(&self.cfg);
        let ec = self.sdr.ec();
        while self.msgs.len() < self.sdr.recv_window as usize {
            let Some(len) = self.sdr.lengths.of(self.next_msg) else { return };
            let sends = layout::sends(len, self.cfg.mtu, self.sdr.chunk_packets, ec);
            // A message id is reused only once the receive posted there before is complete: every
            // new `msg_seq` within 2^ID of the oldest open one.
            let oldest = self.msgs.values().next().map_or(self.next_seq, |m| m.base);
            if self.next_seq + sends.len() as u64 > oldest + ids && !self.msgs.is_empty() {
                return;
            }
            let (msg, base) = (self.next_msg, self.next_seq);
            let rto = self.sdr.rto_ns().max(1);
            self.timer(now + rto, RxJob::Cts { msg, wait: rto }, out);
            self.next_msg += 1;
            self.next_seq += sends.len() as u64;
            let subs = sends.len() / 2;
            for (i, s) in sends.iter().enumerate() {
                let seq = base + i as u64;
                let (id, gen) = slot_of(&self.cfg, &self.sdr, seq);
                self.slots.insert(id, Slot { seq, gen, msg, send: i as u32, done: false });
                self.ctrl(CtrlRepr::Cts { msg_seq: seq as u32, buf_len: s.bytes }, out);
            }
            let sends = sends
                .into_iter()
                .map(|s| InSend {
                    s,
                    got: vec![false; s.packets as usize],
                    missing: (0..s.chunks).map(|c| s.chunk_packets(c, self.sdr.chunk_packets).len() as u32).collect(),
                    done: vec![false; s.chunks as usize],
                    cum: 0,
                    nacked: vec![false; s.chunks as usize],
                    bytes: Vec::new(),
                })
                .collect();
            self.msgs.insert(
                msg,
                InMsg {
                    len,
                    base,
                    sends,
                    intact: true,
                    started: false,
                    fto_fired: false,
                    recovered: vec![false; subs],
                },
            );
        }
    }

    /// The SR_ACK of send `s` of message `msg`: cumulative ACK and as much bitmap as fits.
    fn sr_ack(&mut self, msg: u64, s: u32, out: &mut Vec<Action>) {
        let Some(m) = self.msgs.get(&msg) else { return };
        let is = &m.sends[s as usize];
        let cap = 8 * (self.cfg.mtu as usize).saturating_sub(16) as u32;
        let bits = (is.s.chunks - is.cum).min(cap);
        let mut map = vec![0u8; bits.div_ceil(8) as usize];
        sack_bitmap(is.cum, bits, |c| is.done.get(c as usize).copied().unwrap_or(false), &mut map);
        let (seq, cum) = (m.base + s as u64, is.cum);
        self.ctrl(CtrlRepr::SrAck { msg_seq: seq as u32, cum_ack: cum, sack_bits: bits, sack: &map }, out);
    }

    fn ack_chunk(&mut self, now: Nanos, msg: u64, s: u32, out: &mut Vec<Action>) {
        if self.sdr.ack_period_ns == 0 {
            return self.sr_ack(msg, s, out);
        }
        if self.acks_due.is_empty() {
            out.push(Action::Timer { at: now + self.sdr.ack_period_ns, token: ACK_TOKEN });
        }
        if !self.acks_due.contains(&(msg, s)) {
            self.acks_due.push((msg, s));
        }
    }

    /// EC: tries to recover data submessage `j` of `msg` from what arrived.
    fn try_recover(&mut self, msg: u64, j: usize) {
        let SdrMode::Ec { k, m: mm, code } = self.sdr.mode else { return };
        let shard = (self.sdr.chunk_packets * self.cfg.mtu) as usize;
        let Some(m) = self.msgs.get_mut(&msg) else { return };
        if m.recovered[j] {
            return;
        }
        let (d, p) = (&m.sends[2 * j], &m.sends[2 * j + 1]);
        let have_d = |i: u32| d.done.get(i as usize).is_none_or(|&x| x);
        let have_p = |r: u32| p.done.get(r as usize).is_some_and(|&x| x);
        if !code::recoverable(code, k, mm, have_d, have_p) {
            return;
        }
        let dsend = d.s;
        if d.done.iter().all(|&x| x) {
            m.recovered[j] = true;
        } else {
            let take = |s: &mut InSend| -> Vec<Option<Vec<u8>>> {
                (0..s.s.chunks as usize)
                    .map(|c| if s.done[c] { s.bytes.get_mut(c).and_then(Option::take) } else { None })
                    .collect()
            };
            let mut data = take(&mut m.sends[2 * j]);
            let parity = take(&mut m.sends[2 * j + 1]);
            let ok = code::decode(code, k, mm, &mut data, &parity, shard);
            // Each rebuilt chunk must be the message's bytes (the modelled memory).
            for (c, bytes) in data.iter().enumerate() {
                let off = c as u64 * shard as u64;
                let len = (dsend.bytes - off).min(shard as u64) as usize;
                let good =
                    bytes.as_ref().is_some_and(|b| b.len() >= len && is_content(msg, dsend.byte_off + off, &b[..len]));
                m.intact &= good && ok;
            }
            m.recovered[j] = true;
        }
        for s in [2 * j, 2 * j + 1] {
            m.sends[s].bytes = Vec::new();
        }
    }

    /// The message is whole: deliver it, say so, free its slots and post more receives.
    fn complete(&mut self, now: Nanos, msg: u64, out: &mut Vec<Action>) {
        let Some(m) = self.msgs.remove(&msg) else { return };
        out.push(Action::Delivered { msg, len: m.len, intact: m.intact });
        let last = match self.sdr.mode {
            SdrMode::Sr { .. } => FinalAck::Sr { seq: m.base, chunks: m.sends[0].s.chunks },
            SdrMode::Ec { .. } => FinalAck::Ec { base: m.base },
        };
        self.say(last, out);
        for i in 0..m.sends.len() as u64 {
            let (id, gen) = slot_of(&self.cfg, &self.sdr, m.base + i);
            if let Some(s) = self.slots.get_mut(&id).filter(|s| s.seq == m.base + i) {
                s.done = true;
            }
            self.finals.insert((id, gen), (last, now));
        }
        self.acks_due.retain(|a| a.0 != msg);
        self.post_receives(now, out);
    }

    fn say(&mut self, last: FinalAck, out: &mut Vec<Action>) {
        match last {
            FinalAck::Sr { seq, chunks } => {
                self.ctrl(CtrlRepr::SrAck { msg_seq: seq as u32, cum_ack: chunks, sack_bits: 0, sack: &[] }, out)
            }
            FinalAck::Ec { base } => self.ctrl(CtrlRepr::EcAck { msg_seq: base as u32 }, out),
        }
    }

    fn on_data(&mut self, now: Nanos, qpn: u32, d: Data, payload_bytes: &[u8], out: &mut Vec<Action>) {
        let index = qpn.wrapping_sub(self.cfg.responder.qpn) & 0xff_ffff;
        if index >= self.sdr.generations * self.sdr.channels {
            return;
        }
        let gen = index / self.sdr.channels;
        let slot = self.slots.get(&d.msg_id).copied().filter(|s| s.gen == gen && !s.done);
        let Some(slot) = slot else {
            // Late: of a completed message (the NULL key takes the bytes), or of an older
            // generation than the slot's (its completion is dropped, §3.1). The sender may
            // have missed the message's final ACK: say it again.
            self.late += 1;
            let rtt = self.sdr.rtt_ns;
            if let Some((last, said)) = self.finals.get_mut(&(d.msg_id, gen)) {
                if now >= *said + rtt {
                    *said = now;
                    let last = *last;
                    self.say(last, out);
                }
            }
            return;
        };
        let (n, mtu) = (self.sdr.chunk_packets, self.cfg.mtu);
        let nack_variant = matches!(self.sdr.mode, SdrMode::Sr { nack: true });
        let ec = matches!(self.sdr.mode, SdrMode::Ec { .. });
        let Some(m) = self.msgs.get_mut(&slot.msg) else { return };
        let s = slot.send as usize;
        let is = &mut m.sends[s];
        let p = d.pkt_off;
        if p >= is.s.packets {
            return;
        }
        if is.got[p as usize] {
            // A copy of a packet the bitmap has: the sender resent it on a timeout (or after an
            // EC_NACK) and does not know; on a send it runs selective repeat on, tell it.
            let sr = match is.s.role {
                Role::Whole => true,
                Role::Data(_) => m.fto_fired,
                Role::Parity(_) => false,
            };
            if sr {
                self.ack_chunk(now, slot.msg, slot.send, out);
            }
            return;
        }
        let want_len = is.s.packet_len(p, mtu) as usize;
        if payload_bytes.len() != want_len {
            m.intact = false;
        }
        is.got[p as usize] = true;
        let c = Send::chunk_of(p, n);
        match is.s.role {
            Role::Whole | Role::Data(_) => {
                m.intact &= is_content(slot.msg, is.s.byte_off + p as u64 * mtu as u64, payload_bytes);
            }
            Role::Parity(_) => {}
        }
        if ec {
            // Keep the bytes for decoding (a chunk at its place in its shard).
            let shard = (n * mtu) as usize;
            if is.bytes.is_empty() {
                is.bytes = vec![None; is.s.chunks as usize];
            }
            let buf = is.bytes[c as usize].get_or_insert_with(|| vec![0u8; shard]);
            let at = (p % n * mtu) as usize;
            let l = payload_bytes.len().min(shard - at);
            buf[at..at + l].copy_from_slice(&payload_bytes[..l]);
        }
        let first = !m.started;
        m.started = true;
        is.missing[c as usize] -= 1;
        let chunk_done = is.missing[c as usize] == 0;
        if chunk_done {
            is.done[c as usize] = true;
            while (is.cum as usize) < is.done.len() && is.done[is.cum as usize] {
                is.cum += 1;
            }
        }
        let role = is.s.role;
        let msg = slot.msg;
        if first && ec {
            let len = self.msgs.get(&msg).expect("just seen").len;
            let at = now + self.sdr.fto_ns(mtu, layout::chunks(len, mtu, n));
            self.timer(at, RxJob::Fto(msg), out);
        }
        if !chunk_done {
            return;
        }
        match role {
            Role::Whole => {
                let m = self.msgs.get_mut(&msg).expect("just seen");
                let is = &mut m.sends[0];
                if is.cum == is.s.chunks {
                    return self.complete(now, msg, out);
                }
                if nack_variant {
                    let holes: Vec<u32> =
                        (is.cum..c).filter(|&h| !is.done[h as usize] && !is.nacked[h as usize]).collect();
                    for &h in &holes {
                        is.nacked[h as usize] = true;
                    }
                    if !holes.is_empty() {
                        let seq = m.base as u32;
                        self.ctrl(CtrlRepr::SrNack { msg_seq: seq, indices: &holes }, out);
                    }
                }
                self.ack_chunk(now, msg, 0, out);
            }
            Role::Data(j) | Role::Parity(j) => {
                let fallback = self.msgs.get(&msg).is_some_and(|m| m.fto_fired);
                if fallback && matches!(role, Role::Data(_)) {
                    self.ack_chunk(now, msg, 2 * j, out);
                }
                self.try_recover(msg, j as usize);
                if self.msgs.get(&msg).is_some_and(|m| m.recovered.iter().all(|&r| r)) {
                    self.complete(now, msg, out);
                }
            }
        }
    }
}

impl Endpoint for SdrReceiver {
    fn on_frame(&mut self, now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        let Some(p) = frame.roce() else { return };
        if p.opcode().0 != OPCODE_DATA {
            return;
        }
        let Some(imm) = p.immdt() else { return };
        let d = Data::from_imm(self.cfg.params.sdr_split, imm.imm());
        let payload = p.payload();
        let payload = &payload[..payload.len().min(p.payload_len())];
        self.on_data(now, p.bth().dest_qp(), d, payload, out);
    }

    fn on_timer(&mut self, now: Nanos, token: u64, out: &mut Vec<Action>) {
        if token == ACK_TOKEN {
            for (msg, s) in std::mem::take(&mut self.acks_due) {
                self.sr_ack(msg, s, out);
            }
            return;
        }
        let msg = match self.timers.remove(&token) {
            Some(RxJob::Fto(msg)) => msg,
            Some(RxJob::Cts { msg, wait }) => {
                if let Some(sent) = self.refresh_cts(msg, out) {
                    // (Backing off only from what was sent: a refresh that waited for an earlier
                    // message's turn comes again as soon.)
                    let wait = if sent { (2 * wait).min(CTS_MAX_BACKOFF * self.sdr.rto_ns().max(1)) } else { wait };
                    self.timer(now + wait, RxJob::Cts { msg, wait }, out);
                }
                return;
            }
            None => return,
        };
        let Some(m) = self.msgs.get_mut(&msg) else { return };
        if m.fto_fired {
            return;
        }
        m.fto_fired = true;
        let failed: Vec<u32> = (0..m.recovered.len() as u32).filter(|&j| !m.recovered[j as usize]).collect();
        let base = m.base as u32;
        if !failed.is_empty() {
            self.ctrl(CtrlRepr::EcNack { msg_seq: base, indices: &failed }, out);
        }
        let _ = now;
    }

    fn start(&mut self, now: Nanos, out: &mut Vec<Action>) {
        self.post_receives(now, out);
    }
}
