//! Standard RoCE RC (IBTA Vol. 1 ch. 9 as RoCEv2 NICs implement it; seed 000 §2.1 "RNIC-GBN"):
//! Go-Back-N.
//!
//! Requester: segments SEND / WRITE / WRITE with Immediate into First/Middle/Last/Only packets
//! of `mtu` bytes (RETH on WRITE First/Only, ImmDt on the last packet of a WRITE with
//! Immediate), a READ into one READ Request (RETH) that takes as many PSNs as it has response
//! packets. The AckReq bit is set on the last packet of every message and on every
//! `bdp_packets / 4`-th packet. At most `bdp_packets` PSNs are outstanding (a READ larger than
//! that goes out alone). An ACK completes every message it covers; a NAK (PSN sequence error)
//! acknowledges what precedes its PSN and makes the requester resend everything from there
//! (`RetxReason::GoBack`); the local ACK timeout (IBTA: 4.096 µs · 2^t,
//! [`Timeouts::gbn_ns`](crate::Timeouts::gbn_ns); none when t = 0) resends everything from the
//! oldest unacknowledged PSN (`RetxReason::Timeout`) and, after `retry_cnt` consecutive expiries
//! without progress, puts the QP in error. Packets leave when the NIC pulls them
//! ([`Requester::pull`]): going back only moves the next PSN to pull, and the timer starts when
//! a packet reaches the wire (and restarts on every acknowledgement that makes progress). READ response data is checked and delivered
//! (`Delivered` then `Completed`) as it arrives in order; a missing response (a later response,
//! or an ACK past the READ) re-issues the READ from the missing PSN, once per gap.
//!
//! Responder: accepts only the expected PSN (ePSN); a later PSN gets one NAK (PSN sequence
//! error) per gap, then is silently dropped until the expected PSN arrives; an earlier PSN is a
//! duplicate (re-ACKed, or for a READ Request the responses are sent again). ACKs are coalesced:
//! one every `ack_every` packets and on AckReq; the AETH MSN counts completed messages (SEND,
//! WRITE and READ). READ responses carry an AETH on First/Last/Only.

use std::collections::VecDeque;

use rocescope_codec::build::RoceRepr;
use rocescope_codec::ib::{psn, AethRepr, RethRepr, Syndrome};
use rocescope_codec::Frame;

use super::common::{
    ack_req_due, digest, expected_digest, fail, npkts, payload, read_response_opcode, seg_len, unwrap24, Assembler,
    Pos, Rto, SendQueue, Wire,
};
use super::{remote_va, Action, ConnConfig, Endpoint, Message, Nanos, Op, Requester, RetxReason, TxInfo};
use super::{R_KEY, VA_BASE};

/// What the requester keeps about a READ's response data.
#[derive(Clone, Debug)]
struct ReadData {
    /// The response data seen so far matched.
    intact: bool,
    /// Bytes received.
    got: u64,
}

/// The RC requester.
pub struct GbnRequester {
    cfg: ConnConfig,
    wire: Wire,
    /// Posted and not completed, in PSN order.
    sq: SendQueue<ReadData>,
    /// Oldest PSN not acknowledged (for a READ: whose response has not arrived).
    snd_una: u32,
    /// Next PSN to transmit.
    snd_nxt: u32,
    /// One past the highest PSN ever transmitted.
    snd_max: u32,
    /// Why PSNs below `snd_max` are being sent again.
    reason: RetxReason,
    retries: u8,
    rto: Rto,
    failed: bool,
    /// The PSN the requester last went back to for a missing READ response.
    read_retry_at: Option<u32>,
    since_ackreq: u32,
}

impl GbnRequester {
    pub fn new(cfg: &ConnConfig) -> GbnRequester {
        let p = cfg.start_psn & psn::MASK;
        GbnRequester {
            cfg: cfg.clone(),
            wire: Wire::new(cfg, true),
            sq: SendQueue::new(p),
            snd_una: p,
            snd_nxt: p,
            snd_max: p,
            reason: RetxReason::GoBack,
            retries: 0,
            rto: Rto::new(cfg.timeouts.until_expiry),
            failed: false,
            read_retry_at: None,
            since_ackreq: 0,
        }
    }

    fn bdp(&self) -> u32 {
        self.cfg.bdp_packets.max(1)
    }

    /// Transmits the request packet at `p`; returns the PSN after it.
    fn send_request(&mut self, p: u32, out: &mut Vec<Action>) -> u32 {
        let i = self.sq.find(p).expect("PSN of a posted message");
        let (bdp, tos, mtu) = (self.bdp(), self.cfg.tos, self.cfg.mtu);
        let w = &self.sq[i];
        let msg = w.msg;
        let retx = psn::lt(p, self.snd_max).then_some(self.reason);
        let (frame, next) = if msg.op == Op::Read {
            let off = psn::diff(w.first, p) as u64 * mtu as u64;
            let mut r = RoceRepr::new(0x0C, self.wire.peer_qpn(), p);
            r.reth = Some(RethRepr {
                va: remote_va(msg.id) + off,
                r_key: R_KEY,
                dma_len: (msg.len as u64).saturating_sub(off) as u32,
            });
            (self.wire.frame(tos, r), psn::add(w.first, w.n))
        } else {
            let since = &mut self.since_ackreq;
            let frame = self.wire.request(tos, w, p, mtu, false, |r, pos| r.bth.ack_req = ack_req_due(since, pos, bdp));
            (frame, psn::add(p, 1))
        };
        out.push(Action::Transmit { frame, info: TxInfo { psn: p, msg: Some(msg.id), retx } });
        next
    }

    /// The window allows the packet at `snd_nxt` (a READ Request needs room for all its
    /// responses, unless nothing is outstanding).
    fn can_send(&self) -> bool {
        if self.failed || self.snd_nxt == self.sq.next_psn() {
            return false;
        }
        let Some(i) = self.sq.find(self.snd_nxt) else { return false };
        let w = &self.sq[i];
        let need = if w.msg.op == Op::Read { psn::diff(self.snd_nxt, w.last()) as u32 + 1 } else { 1 };
        let outstanding = psn::diff(self.snd_una, self.snd_nxt).max(0) as u32;
        outstanding == 0 || outstanding + need <= self.bdp()
    }

    /// (Re)starts the local ACK timer, if it has a value.
    fn arm(&mut self, now: Nanos, restart: bool, out: &mut Vec<Action>) {
        let Some(t) = self.cfg.timeouts.gbn_ns() else { return };
        if restart {
            self.rto.arm(now, t, out);
        } else {
            self.rto.ensure(now, t, out);
        }
    }

    /// Acknowledges SEND/WRITE PSNs up to `a` inclusive (stops at a READ, which only its
    /// responses complete).
    fn ack_through(&mut self, a: u32) {
        while psn::diff(self.snd_una, a) >= 0 {
            let Some(i) = self.sq.find(self.snd_una) else { break };
            let w = &self.sq[i];
            if w.msg.op == Op::Read {
                break;
            }
            let last = w.last();
            self.snd_una = if psn::diff(last, a) >= 0 { psn::add(last, 1) } else { psn::add(a, 1) };
        }
    }

    /// After `snd_una` may have moved from `old`: completions, timer, retry counter.
    fn progress(&mut self, now: Nanos, old: u32, out: &mut Vec<Action>) {
        if self.snd_una == old {
            return;
        }
        self.retries = 0;
        self.read_retry_at = None;
        if psn::lt(self.snd_nxt, self.snd_una) {
            self.snd_nxt = self.snd_una;
        }
        while let Some(w) = self.sq.pop_acked(self.snd_una) {
            if w.msg.op == Op::Read {
                let intact = w.extra.intact && w.extra.got == w.msg.len as u64;
                out.push(Action::Delivered { msg: w.msg.id, len: w.msg.len, intact });
            }
            out.push(Action::Completed { msg: w.msg.id });
        }
        if psn::lt(self.snd_una, self.snd_max) {
            self.arm(now, true, out);
        } else {
            self.rto.disarm();
        }
    }

    /// Resend from `snd_una`: the next pulls take the PSNs again.
    fn go_back(&mut self, reason: RetxReason) {
        self.snd_nxt = self.snd_una;
        self.reason = reason;
        if self.una_is_read() {
            self.read_retry_at = Some(self.snd_una);
        }
    }

    /// `snd_una <= p <= snd_max`.
    fn in_window(&self, p: u32) -> bool {
        psn::diff(self.snd_una, p) >= 0 && psn::diff(p, self.snd_max) >= 0
    }

    /// The head unacknowledged PSN belongs to a READ.
    fn una_is_read(&self) -> bool {
        self.sq.find(self.snd_una).is_some_and(|i| self.sq[i].msg.op == Op::Read)
    }

    fn on_ack(&mut self, now: Nanos, a: u32, out: &mut Vec<Action>) {
        if !self.in_window(psn::add(a, 1)) {
            return;
        }
        let old = self.snd_una;
        self.ack_through(a);
        self.progress(now, old, out);
        // An ACK past a READ whose responses are missing: the responder executed it, the
        // responses were lost; re-issue the READ from the missing PSN (once per gap).
        if self.una_is_read() && psn::diff(self.snd_una, a) >= 0 && self.read_retry_at != Some(self.snd_una) {
            self.go_back(RetxReason::GoBack);
        }
    }

    fn on_nak(&mut self, now: Nanos, e: u32, out: &mut Vec<Action>) {
        if !self.in_window(e) {
            return;
        }
        let old = self.snd_una;
        self.ack_through(psn::add(e, psn::MASK));
        self.progress(now, old, out);
        if psn::lt(self.snd_una, self.snd_max) {
            self.go_back(RetxReason::GoBack);
        }
    }

    fn on_read_response(&mut self, now: Nanos, p: &rocescope_codec::ib::RocePacket<'_>, out: &mut Vec<Action>) {
        let r = p.bth().psn();
        if !(psn::diff(self.snd_una, r) >= 0 && psn::lt(r, self.snd_max)) {
            return; // a duplicate or a response to nothing outstanding
        }
        let old = self.snd_una;
        // A response implicitly acknowledges every request before it.
        self.ack_through(psn::add(r, psn::MASK));
        if r != self.snd_una {
            self.progress(now, old, out);
            if self.read_retry_at != Some(self.snd_una) && self.una_is_read() {
                self.go_back(RetxReason::GoBack);
            }
            return;
        }
        let Some(i) = self.sq.find(r) else { return };
        let mtu = self.cfg.mtu;
        let w = &mut self.sq[i];
        if w.msg.op != Op::Read {
            return;
        }
        let k = psn::diff(w.first, r) as u32;
        let want = seg_len(w.msg.len, mtu, k);
        let data = p.payload();
        let ok = p.opcode().0 == read_response_opcode(Pos::of(k, w.n))
            && p.payload_len() as u32 == want
            && data.len() == p.payload_len()
            && digest(data) == expected_digest(w.msg.id, k as u64 * mtu as u64, want);
        w.extra.intact &= ok;
        w.extra.got += p.payload_len() as u64;
        self.snd_una = psn::add(r, 1);
        self.progress(now, old, out);
    }
}

impl Endpoint for GbnRequester {
    fn on_frame(&mut self, now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        let Some(p) = frame.roce() else { return };
        if self.failed || p.bth().dest_qp() != self.cfg.requester.qpn {
            return;
        }
        match p.opcode().0 {
            0x11 => {
                let Some(aeth) = p.aeth() else { return };
                match aeth.syndrome() {
                    Syndrome::Ack { .. } => self.on_ack(now, p.bth().psn(), out),
                    Syndrome::Nak { code: 0 } => self.on_nak(now, p.bth().psn(), out),
                    Syndrome::Nak { .. } => fail(&mut self.failed, "remote NAK", out),
                    // RNR NAKs (no receive WQE) are not modelled: the responder never sends one.
                    Syndrome::RnrNak { .. } | Syndrome::Reserved(_) => {}
                }
            }
            0x0D..=0x10 => self.on_read_response(now, p, out),
            _ => {}
        }
    }

    fn on_timer(&mut self, now: Nanos, token: u64, out: &mut Vec<Action>) {
        if self.failed || !self.rto.fire(now, token, out) || !psn::lt(self.snd_una, self.snd_max) {
            return;
        }
        self.retries += 1;
        if self.retries > self.cfg.retry_cnt {
            return fail(&mut self.failed, "retry count exceeded", out);
        }
        self.go_back(RetxReason::Timeout);
    }
}

impl Requester for GbnRequester {
    fn post(&mut self, _now: Nanos, msg: Message, _out: &mut Vec<Action>) {
        self.sq.push(msg, self.cfg.mtu, ReadData { intact: true, got: 0 });
    }

    fn idle(&self) -> bool {
        self.failed || self.sq.is_empty()
    }

    fn ready(&self) -> bool {
        self.can_send()
    }

    fn pull(&mut self, now: Nanos, out: &mut Vec<Action>) -> bool {
        if !self.can_send() {
            return false;
        }
        let next = self.send_request(self.snd_nxt, out);
        self.snd_nxt = next;
        if psn::lt(self.snd_max, next) {
            self.snd_max = next;
        }
        self.arm(now, false, out);
        true
    }
}

/// A READ the responder executed, kept so a duplicate READ Request can be answered.
#[derive(Clone, Copy, Debug)]
struct ReadCtx {
    first: u32,
    n: u32,
    va: u64,
    len: u32,
}

/// The RC responder.
pub struct GbnResponder {
    cfg: ConnConfig,
    wire: Wire,
    epsn: u32,
    /// Numbers and checks messages; counts them for the AETH MSN.
    asm: Assembler,
    nak_sent: bool,
    unacked: u32,
    /// The last `bdp_packets` READs (enough for any duplicate the requester's window allows).
    reads: VecDeque<ReadCtx>,
}

impl GbnResponder {
    pub fn new(cfg: &ConnConfig) -> GbnResponder {
        GbnResponder {
            cfg: cfg.clone(),
            wire: Wire::new(cfg, false),
            epsn: cfg.start_psn & psn::MASK,
            asm: Assembler::new(cfg.mtu),
            nak_sent: false,
            unacked: 0,
            reads: VecDeque::new(),
        }
    }

    fn send_aeth(&mut self, p: u32, syndrome: Syndrome, out: &mut Vec<Action>) {
        let aeth = AethRepr { syndrome, msn: self.asm.msn() };
        out.push(self.wire.acknowledge(self.cfg.tos, p, aeth, None));
        self.unacked = 0;
    }

    fn ack(&mut self, out: &mut Vec<Action>) {
        self.send_aeth(psn::add(self.epsn, psn::MASK), Syndrome::Ack { credit: 31 }, out);
    }

    /// Sends the responses of `ctx` from its `from`-th packet on.
    fn send_read(&mut self, ctx: ReadCtx, from: u32, retx: Option<RetxReason>, out: &mut Vec<Action>) {
        let mtu = self.cfg.mtu;
        // The modelled memory: VA_BASE + (m << 32) + i holds byte i of message m.
        let rel = ctx.va.wrapping_sub(VA_BASE);
        let m = unwrap24(self.asm.numbered(), (rel >> 32) as u32);
        let base = rel & 0xffff_ffff;
        for j in from..ctx.n {
            let p = psn::add(ctx.first, j);
            let pos = Pos::of(j, ctx.n);
            let data = payload(m, base + j as u64 * mtu as u64, seg_len(ctx.len, mtu, j));
            let mut r = RoceRepr::new(read_response_opcode(pos), self.wire.peer_qpn(), p).with_payload(&data);
            if r.aeth.is_some() {
                r.aeth = Some(AethRepr { syndrome: Syndrome::Ack { credit: 31 }, msn: self.asm.msn() });
            }
            let frame = self.wire.frame(self.cfg.tos, r);
            out.push(Action::Transmit { frame, info: TxInfo { psn: p, msg: Some(m), retx } });
        }
        self.unacked = 0;
    }
}

impl Endpoint for GbnResponder {
    fn on_frame(&mut self, _now: Nanos, frame: &Frame<'_>, out: &mut Vec<Action>) {
        let Some(p) = frame.roce() else { return };
        let opcode = p.opcode().0;
        if opcode > 0x0C || opcode == 0x03 || opcode == 0x05 || p.bth().dest_qp() != self.cfg.responder.qpn {
            return;
        }
        let ps = p.bth().psn();
        let d = psn::diff(self.epsn, ps);
        if d == 0 {
            self.nak_sent = false;
            if opcode == 0x0C {
                let Some(reth) = p.reth() else { return };
                let ctx =
                    ReadCtx { first: ps, n: npkts(reth.dma_len(), self.cfg.mtu), va: reth.va(), len: reth.dma_len() };
                self.asm.take_read();
                self.epsn = psn::add(ps, ctx.n);
                self.send_read(ctx, 0, None, out);
                self.reads.push_back(ctx);
                while self.reads.len() > self.cfg.bdp_packets.max(1) as usize {
                    self.reads.pop_front();
                }
            } else {
                out.extend(self.asm.take_packet(p));
                self.epsn = psn::add(self.epsn, 1);
                self.unacked += 1;
                if p.bth().ack_req() || self.unacked >= self.cfg.ack_every.max(1) {
                    self.ack(out);
                }
            }
        } else if d < 0 {
            // A duplicate.
            if opcode == 0x0C {
                let ctx = self.reads.iter().rev().find(|c| {
                    let k = psn::diff(c.first, ps);
                    k >= 0 && (k as u32) < c.n
                });
                if let Some(&ctx) = ctx {
                    self.send_read(ctx, psn::diff(ctx.first, ps) as u32, Some(RetxReason::GoBack), out);
                }
            } else {
                self.unacked += 1;
                if p.bth().ack_req() || self.unacked >= self.cfg.ack_every.max(1) {
                    self.ack(out);
                }
            }
        } else if !self.nak_sent {
            // Out of sequence: one NAK per gap, then silence until the expected PSN arrives.
            self.nak_sent = true;
            self.send_aeth(self.epsn, Syndrome::Nak { code: 0 }, out);
        }
    }

    fn on_timer(&mut self, _now: Nanos, _token: u64, _out: &mut Vec<Action>) {}
}
